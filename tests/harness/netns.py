"""Several hosts on one machine: one network namespace per host (issue 18
item 4).

Topology: a star. Each host namespace has one interface, ``eth0``, with an
address from the documentation range 192.0.2.0/24 (RFC 5737), joined by a
veth pair to a port of a bridge that lives in a namespace of its own (the
"switch"). No interface is created in the machine's own namespace and no
namespace has a default route, so nothing can leave them and nothing outside
can reach them::

    [mmtPID-a] eth0 192.0.2.101 --veth-- p1 \\
                                          br0  [mmtPID-sw]
    [mmtPID-b] eth0 192.0.2.102 --veth-- p2 /

Link profiles (:data:`PROFILES`, numbers in doc/source/testing.rst) shape
every host link in both directions: the host's ``eth0`` egress and the
switch port's egress towards the host. A profile's ``rtt_us`` is the
host-to-host round trip, so each of the four queues a round trip crosses
adds a quarter of it. Delay needs ``sch_netem``; where the kernel does not
have it (no module and not built in), the bed shapes the rate alone with
``tbf`` and says so (:attr:`NetnsBed.shaping`), and the tests that need the
delay skip with that reason.

Namespaces are named ``mmt<pid>-<host>`` after the process that made them:
:func:`remove_stale` deletes those of processes that are gone (a crashed or
killed test run), so a new run always starts clean. Needs root, ``ip`` and
``tc`` (iproute2).

    def test_x(netns_bed):
        bed = netns_bed(['a', 'b'], profile='1gbe')
        proc = bed.popen('a', [sys.executable, '-c', ...])
        bed.run('b', ['ping', '-c1', bed.address('a')])
"""

import dataclasses
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

__all__ = ['netns_bed']

SUBNET = '192.0.2.0/24'
# Hosts from .101 up: the low addresses are the ones a machine or a CI
# container may itself use in this range (the bed is isolated from them
# anyway, but a log line naming .101 is then unambiguous).
FIRST_HOST = 101
PREFIX = 'mmt'
_NAME = re.compile(r'^%s(\d+)-' % PREFIX)


@dataclasses.dataclass(frozen=True)
class LinkProfile:
    """One kind of link between two hosts."""
    name: str
    rtt_us: int            # host-to-host round trip added by the links
    rate_mbit: int         # per host link and direction; 0: not shaped
    what: str


# The links the seed's evaluation used (seed 004 §4.5.2: 1 GbE, 10 GbE,
# InfiniBand) and the test bed's own. RTTs are typical of one switch hop
# (store-and-forward, NIC and interrupt latency), not wire time.
PROFILES = {p.name: p for p in (
    LinkProfile('veth', 0, 0, 'plain veth through the bridge, no shaping: '
                              'what the machine can do'),
    LinkProfile('10gbe', 50, 10_000, '10 Gigabit Ethernet, one switch'),
    LinkProfile('1gbe', 200, 1_000, 'Gigabit Ethernet, one switch'),
    LinkProfile('100mbe', 500, 100, 'Fast Ethernet, one switch: slow '
                                    'enough that any machine can fill it '
                                    '(the shaping tests use it)'),
)}


