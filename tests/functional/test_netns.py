"""The multi-host test bed (tests/harness/netns.py): hosts reach each other
over TCP, nothing of the bed is visible outside it, and a link profile
really shapes the links."""

import json
import subprocess
import sys

import pytest

from tests.harness import netns

# One TCP server on a host: echo mode answers each 1-byte message (RTT
# probes); sink mode reads until EOF and prints the bytes and the seconds
# from the first byte to EOF.
SERVER = r'''
import json, socket, sys, time
addr, port, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((addr, port))
s.listen(1)
print('listening', flush=True)
c, _ = s.accept()
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
if mode == 'echo':
    while True:
        b = c.recv(1)
        if not b:
            break
        c.sendall(b)
else:
    n, first = 0, None
    while True:
        b = c.recv(1 << 20)
        if not b:
            break
        if first is None:
            first = time.monotonic()
        n += len(b)
    print(json.dumps({'bytes': n, 'seconds': time.monotonic() - first}),
          flush=True)
'''

# The client: 'echo' sends N 1-byte probes and prints the RTTs (s);
# 'send' sends N bytes and closes.
CLIENT = r'''
import json, socket, sys, time
addr, port, mode, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], \
    int(sys.argv[4])
for _ in range(100):
    try:
        c = socket.create_connection((addr, port), 2)
        break
    except OSError:
        time.sleep(0.05)
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
if mode == 'echo':
    rtts = []
    for _ in range(n):
        t = time.monotonic()
        c.sendall(b'x')
        assert c.recv(1) == b'x'
        rtts.append(time.monotonic() - t)
    print(json.dumps(rtts))
else:
    chunk = b'\0' * (1 << 20)
    left = n
    while left > 0:
        c.sendall(chunk[:left])
        left -= len(chunk)
c.close()
'''

PORT = 18018


def _serve(bed, host, mode):
    proc = bed.popen(host, [sys.executable, '-c', SERVER, bed.address(host),
                            str(PORT), mode], stdout=subprocess.PIPE,
                     text=True)
    assert proc.stdout.readline().strip() == 'listening'
    return proc


def _client(bed, host, server, mode, n):
    out = bed.run(host, [sys.executable, '-c', CLIENT, bed.address(server),
                         str(PORT), mode, str(n)], timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_hosts_talk_over_tcp_and_nothing_is_outside(netns_bed):
    outside_links = subprocess.run(['ip', '-o', 'link'], capture_output=True,
                                   text=True, check=True).stdout
    bed = netns_bed(['a', 'b'], profile='veth')
    server = _serve(bed, 'a', 'echo')
    rtts = json.loads(_client(bed, 'b', 'a', 'echo', 20))
    assert len(rtts) == 20
    server.wait(30)

    # The machine's own namespace: no new interface and none of the bed's
    # addresses (the machine may use 192.0.2.0/24 itself: CI containers do).
    assert subprocess.run(['ip', '-o', 'link'], capture_output=True,
                          text=True, check=True).stdout == outside_links
    addrs = subprocess.run(['ip', '-o', 'addr'], capture_output=True,
                           text=True, check=True).stdout
    for host in bed.hosts:
        assert ' %s/' % bed.address(host) not in addrs
    # Inside: only the bed's subnet is routable (no default route, so no
    # packet can leave), and only eth0 and lo exist.
    for host in bed.hosts:
        routes = bed.run(host, ['ip', 'route']).stdout.strip().splitlines()
        assert len(routes) == 1 and routes[0].startswith(netns.SUBNET), \
            routes
        links = bed.run(host, ['ip', '-o', 'link']).stdout
        names = sorted(line.split(':')[1].strip().split('@')[0]
                       for line in links.splitlines())
        assert names == ['eth0', 'lo']
        addrs = bed.run(host, ['ip', '-o', '-4', 'addr']).stdout
        assert bed.address(host) + '/24' in addrs
        assert bed.run(host, ['ip', '-o', '-6', 'addr']).stdout == ''


def test_listeners_are_only_inside(netns_bed):
    bed = netns_bed(['a', 'b'], profile='veth')
    server = _serve(bed, 'a', 'echo')
    try:
        inside = bed.run('a', ['ss', '-Hltn']).stdout
        assert '%s:%d' % (bed.address('a'), PORT) in inside
        outside = subprocess.run(['ss', '-Hltn'], capture_output=True,
                                 text=True, check=True).stdout
        assert ':%d ' % PORT not in outside
        assert bed.run('b', ['ss', '-Hltn']).stdout.strip() == ''
    finally:
        _client(bed, 'b', 'a', 'echo', 1)
        server.wait(30)


def test_teardown_leaves_nothing_and_stale_beds_are_removed(netns_bed):
    bed = netns_bed(['a'], profile='veth')
    sleeper = bed.popen('a', ['sleep', '600'])
    bed.stop()
    assert sleeper.poll() is not None
    assert not [ns for ns in netns.list_namespaces()
                if ns.startswith(bed.tag)]
    # A bed left by a test run that crashed (its pid is gone).
    dead = subprocess.Popen(['true'])
    dead.wait()
    stale = '%s%d-x' % (netns.PREFIX, dead.pid)
    subprocess.run(['ip', 'netns', 'add', stale], check=True)
    assert stale in netns.remove_stale()
    assert stale not in netns.list_namespaces()


def test_profile_shapes_throughput(netns_bed):
    profile = netns.PROFILES['100mbe']
    bed = netns_bed(['a', 'b'], profile=profile.name)
    size = 8 << 20
    server = _serve(bed, 'a', 'sink')
    _client(bed, 'b', 'a', 'send', size)
    got = json.loads(server.stdout.readline())
    server.wait(30)
    assert got['bytes'] == size
    # Cannot be flaky: a slower machine only takes longer. The shapers'
    # bursts pass at once; allow 25 % beyond the rate on top.
    burst = getattr(bed, 'burst_bytes', 0)
    floor = (size - 4 * burst) * 8 / (profile.rate_mbit * 1e6) / 1.25
    assert got['seconds'] >= floor, (got, floor, bed.shaping)
    # and the shaper did hold packets back
    assert bed.overlimits('b') > 0, bed.qdisc_stats('b')


def test_profile_delays_round_trips(netns_bed):
    profile = netns.PROFILES['100mbe']
    bed = netns_bed(['a', 'b'], profile=profile.name)
    if bed.shaping != 'netem':
        pytest.skip(bed.shaping_note)
    server = _serve(bed, 'a', 'echo')
    rtts = json.loads(_client(bed, 'b', 'a', 'echo', 20))
    server.wait(30)
    assert min(rtts) >= profile.rtt_us * 1e-6 * 0.9, rtts
