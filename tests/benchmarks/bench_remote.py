"""Benchmark (seed 004 Fig 4.3 analogue): page-in latency of 1 ... 1024
pages from memstore's local RAM tier, from its remote tier (a slab on
another memmut-memstore, over the multi-host test bed's link profiles),
and from a swap disk on a local file read with ``cache=none``.

What is measured: one NBD READ of N consecutive pages (4 KiB each) on the
export's unix socket, by one client (tests/harness/nbdclient.py,
Python) with one request in flight, from the request's first byte sent to
the reply's last byte received; random start pages in a 16 MiB region
written beforehand. This is the swap disk's side of a guest's swap-in;
the guest's own page-fault and block-layer costs are not in it (a guest
version needs the TCG lock and a guest image: not here).

Tiers:

* ``ram``: the client memstore with a RAM quota as large as the region;
* ``remote-<profile>``: the client memstore with a RAM quota of 0 (every
  page on the slab), the lender memstore in another namespace of
  tests/harness/netns.py's bed, the link shaped by ``<profile>``. Without
  ``sch_netem`` the bed shapes the rate alone with ``tbf`` and adds no
  delay: the profile's round trip is then *not* in the figure (the
  result file says which shaping ran);
* ``file``: ``qemu-nbd --cache=none --aio=native`` on a raw file on the
  machine's disk (O_DIRECT: every read goes to the device).

Every case starts its servers afresh, writes the region, waits until the
lender confirmed every remote write, then reads. Per (tier, N): median,
p90 and mean latency; each remote tier's median ratio to ``ram``. Goals of
issue 18: remote over the 10 GbE profile <= 3x RAM at 1024 pages, over
plain veth <= 2x.

Run by hand, as root, one benchmark at a time on the machine:

    cargo build --release --manifest-path memstore/Cargo.toml
    flock /tmp/memmut-tcg.lock python -m tests.benchmarks.bench_remote
    # -> tests/benchmarks/results/remote.json and remote.md
"""

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from tests.harness import memstore as memstore_process
from tests.harness import netns
from tests.harness import nbdclient

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, 'results')
PAGE = 4096
REGION_PAGES = 4096                 # 16 MiB
SIZES = [1, 4, 16, 64, 256, 1024]
PORT = 10809
KEY = '5a' * 32


