"""Benchmark (seed 004 Fig 4.3 analogue): page-in latency of 1 ... 1024
pages from memstore's local RAM tier, from its remote tier (a slab on
another memmut-memstore, over the multi-host test bed's link profiles),
and from a swap disk on a local file read with ``cache=none``.

What is measured: one NBD READ of N consecutive pages (4 KiB each) on the
export's unix socket, by one client (tests/harness/nbdclient.py,
``read_into``: the reply lands in a buffer allocated once, so the client
adds one kernel copy and no Python-side copies) with one request in
flight, from the request's first byte sent to the reply's last byte
received; random start pages in a 16 MiB region written beforehand. Every
tier is read by the same client with the same request shapes and start
pages. This is the swap disk's side of a guest's swap-in; the guest's own
page-fault and block-layer costs are not in it (a guest version needs the
TCG lock and a guest image: not here).

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

Discipline (tests/benchmarks/discipline.py): every tier is run ``--repeats``
times, each run a case with its servers started afresh (written, the
lender's writes confirmed, then read); the cases of one repeat run in an
order shuffled from ``--seed`` (``blocked_order``), so that the remote tiers
and ``ram`` of one repeat meet the same machine state. Per run and N the
median latency is kept; the table gives the mean of those medians over the
repeats with a 95 % interval, and each tier's ratio to ``ram`` is the
geometric mean of the per-repeat ratios with a 95 % interval
(``paired_ratio``). A goal is met only if the ratio's whole interval is
inside it. Goals of issue 18: remote over the 10 GbE profile <= 3x RAM at
1024 pages, over plain veth <= 2x.

Run by hand, as root, alone on the machine (no TCG guest of another
session at the same time: they take the CPUs the three processes of a
remote read need):

    cargo build --release --manifest-path memstore/Cargo.toml
    flock /tmp/memmut-tcg.lock nice -n -5 \\
        python -m tests.benchmarks.bench_remote --repeats 5
    # -> tests/benchmarks/results/remote.json and remote.md
"""

