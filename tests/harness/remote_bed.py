"""Two hosts on one machine for the remote-memory benchmarks (issue 18).

Host ``a`` runs the guests (a private libvirtd and a guest factory) with
its memstore inside network namespace ``a``; host ``b`` runs a lender
memstore listening on its namespace's address. The link between them
has the named profile of :mod:`tests.harness.netns`. Everything is torn
down on exit, lender first, so that a benchmark that fails half-way
leaves no namespace, daemon or guest behind.
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
    'TwoHosts', ['factory', 'lender', 'lender_ctl', 'bed', 'work'])


class BedMissing(RuntimeError):
    """The machine cannot build the namespaces (not root, no ip, ...)."""


@contextlib.contextmanager
def two_hosts(profile, prefix):
    """Yield :class:`TwoHosts` for one benchmark run; ``prefix`` names
    the work directory. Raises BedMissing before starting anything."""
    problem = netns.prerequisites()
    if problem:
        raise BedMissing(problem)
    netns.remove_stale()
    binary = memstore_process.find_binary()
    cache = os.environ.get('MEMMUT_TEST_CACHE', image.DEFAULT_CACHE)
    img = image.build_image(cache)
    daemon = libvirtd_mod.PrivateLibvirtd(
        cache_dir=os.path.join(cache, 'libvirt-cache'))
    work = tempfile.mkdtemp(prefix=prefix)
    bed = netns.NetnsBed(['a', 'b'], profile).start()
    factory = lender = None
    try:
        daemon.start()
        factory = fixtures.GuestFactory(daemon, img, work)
        factory.memstore = memstore_process.MemstoreProcess(
            binary, os.path.join(work, 'a-state'),
            socket_dir=factory.sock_dir, host_quota=HOST_QUOTA,
            log_path=os.path.join(work, 'a-memstore.log'),
            extra_args=['--remote-timeout', REMOTE_TIMEOUT_S],
            wrapper=bed.command('a', [])).start()
        lender = memstore_process.MemstoreProcess(
            binary, os.path.join(work, 'b-state'), host_quota=HOST_QUOTA,
            log_path=os.path.join(work, 'b-memstore.log'),
            extra_args=['--remote-listen', '%s:%d' % (bed.address('b'),
                                                      LENDER_PORT)],
            wrapper=bed.command('b', [])).start()
        yield TwoHosts(factory, lender, lender.client(), bed, work)
    finally:
        if lender is not None:
            lender.kill()
        if factory is not None:
            factory.cleanup()
        daemon.stop()
        bed.stop()
        shutil.rmtree(work, ignore_errors=True)
