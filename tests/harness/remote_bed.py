"""Two hosts on one machine for the remote-memory benchmarks (issue 18).

Host ``a`` runs the guests (a private libvirtd and a guest factory) with
its memstore inside network namespace ``a``; host ``b`` runs a lender
memstore listening on its namespace's address. The link between them
has the named profile of :mod:`tests.harness.netns`. Everything is torn
down on exit, lender first, so that a benchmark that fails half-way
leaves no namespace, daemon or guest behind.

With several memstore binaries (``binaries``, e.g. this tree's and an
older build's), each runs its own pair of memstores (a client in ``a``,
a lender in ``b`` on its own port) for the whole bed, so that a
benchmark can alternate them run by run in the same slot: it points the
factory at a pair with :func:`use_pair` before creating a guest.
"""

import collections
import contextlib
import os
import shutil
import tempfile

from tests.harness import fixtures
from tests.harness import image
from tests.harness import libvirtd as libvirtd_mod
from tests.harness import memstore as memstore_process
from tests.harness import netns

HOST_QUOTA = 1024 << 20
LENDER_PORT = 10809
# a lender that stops answering is given up on after this long, so a
# failure shows as the backup tier taking over, not as a stalled guest
REMOTE_TIMEOUT_S = '0.5'

TwoHosts = collections.namedtuple(
    'TwoHosts', ['factory', 'lender', 'lender_ctl', 'bed', 'work', 'pairs'])
# one binary's memstores: the client (host a) and the lender (host b)
Pair = collections.namedtuple('Pair', ['client', 'lender', 'lender_ctl'])


class BedMissing(RuntimeError):
    """The machine cannot build the namespaces (not root, no ip, ...)."""


def _suffix(label):
    """A file-name suffix for a binary's label (``'@before'`` ->
    ``'-before'``, ``''`` -> ``''``)."""
    return ''.join(c if c.isalnum() else '-' for c in label)


@contextlib.contextmanager
def two_hosts(profile, prefix, binaries=None):
    """Yield :class:`TwoHosts` for one benchmark run; ``prefix`` names
    the work directory. ``binaries``: {label: memstore binary}, one pair
    of memstores each (default: this tree's binary under label ``''``,
    which must be present; its pair is the factory's at the start).
    Raises BedMissing before starting anything."""
    problem = netns.prerequisites()
    if problem:
        raise BedMissing(problem)
    netns.remove_stale()
    binaries = dict(binaries or {'': memstore_process.find_binary()})
    if '' not in binaries:
        raise ValueError('binaries needs the label \'\' (the default pair)')
    cache = os.environ.get('MEMMUT_TEST_CACHE', image.DEFAULT_CACHE)
    img = image.build_image(cache)
    daemon = libvirtd_mod.PrivateLibvirtd(
        cache_dir=os.path.join(cache, 'libvirt-cache'))
    work = tempfile.mkdtemp(prefix=prefix)
    bed = netns.NetnsBed(['a', 'b'], profile).start()
    factory = None
    pairs = {}
    try:
        daemon.start()
        factory = fixtures.GuestFactory(daemon, img, work)
        for i, label in enumerate(sorted(binaries)):    # '' first
            sfx = _suffix(label)
            client = memstore_process.MemstoreProcess(
                binaries[label], os.path.join(work, 'a-state' + sfx),
                socket_dir=(factory.sock_dir if not label
                            else daemon.scratch_dir()),
                host_quota=HOST_QUOTA,
                log_path=os.path.join(work, 'a-memstore%s.log' % sfx),
                extra_args=['--remote-timeout', REMOTE_TIMEOUT_S],
                wrapper=bed.command('a', []))
            pairs[label] = Pair(client, None, None)
            client.start()
            lender = memstore_process.MemstoreProcess(
                binaries[label], os.path.join(work, 'b-state' + sfx),
                host_quota=HOST_QUOTA,
                log_path=os.path.join(work, 'b-memstore%s.log' % sfx),
                extra_args=['--remote-listen', '%s:%d' % (
                    bed.address('b'), LENDER_PORT + i)],
                wrapper=bed.command('b', []))
            pairs[label] = Pair(client, lender, None)
            lender.start()
            pairs[label] = Pair(client, lender, lender.client())
        first = pairs['']
        factory.memstore = first.client
        yield TwoHosts(factory, first.lender, first.lender_ctl, bed, work,
                       pairs)
    finally:
        for p in pairs.values():
            if p.lender is not None:
                p.lender.kill()
        if factory is not None:
            factory.cleanup()
        for p in pairs.values():
            p.client.stop()     # the ones the factory was not pointing at
        daemon.stop()
        bed.stop()
        shutil.rmtree(work, ignore_errors=True)


def use_pair(hosts, label):
    """Point the factory at ``label``'s pair: its next memstore guest
    swaps to that client memstore. Returns the pair."""
    pair = hosts.pairs[label]
    hosts.factory.memstore = pair.client
    return pair