import argparse
import json
import os
import platform
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from tests.benchmarks import discipline
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
    buf = bytearray(max(SIZES) * PAGE)
    out = {}
    for n in SIZES:
        view = memoryview(buf)[:n * PAGE]
        times = []
        for _ in range(reps if n < 256 else max(5, reps // 4)):
            start = rng.randrange(0, REGION_PAGES - n + 1)
            t0 = time.perf_counter()
            err = c.read_into(start * PAGE, view)
            times.append(time.perf_counter() - t0)
            assert err == 0
            for i in (0, n - 1):
                got = bytes(view[i * PAGE:i * PAGE + 8])
                assert got == (start + i).to_bytes(8, 'little'), (start, i)
        out[n] = times
    c.close()
    return out


def memstore_cmd(binary, d, *extra):
    return [binary, '--state-dir', d, '--host-quota', '256M'] + list(extra)


def case_ram(binary, tmp, reps, seed):
    d = tempfile.mkdtemp(prefix='ram-', dir=tmp)
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
    d = tempfile.mkdtemp(prefix='remote-%s-' % profile, dir=tmp)
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


GOALS = (('remote-10gbe', 3.0), ('remote-veth', 2.0))


def split_case(case):
    """``'remote-veth@before'`` -> (``'remote-veth'``, ``'@before'``)."""
    tier, at, label = case.partition('@')
    return tier, at + label


def run_case(case, binaries, tmp, reps, seed, file_dir):
    """(latencies {N: [seconds]}, info) of one run of ``case``; a case
    ``tier@label`` runs memstore ``binaries[label]``."""
    case, label = split_case(case)
    binary = binaries[label]
    if case == 'ram':
        return case_ram(binary, tmp, reps, seed)
    if case == 'file':
        return case_file(file_dir, reps, seed)
    return case_remote(binary, tmp, reps, seed, case[len('remote-'):])


def median_us(times):
    return statistics.median(times) * 1e6


def aggregate(result):
    """Per tier and N: the mean of the per-run medians with a 95 %
    interval; per tier but ram and N: the paired ratio to ram; goals."""
    runs = result['runs']
    tiers = result['cases']
    result['latency'] = {}
    for t in tiers:
        result['latency'][t] = {}
        for n in SIZES:
            meds = [r['median_us'][str(n)] for r in runs if r['case'] == t]
            s = discipline.summarize(meds)
            s['p90_us_of_runs'] = [r['p90_us'][str(n)] for r in runs
                                   if r['case'] == t]
            result['latency'][t][str(n)] = s
    reps = sorted({r['repeat'] for r in runs})

    def med(case, rep, n):
        for r in runs:
            if r['case'] == case and r['repeat'] == rep:
                return r['median_us'][str(n)]
        return None
    result['ratios'] = {}
    for t in tiers:
        tier, label = split_case(t)
        if tier == 'ram':
            continue
        base = 'ram' + label        # the same memstore's ram tier
        result['ratios'][t] = {
            str(n): discipline.paired_ratio([med(t, k, n) for k in reps],
                                            [med(base, k, n) for k in reps])
            for n in SIZES}
    # a compared memstore (@label) against the main one, per tier
    result['versus'] = {}
    for t in tiers:
        tier, label = split_case(t)
        if label and tier in tiers:
            result['versus'][t] = {
                str(n): discipline.paired_ratio(
                    [med(tier, k, n) for k in reps],
                    [med(t, k, n) for k in reps])
                for n in SIZES}
    goals = []
    for tier, bound in GOALS:
        ratio = result['ratios'].get(tier, {}).get('1024')
        goals.append({
            'goal': '%s <= %.0f× ram at 1024 pages' % (tier, bound),
            'bound': bound,
            'ratio': ratio,
            'verdict': ('not run' if ratio is None
                        else discipline.verdict(ratio, high=bound))})
    result['goals'] = goals
    return result


def _ratio_cell(r):
    if r['low'] is None:
        return '%.2f× (n=%d)' % (r['mean'], r['n'])
    return '%.2f× [%.2f, %.2f]' % (r['mean'], r['low'], r['high'])


def markdown(r):
    d = r['discipline']
    lines = ['# Remote memory: page-in latency (seed 004 Fig 4.3 analogue)',
             '', 'Generated by `%s` on %s (memmut %s, memstore binary %s). '
             'One NBD READ of N pages, one request in flight, the same '
             'client (`read_into`, no Python-side copy) for every tier. '
             'Each tier ran %d times (fresh servers each time), the cases '
             'of a repeat in a shuffled order (seed %d).' % (
                 r['command'], r['date'],
                 (d['versions']['memmut_commit'] or '?')[:10],
                 r['binary'], d['repeats'], d['seed']), '',
             '## Latency', '',
             'Mean over the runs of each run\'s median, ± the 95 % '
             'interval half-width (Student t), in µs:', '']
    tiers = r['cases']
    rows = []
    for n in SIZES:
        rows.append(['%d' % n] + [
            discipline.fmt(r['latency'][t][str(n)], '.0f') for t in tiers])
    lines.append(discipline.markdown_table(['pages'] + tiers, rows))
    lines += ['', '## Ratio to `ram`', '',
              'Geometric mean of the per-repeat ratios of medians '
              '[95 % interval]:', '']
    others = [t for t in tiers if split_case(t)[0] != 'ram']
    rows = [['%d' % n] + [_ratio_cell(r['ratios'][t][str(n)])
                          for t in others] for n in SIZES]
    lines.append(discipline.markdown_table(['pages'] + others, rows))
    if r.get('versus'):
        vs = list(r['versus'])
        lines += ['', '## This memstore against the compared one', '',
                  'Latency of this memstore\'s tier / the compared '
                  'memstore\'s (`tier@label`, %s), per repeat, geometric '
                  'mean [95 %% interval]; below 1: faster now:' % ', '.join(
                      '%s = %s' % (k, v)
                      for k, v in r.get('binaries', {}).items() if k), '']
        rows = [['%d' % n] + [_ratio_cell(r['versus'][t][str(n)])
                              for t in vs] for n in SIZES]
        lines.append(discipline.markdown_table(
            ['pages'] + [split_case(t)[0] for t in vs], rows))
    lines += ['', '## Goals (issue 18, at 1024 pages)', '',
              'Met only if the whole interval of the ratio is inside the '
              'goal.', '']
    for g in r['goals']:
        lines.append('* %s: **%s** (measured %s)' % (
            g['goal'], g['verdict'],
            'n/a' if g['ratio'] is None else _ratio_cell(g['ratio'])))
    lines += ['', '## Conditions', '']
    for t, v in r['info'].items():
        if v:
            lines.append('* `%s`: %s' % (t, json.dumps(v)))
    lines.append('* load average before: %s; after: %s' % (
        d['load_before'], d['load_after']))
    lines.append('* CPU: %s, %d CPUs (shared with other sessions)' % (
        r['cpu'], d['cpus']))
    lines.append('* versions: %s' % json.dumps(
        {k: v for k, v in d['versions'].items() if v is not None}))
    lines += ['', r['note'], '']
    return '\n'.join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--reps', type=int, default=100,
                    help='reads per size and run (a quarter, at least 5, '
                         'for 256 pages and more)')
    ap.add_argument('--repeats', type=int, default=5,
                    help='runs of every tier (fresh servers each)')
    ap.add_argument('--profiles', default='veth,10gbe,1gbe')
    ap.add_argument('--no-file', action='store_true',
                    help='leave out the qemu-nbd cache=none tier')
    ap.add_argument('--file-dir', default='/var/tmp',
                    help='a directory on a disk (not tmpfs: O_DIRECT)')
    ap.add_argument('--memstore-binary', default=None,
                    help='memmut-memstore to measure (default: the '
                         'source tree\'s release build)')
    ap.add_argument('--compare-binary', default=None, metavar='PATH',
                    help='another memmut-memstore (e.g. an older build) '
                         'run beside it, its cases in the same shuffled '
                         'repeats, as ram@before, remote-veth@before ... '
                         '(the file tier does not depend on it)')
    ap.add_argument('--name', default='remote',
                    help='result files: <out>/<name>.json and .md')
    ap.add_argument('--seed', type=int, default=18)
    ap.add_argument('--out', default=RESULTS)
    args = ap.parse_args(argv)
    problem = netns.prerequisites()
    if problem:
        sys.exit('bench_remote: ' + problem)
    netns.remove_stale()
    binary = (memstore_process.find_binary(args.memstore_binary)
              if args.memstore_binary else memstore_process.find_binary())
    memstore_cases = ['ram'] + ['remote-' + p
                                for p in args.profiles.split(',') if p]
    cases = list(memstore_cases)
    binaries = {'': binary}
    if args.compare_binary:
        binaries['@before'] = memstore_process.find_binary(
            args.compare_binary)
        cases += [c + '@before' for c in memstore_cases]
    if not args.no_file:
        cases.append('file')
    rec = discipline.Record(seed=args.seed, repeats=args.repeats)
    order = discipline.blocked_order(cases, args.repeats, args.seed)
    rec.orders['cases'] = [[c, k] for c, k in order]
    tmp = tempfile.mkdtemp(prefix='br', dir='/tmp')
    result = {'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
              'command': 'python -m tests.benchmarks.bench_remote ' +
                         shlex.join(argv if argv is not None else
                                    sys.argv[1:]),
              'binary': binary,
              'binaries': binaries,
              'cpu': (_out(['sh', '-c', "grep -m1 'model name' "
                            "/proc/cpuinfo | cut -d: -f2"]) or
                      platform.processor()),
              'reps': args.reps, 'region_pages': REGION_PAGES,
              'cases': cases, 'runs': [], 'info': {}}
    try:
        for i, (case, k) in enumerate(order):
            lat, info = run_case(case, binaries, tmp, args.reps,
                                 args.seed * 1000 + k, args.file_dir)
            result['info'][case] = info
            result['runs'].append({
                'case': case, 'repeat': k, 'position': i,
                'loadavg': discipline.loadavg(),
                'median_us': {str(n): median_us(x) for n, x in lat.items()},
                'p90_us': {str(n): sorted(x)[int(0.9 * (len(x) - 1))] * 1e6
                           for n, x in lat.items()},
                'raw_us': {str(n): [round(v * 1e6, 1) for v in x]
                           for n, x in lat.items()}})
            print('%-14s repeat %d: 1024 pages %.0f µs' % (
                case, k, result['runs'][-1]['median_us']['1024']),
                flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rec.finish()
    result['discipline'] = rec.as_dict()
    aggregate(result)
    shaping = {v.get('shaping') for v in result['info'].values()
               if v.get('shaping')}
    result['note'] = (
        'Shaping: %s. ' % (', '.join(sorted(shaping)) or 'none') +
        ('This kernel has no sch_netem: the link profiles shape the rate '
         'with tbf and add no delay, so remote-10gbe and remote-1gbe '
         'carry the profiles\' bandwidth but not their round trip (50 and '
         '200 µs), and the 10 GbE goal is judged without it. '
         if 'tbf' in shaping else '') +
        'A 2-vCPU machine shared with other sessions: the client, the '
        'client memstore and the lender memstore of a remote read share '
        'two CPUs (on two real hosts the lender has its own), and the '
        'intervals include the other sessions\' load.')
    discipline.write_results(args.out, args.name, result, markdown(result))


if __name__ == '__main__':
    main()