def _ip(*args, check=True):
    return subprocess.run(['ip'] + list(args), capture_output=True,
                          text=True, check=check)


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def list_namespaces():
    out = _ip('netns', 'list', check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def _kill_namespace(ns):
    """Kill what runs in ``ns`` (processes our tests started there) and
    delete it; its veths and bridge go with it."""
    pids = _ip('netns', 'pids', ns, check=False).stdout.split()
    for pid in pids:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass
    for _ in range(50):
        if _ip('netns', 'del', ns, check=False).returncode == 0 or \
                ns not in list_namespaces():
            return
        time.sleep(0.1)
    raise RuntimeError('cannot delete network namespace %s' % ns)


def remove_stale():
    """Delete the namespaces of test runs whose process is gone."""
    removed = []
    for ns in list_namespaces():
        m = _NAME.match(ns)
        if m and not _pid_alive(int(m.group(1))):
            _kill_namespace(ns)
            removed.append(ns)
    return removed


def prerequisites():
    """Why this machine cannot run the bed, or None."""
    if os.geteuid() != 0:
        return 'network namespaces need root'
    for tool in ('ip', 'tc'):
        if shutil.which(tool) is None:
            return '%s not found (install iproute2)' % tool
    return None


class NetnsBed:
    """Hosts in namespaces joined by a bridge, links shaped by a profile."""

    def __init__(self, hosts, profile='veth'):
        if len(hosts) > 254 - FIRST_HOST:
            raise ValueError('at most %d hosts in %s'
                             % (254 - FIRST_HOST, SUBNET))
        self.hosts = list(hosts)
        self.profile = PROFILES[profile]
        self.tag = '%s%d' % (PREFIX, os.getpid())
        self.switch = '%s-sw' % self.tag
        self.shaping = None          # 'netem', 'tbf' or 'none'
        self.shaping_note = ''
        self._procs = []

    # -- names ----------------------------------------------------------------

    def ns(self, host):
        return '%s-%s' % (self.tag, host)

    def address(self, host):
        return '192.0.2.%d' % (FIRST_HOST + self.hosts.index(host))

    def _port(self, host):
        return 'p%d' % (1 + self.hosts.index(host))

    # -- life cycle -----------------------------------------------------------

    def start(self):
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self):
        for ns in [self.switch] + [self.ns(h) for h in self.hosts]:
            if ns in list_namespaces():       # this pid's own leftover
                _kill_namespace(ns)
            _ip('netns', 'add', ns)
            _ip('-n', ns, 'link', 'set', 'lo', 'up')
            # No IPv6: no link-local chatter or router solicitations; the
            # bed's addresses are the 192.0.2.0/24 ones and nothing else.
            self._sysctl(ns, 'net.ipv6.conf.all.disable_ipv6', '1')
            self._sysctl(ns, 'net.ipv6.conf.default.disable_ipv6', '1')
        _ip('-n', self.switch, 'link', 'add', 'br0', 'type', 'bridge')
        _ip('-n', self.switch, 'link', 'set', 'br0', 'up')
        for host in self.hosts:
            ns, port = self.ns(host), self._port(host)
            # Both ends are created inside namespaces: the machine's own
            # namespace never sees an interface of the bed.
            _ip('-n', ns, 'link', 'add', 'eth0', 'type', 'veth', 'peer',
                'name', port, 'netns', self.switch)
            _ip('-n', self.switch, 'link', 'set', port, 'master', 'br0',
                'up')
            _ip('-n', ns, 'addr', 'add', self.address(host) + '/24', 'dev',
                'eth0')
            _ip('-n', ns, 'link', 'set', 'eth0', 'up')
        self._shape()

    def _sysctl(self, ns, key, value):
        subprocess.run(['ip', 'netns', 'exec', ns, 'sysctl', '-qw',
                        '%s=%s' % (key, value)], capture_output=True)

    def _tc(self, ns, dev, *qdisc, check=True):
        return subprocess.run(['tc', '-n', ns, 'qdisc', 'replace', 'dev',
                               dev, 'root'] + list(qdisc),
                              capture_output=True, text=True, check=check)

    def _shape(self):
        p = self.profile
        if not p.rtt_us and not p.rate_mbit:
            self.shaping = 'none'
            return
        queues = [(self.ns(h), 'eth0') for h in self.hosts] + \
                 [(self.switch, self._port(h)) for h in self.hosts]
        # A round trip crosses four egress queues (two per host link).
        delay_us = p.rtt_us / 4.0
        netem = ['netem', 'delay', '%.1fus' % delay_us, 'limit', '10000']
        if p.rate_mbit:
            netem += ['rate', '%dmbit' % p.rate_mbit]
        first = self._tc(*queues[0], *netem, check=False)
        if first.returncode == 0:
            self.shaping = 'netem'
            for q in queues[1:]:
                self._tc(*q, *netem)
            return
        self.shaping_note = (
            'tc netem unavailable (%s): the kernel has no sch_netem (module '
            'or built in), so delay is not emulated'
            % first.stderr.strip().splitlines()[-1])
        if not p.rate_mbit:
            self.shaping = 'none'
            return
        # tbf: the rate alone. burst must hold one timer tick of traffic
        # (1 ms at the rate) and at least a GSO super-packet.
        rate_bytes = p.rate_mbit * 125_000
        burst = max(64 * 1024, rate_bytes // 1000)
        tbf = ['tbf', 'rate', '%dmbit' % p.rate_mbit, 'burst', str(burst),
               'latency', '50ms']
        for q in queues:
            self._tc(*q, *tbf)
        self.shaping = 'tbf'
        self.burst_bytes = burst

    def qdisc_stats(self, host):
        """``tc -s`` of the host's eth0 as text (sent, overlimits...)."""
        return subprocess.run(['tc', '-n', self.ns(host), '-s', 'qdisc',
                               'show', 'dev', 'eth0'], capture_output=True,
                              text=True, check=True).stdout

    def overlimits(self, host):
        m = re.search(r'overlimits (\d+)', self.qdisc_stats(host))
        return int(m.group(1)) if m else 0

    def stop(self):
        for proc in self._procs:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(10)
        self._procs.clear()
        for ns in [self.ns(h) for h in self.hosts] + [self.switch]:
            if ns in list_namespaces():
                _kill_namespace(ns)

    # -- running things on a host ---------------------------------------------

    def command(self, host, cmd):
        return ['ip', 'netns', 'exec', self.ns(host)] + list(cmd)

    def run(self, host, cmd, **kw):
        kw.setdefault('capture_output', True)
        kw.setdefault('text', True)
        kw.setdefault('timeout', 120)
        return subprocess.run(self.command(host, cmd), **kw)

    def popen(self, host, cmd, **kw):
        """Start ``cmd`` on ``host``; killed (with its group) at stop."""
        kw.setdefault('start_new_session', True)
        proc = subprocess.Popen(self.command(host, cmd), **kw)
        self._procs.append(proc)
        return proc


@pytest.fixture
def netns_bed():
    """Factory: ``netns_bed(hosts, profile)`` -> a started NetnsBed, torn
    down after the test (its namespaces and everything running in them),
    after stale beds of dead test runs are removed."""
    problem = prerequisites()
    if problem:
        if os.environ.get('CI') == 'true':
            pytest.fail('netns test bed prerequisite missing (CI=true): '
                        + problem, pytrace=False)
        pytest.skip(problem)
    remove_stale()
    beds = []

    def make(hosts, profile='veth'):
        bed = NetnsBed(hosts, profile).start()
        beds.append(bed)
        return bed
    yield make
    for bed in beds:
        bed.stop()