def _out(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def page(p):
    return p.to_bytes(8, 'little') + bytes([p % 251]) * (PAGE - 8)


def fill(sock, drained=None):
    """Write the region; with ``drained``, call it every 256 pages (the
    remote case waits there until the slab's worker wrote them: a burst
    beyond its queue would leave pages in the file only)."""
    c = nbdclient.NBDClient(sock).connect()
    for start in range(0, REGION_PAGES, 64):
        data = b''.join(page(p) for p in range(start, start + 64))
        assert c.write(start * PAGE, data) == 0
        if drained and (start + 64) % 256 == 0:
            drained()
    c.close()


def _drained(ctl, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        st = ctl.stats('vm')
        if st['slabs'][0]['remote_writes'] >= \
                st['counters']['remote_placed_pages']:
            return
        if time.monotonic() > deadline:
            raise RuntimeError('remote writes not confirmed: %s' % st)
        time.sleep(0.01)


def measure(sock, reps, seed):
    """{N: [seconds]} for READs of N pages at random starts."""
    rng = random.Random(seed)
    c = nbdclient.NBDClient(sock).connect()
    out = {}
    for n in SIZES:
        times = []
        for _ in range(reps if n < 256 else max(5, reps // 4)):
            start = rng.randrange(0, REGION_PAGES - n + 1)
            t0 = time.perf_counter()
            err, data = c.read(start * PAGE, n * PAGE)
            times.append(time.perf_counter() - t0)
            assert err == 0
            for i in (0, n - 1):
                got = data[i * PAGE:i * PAGE + 8]
                assert got == (start + i).to_bytes(8, 'little'), (start, i)
        out[n] = times
    c.close()
    return out


def memstore_cmd(binary, d, *extra):
    return [binary, '--state-dir', d, '--host-quota', '256M'] + list(extra)


def case_ram(binary, tmp, reps, seed):
    d = os.path.join(tmp, 'ram')
    os.makedirs(d)
    p = subprocess.Popen(memstore_cmd(binary, d), stderr=subprocess.DEVNULL,
                         start_new_session=True)
    try:
        c = memstore_process.wait_control(os.path.join(d, 'control.sock'))
        c.create_export('vm', REGION_PAGES * PAGE,
                        quota=REGION_PAGES * PAGE)
        sock = os.path.join(d, 'vm.sock')
        fill(sock)
        stats = c.stats('vm')['export']
        assert stats['ram_bytes'] == REGION_PAGES * PAGE, stats
        return measure(sock, reps, seed), {}
    finally:
        p.kill()
        p.wait()


def case_remote(binary, tmp, reps, seed, profile):
    d = os.path.join(tmp, 'remote-' + profile)
    a_dir, b_dir = os.path.join(d, 'a'), os.path.join(d, 'b')
    os.makedirs(a_dir)
    os.makedirs(b_dir)
    bed = netns.NetnsBed(['a', 'b'], profile).start()
    try:
        listen = '%s:%d' % (bed.address('b'), PORT)
        bed.popen('b', memstore_cmd(binary, b_dir, '--remote-listen', listen),
                  stderr=subprocess.DEVNULL)
        bed.popen('a', memstore_cmd(binary, a_dir, '--remote-timeout', '1'),
                  stderr=subprocess.DEVNULL)
        b = memstore_process.wait_control(os.path.join(b_dir, 'control.sock'))
        a = memstore_process.wait_control(os.path.join(a_dir, 'control.sock'))
        size = REGION_PAGES * PAGE
        slab = b.slab_create('s1', size, 'memmut-alloc-s1', KEY)
        a.create_export('vm', size, quota=0)
        a.slab_attach('vm', 's1', slab['uri'], size, 'memmut-alloc-s1', KEY)
        sock = os.path.join(a_dir, 'vm.sock')
        fill(sock, drained=lambda: _drained(a))
        st = a.stats('vm')
        if st['counters']['remote_skipped_pages'] or \
                st['slabs'][0]['remote_writes'] < REGION_PAGES:
            raise RuntimeError('not every page is on the slab: %s' % st)
        before = a.stats('vm')['counters']
        lat = measure(sock, reps, seed)
        after = a.stats('vm')
        hits = (after['counters']['remote_hit_pages'] -
                before['remote_hit_pages'])
        assert after['slabs'][0]['state'] == 'attached', after['slabs']
        return lat, {'shaping': bed.shaping, 'shaping_note': bed.shaping_note,
                     'profile': profile,
                     'rtt_us': netns.PROFILES[profile].rtt_us,
                     'rate_mbit': netns.PROFILES[profile].rate_mbit,
                     'remote_hit_pages': hits}
    finally:
        bed.stop()


def case_file(tmp_disk, reps, seed):
    d = tempfile.mkdtemp(prefix='bench-remote-', dir=tmp_disk)
    img, sock = os.path.join(d, 'disk.img'), os.path.join(d, 'nbd.sock')
    pidfile = os.path.join(d, 'pid')
    with open(img, 'wb') as f:
        f.truncate(REGION_PAGES * PAGE)
    subprocess.run(['qemu-nbd', '--fork', '--persistent', '--format=raw',
                    '--cache=none', '--aio=native', '--pid-file', pidfile,
                    '--socket', sock, img], check=True, timeout=30)
    try:
        fill(sock)
        version = (_out(['qemu-nbd', '--version']) or '').split('\n')[0]
        return measure(sock, reps, seed), {'dir': tmp_disk,
                                           'version': version}
    finally:
        with open(pidfile) as f:
            os.kill(int(f.read()), 15)
        time.sleep(0.2)
        shutil.rmtree(d, ignore_errors=True)


def summarize(times):
    s = sorted(times)
    return {'n': len(s), 'median_us': statistics.median(s) * 1e6,
            'p90_us': s[int(0.9 * (len(s) - 1))] * 1e6,
            'mean_us': statistics.mean(s) * 1e6}


def markdown(r):
    lines = ['# Remote memory: page-in latency (seed 004 Fig 4.3 analogue)',
             '', 'Generated by `python -m tests.benchmarks.bench_remote` '
             'on %s (commit %s). One NBD READ of N pages, one request in '
             'flight, Python client; median (p90) in µs.' % (
                 r['date'], r['commit']), '']
    tiers = list(r['tiers'])
    lines.append('| pages | ' + ' | '.join(tiers) + ' |')
    lines.append('|---' * (len(tiers) + 1) + '|')
    for n in SIZES:
        row = ['%d' % n]
        for t in tiers:
            s = r['tiers'][t]['latency'][str(n)]
            row.append('%.0f (%.0f)' % (s['median_us'], s['p90_us']))
        lines.append('| ' + ' | '.join(row) + ' |')
    lines += ['', 'Median ratio to `ram`:', '']
    lines.append('| pages | ' + ' | '.join(t for t in tiers if t != 'ram')
                 + ' |')
    lines.append('|---' * len(tiers) + '|')
    for n in SIZES:
        row = ['%d' % n] + ['%.2f×' % r['ratios'][t][str(n)]
                            for t in tiers if t != 'ram']
        lines.append('| ' + ' | '.join(row) + ' |')
    lines += ['', '## Goals (issue 18, at 1024 pages)', '']
    for g in r['goals']:
        lines.append('* %s: %s (measured %s)' % (
            g['goal'], g['verdict'],
            'n/a' if g['ratio'] is None else '%.2f×' % g['ratio']))
    lines += ['', '## Conditions', '']
    for t, v in r['tiers'].items():
        if v['info']:
            lines.append('* `%s`: %s' % (t, json.dumps(v['info'])))
    lines.append('* load average before: %s; after: %s' % (
        r['loadavg_before'], r['loadavg_after']))
    lines.append('* CPU: %s, %d CPUs (shared with other sessions)' % (
        r['cpu'], r['cpus']))
    lines += ['', r['note'], '']
    return '\n'.join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--reps', type=int, default=200)
    ap.add_argument('--profiles', default='veth,10gbe,1gbe')
    ap.add_argument('--file-dir', default='/var/tmp',
                    help='a directory on a disk (not tmpfs: O_DIRECT)')
    ap.add_argument('--seed', type=int, default=18)
    ap.add_argument('--out', default=RESULTS)
    args = ap.parse_args(argv)
    problem = netns.prerequisites()
    if problem:
        sys.exit('bench_remote: ' + problem)
    netns.remove_stale()
    binary = memstore_process.find_binary()
    tmp = tempfile.mkdtemp(prefix='br', dir='/tmp')
    result = {'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
              'commit': _out(['git', '-C', HERE, 'rev-parse', '--short',
                              'HEAD']),
              'cpu': (_out(['sh', '-c', "grep -m1 'model name' "
                            "/proc/cpuinfo | cut -d: -f2"]) or
                      platform.processor()),
              'cpus': os.cpu_count(),
              'loadavg_before': open('/proc/loadavg').read().split()[:3],
              'reps': args.reps, 'region_pages': REGION_PAGES,
              'tiers': {}}
    try:
        lat, info = case_ram(binary, tmp, args.reps, args.seed)
        result['tiers']['ram'] = {'raw': lat, 'info': info}
        for prof in [p for p in args.profiles.split(',') if p]:
            lat, info = case_remote(binary, tmp, args.reps, args.seed, prof)
            result['tiers']['remote-' + prof] = {'raw': lat, 'info': info}
        lat, info = case_file(args.file_dir, args.reps, args.seed)
        result['tiers']['file'] = {'raw': lat, 'info': info}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result['loadavg_after'] = open('/proc/loadavg').read().split()[:3]
    for t, v in result['tiers'].items():
        v['latency'] = {str(n): summarize(x) for n, x in v['raw'].items()}
        v['raw'] = {str(n): [round(s * 1e6, 1) for s in x]
                    for n, x in v['raw'].items()}
    ram = result['tiers']['ram']['latency']
    result['ratios'] = {
        t: {n: v['latency'][n]['median_us'] / ram[n]['median_us']
            for n in v['latency']}
        for t, v in result['tiers'].items() if t != 'ram'}
    goals = []
    for tier, bound in (('remote-10gbe', 3.0), ('remote-veth', 2.0)):
        ratio = result['ratios'].get(tier, {}).get('1024')
        verdict = ('not run' if ratio is None
                   else 'met' if ratio <= bound else 'not met')
        goals.append({'goal': '%s <= %.0f× ram' % (tier, bound),
                      'ratio': ratio, 'verdict': verdict})
    result['goals'] = goals
    shaping = {v['info'].get('shaping') for v in result['tiers'].values()
               if v['info'].get('shaping')}
    result['note'] = (
        'Shaping: %s. ' % (', '.join(sorted(shaping)) or 'none') +
        ('This kernel has no sch_netem: the link profiles shape the rate '
         'with tbf and add no delay, so remote-10gbe and remote-1gbe '
         'carry the profiles\' bandwidth but not their round trip (50 and '
         '200 µs), and the 10 GbE goal is judged without it. '
         if 'tbf' in shaping else '') +
        'A single run on a 2-vCPU machine shared with other sessions, '
        'with a Python client: latencies include the client\'s own '
        'cost, the same for every tier; no intervals.')
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, 'remote.json'), 'w') as f:
        json.dump(result, f, indent=1, sort_keys=True)
    with open(os.path.join(args.out, 'remote.md'), 'w') as f:
        f.write(markdown(result))
    print(markdown(result))


if __name__ == '__main__':
    main()
