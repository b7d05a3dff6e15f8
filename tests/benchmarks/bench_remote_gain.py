"""Benchmark (seed 004 Fig 4.4/4.5 analogue): a memory-intensive guest
whose working set exceeds the memory its host can give it, with remote
memory, with a disk swap, and with enough local memory.

One TCG guest (384 MiB booked) runs memwork in fixed-work mode
(``memwork.work=1``): ``--passes`` sequential passes over ``--wss-mib``
MiB (288 by default), every page checked; the completion time is the
done line's ``t=`` (the guest's clock, from memwork's start). Cases:

* ``local``: the guest has 384 MiB: the working set fits;
* ``disk``: the guest has 256 MiB; swap on a raw file on the machine's
  disk, ``cache=none`` (O_DIRECT: the host's page cache does not hide
  the disk);
* ``remote-<profile>``: the guest has 256 MiB; swap on an export of host
  A's memmut-memstore (namespace ``a`` of the netns bed, 16 MiB RAM
  quota), every page beyond it placed on a slab of host B's memstore
  (namespace ``b``) over the link ``<profile>`` (10 GbE by default;
  without ``sch_netem`` the bed shapes the rate alone, no delay).

With ``--compare-binary PATH`` another memstore build (e.g. main's
previous one) runs beside this tree's, as the case
``remote-<profile>@before``: its own pair of memstores on the same bed
(tests/harness/remote_bed.py), its runs shuffled into the same repeats
as the others (as bench_remote.py does), so that old and new meet the
same machine state. The result then gives the compared build's remote /
disk too and this build's remote time over the compared one's, paired
per repeat (``versus``).

Runs go repeat by repeat, the cases shuffled inside each
(``discipline.blocked_order``); per case the mean completion time with a
95 % interval; the gain over disk swap is the paired ratio of the same
repeat's runs (``discipline.paired_ratio``). Goal (issue 18): remote over
10 GbE at least 17 % faster than disk swap, i.e. the whole interval of
remote / disk at most 1 / 1.17.

Boots guests: run as root under the TCG lock, one benchmark at a time:

    flock /tmp/memmut-tcg.lock python -m tests.benchmarks.bench_remote_gain
    # -> tests/benchmarks/results/remote_gain.json and .md

Measured: see results/remote_gain.md and doc/source/remote-memory.rst
("Gain benchmark"); remote over the 10 GbE profile is slower than disk
swap on this test bed.

What TCG cannot show: under KVM a guest's page fault costs microseconds
and the swap device's latency dominates; under TCG the emulated CPU
(memwork's work and the guest kernel's swap path) is tens of times
slower, so the device's share of the completion time, and with it the
gap between devices (a gain or a loss), is smaller than on KVM. The
result also reports (remote - local) / (disk - local), the ratio with
the shared CPU work taken out (``excess_ratio``).
"""

import argparse
import os
import signal
import subprocess
import sys
import time

from memmut.evaluation import workloads
from tests.benchmarks import discipline
from tests.benchmarks import proccpu
from tests.harness import domain
from tests.harness import guest as guestmod
from tests.harness import memstore as memstore_process
from tests.harness import remote_bed

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, 'results')
BOOKED_MIB = 384
SHORT_MIB = 256
SWAP_MIB = 512
KEY = '4d' * 32
GOAL_GAIN = 0.17
NOTE = (
    '**TCG and KVM.** A completion time is the emulated CPU work (the '
    '`local` time: memwork\'s passes and checks) plus what swapping adds '
    '(the guest kernel\'s swap path, also emulated, and the device\'s '
    'latency, which is not). TCG makes the CPU part tens of times slower '
    'than KVM while the devices run at native speed, so remote / disk is '
    'pulled towards 1 here: on KVM the device part dominates and the '
    'ratio moves towards (remote - local) / (disk - local), reported '
    'above as an indication (it still contains the emulated swap path). '
    'A gain measured under TCG is therefore a lower bound for KVM when '
    'remote is the faster device, and a loss would grow on KVM likewise. '
    '**The host\'s page cache.** memstore writes every page to the '
    'export\'s backing file through the page cache before the ack; the '
    'pages that leave the RAM tier (placed on the slab, or skipped when '
    'the remote write queue is full) are written back to disk and dropped '
    'from the page cache in thirds of the dirty window '
    '(`--remote-dirty-window`, 64 MiB by default), so at most that much '
    'host RAM holds their file copies, and the remote case writes every '
    'page to host A\'s disk as well (the backup), as Infiniswap does. '
    'Before memstore commit b7de674 a skipped page stayed in the page '
    'cache (the runs list how many pages that concerns). '
    '**The disk.** The test machine is itself a virtual machine: its '
    'disk (virtio) may be cached or SSD-backed by the outer hypervisor, '
    'so `disk` may be faster than a compute host\'s local disk. '
    '**The link.** The 10 GbE profile shapes the rate only (tbf: this '
    'kernel has no sch_netem), so no switch round trip is emulated. TCG '
    'guests on a 2-vCPU machine shared with other sessions.')


def swapped_bytes(out):
    """Bytes the guest swapped in and out (its vmstat), or 0."""
    return (out.get('pswpin', 0) + out.get('pswpout', 0)) * 4096


def start_perf(args, pids, n):
    """``perf record`` of ``pids`` into ``--perf-dir`` (None if not
    asked): where the CPU goes, for a profiling run, not a measured one."""
    if not args.perf_dir:
        return None
    os.makedirs(args.perf_dir, exist_ok=True)
    return subprocess.Popen(
        ['perf', 'record', '-q', '-F', '999', '-g', '-o',
         os.path.join(args.perf_dir, 'perf-%d.data' % n),
         '-p', ','.join(str(p) for p in pids)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_perf(proc):
    if proc is not None:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)


def split_case(case):
    """``'remote-10gbe@before'`` -> (``'remote-10gbe'``, ``'@before'``)."""
    tier, at, label = case.partition('@')
    return tier, at + label


def case_list(profile, compare=False, only=None):
    """The cases of a run: local, disk, this build's remote and, with
    ``compare``, the compared build's (``remote-<profile>@before``);
    ``only`` keeps the listed kinds (local, disk, remote)."""
    cases = ['local', 'disk', 'remote-' + profile]
    if compare:
        cases.append('remote-%s@before' % profile)
    if only:
        cases = [c for c in cases if c.split('-')[0] in only]
    return cases


def run_once(case, factory, b_ctl, bed, args, n, pids=None):
    steps = [workloads.Step(args.wss_mib, args.passes / 1000.0)]
    kw = dict(memory_mib=BOOKED_MIB, schedule=steps, alloc='s',
              poweroff=True, period_ms=1, cmdline='memwork.work=1',
              current_mib=BOOKED_MIB if case == 'local' else SHORT_MIB)
    slab_id = None
    if case.startswith('remote'):
        g = factory(swap='memstore', swap_mib=SWAP_MIB, swap_quota_mib=16,
                    reconnect_delay=30, start=False, **kw)
        slab_id = 'gain-%d' % n
        size = SWAP_MIB << 20
        slab = b_ctl.slab_create(slab_id, size, 'memmut-alloc-' + slab_id,
                                 KEY)
        a = g.swap_server.process.client()
        a.slab_attach(g.swap_server.name, slab_id, slab['uri'], size,
                      'memmut-alloc-' + slab_id, KEY, timeout_ms=500)
    else:
        path = guestmod.create_swap_file(
            os.path.join(args.disk_dir, 'gain-swap-%d.img' % n), SWAP_MIB)
        g = factory(swap=domain.SwapDisk(file=path, cache='none'),
                    start=False, **kw)
    pids = dict(pids or {})
    cpu0 = {k: proccpu.cpu_seconds(p) for k, p in pids.items()}
    threads0 = {k: proccpu.thread_seconds(p) for k, p in pids.items()}
    started = time.monotonic()
    perf = None
    try:
        g.start()
        pids['qemu'] = g.qemu_pid()
        if slab_id:
            perf = start_perf(args, [p for p in pids.values() if p], n)
        g.wait_ready()
        done = g.wait_done(timeout=args.timeout)
        wall = time.monotonic() - started
        stop_perf(perf)
        perf = None
        # the guest's process ends at shutoff: its CPU is read first
        cpu = {k: proccpu.cpu_seconds(p) for k, p in pids.items() if p}
        threads = {k: proccpu.delta(threads0.get(k, {}),
                                    proccpu.thread_seconds(p))
                   for k, p in pids.items() if p and k != 'qemu'}
        g.wait_shutoff()
        out = {'case': case, 'completion_s': float(done['t']),
               'wall_s': wall, 'errors': int(done['errors']),
               'passes': int(done['passes'])}
        # CPU seconds over the run (qemu: since its start, boot included)
        out['cpu_s'] = {k: round(v - (cpu0.get(k) or 0.0), 3)
                        for k, v in cpu.items() if v is not None}
        out['thread_cpu_s'] = threads
        stats = g.guest_stats()
        if stats:
            out['pswpin'] = int(stats[-1].get('pswpin', 0))
            out['pswpout'] = int(stats[-1].get('pswpout', 0))
        if slab_id:
            st0 = g.swap_server.stats()
            c = st0['counters']
            out['nbd_reads'] = c.get('reads')
            out['nbd_writes'] = c.get('writes')
            out['nbd_read_bytes'] = c.get('read_bytes')
            out['nbd_write_bytes'] = c.get('write_bytes')
            # where a request's time went (microseconds, memstore's
            # per-stage counters)
            out['stage_us'] = {k: v for k, v in c.items()
                               if k.endswith('_us')}
            st = g.swap_server.stats()
            out['remote_hit_pages'] = st['counters']['remote_hit_pages']
            out['remote_placed_pages'] = \
                st['counters']['remote_placed_pages']
            out['file_read_pages'] = st['counters']['file_read_pages']
            out['remote_skipped_pages'] = \
                st['counters'].get('remote_skipped_pages')
            out['slab_state'] = st['slabs'][0]['state'] if st['slabs'] \
                else 'gone'
        return out
    finally:
        stop_perf(perf)
        g.destroy()
        if slab_id:
            try:
                a.slab_detach(slab_id)
            except Exception:   # already detached by a failure
                pass
            b_ctl.slab_delete(slab_id)
        elif not case.startswith('remote'):
            os.unlink(path)


def figures(runs, cases, repeats):
    """Per-case summaries, the paired remote / disk ratio and its verdict
    from the runs' dicts (``case``, ``repeat``, ``completion_s``, and for
    remote runs ``slab_state``).

    A remote run whose slab was no longer attached at the end swapped
    (partly) to the backing file, not to remote memory: it is left out
    of the remote case and of the gain, and returned in ``excluded``.
    The gain and its verdict are this build's (the remote case without
    ``@``); see :func:`compared` for a compared build's.
    Returns ``(summary, gain, verdict, excluded)``; ``gain`` is None when
    no repeat has both a disk and a remote run."""
    remote = [c for c in cases if c.startswith('remote') and '@' not in c][0]
    excluded = [r for r in runs if r['case'].startswith('remote')
                and r.get('slab_state', 'attached') != 'attached']
    kept = [r for r in runs if r not in excluded]
    summary = {}
    for c in cases:
        values = [r['completion_s'] for r in kept if r['case'] == c]
        if values:
            summary[c] = discipline.summarize(values)
    gain = _paired(kept, remote, 'disk', repeats)
    if gain is None:
        return summary, None, 'undecided', excluded
    return (summary, gain, discipline.verdict(gain, high=1 / (1 + GOAL_GAIN)),
            excluded)


def _paired(runs, num, den, repeats):
    """paired_ratio of case ``num``'s completion times over ``den``'s,
    repeat by repeat, or None without a repeat having both."""
    by_rep = {(r['case'], r['repeat']): r['completion_s'] for r in runs}
    pairs = [(by_rep.get((num, i)), by_rep.get((den, i)))
             for i in range(repeats)]
    if not any(a is not None and b is not None for a, b in pairs):
        return None
    return discipline.paired_ratio([a for a, _ in pairs],
                                   [b for _, b in pairs])


def compared(runs, cases, repeats, excluded=()):
    """For each compared build's remote case (``remote-<p>@<label>``):
    its remote / disk ratio with the goal's verdict, and ``versus``, this
    build's remote time over the compared build's, paired per repeat
    (below 1: faster now). Runs in ``excluded`` (failed slabs) are left
    out. Returns {case: {'gain', 'verdict', 'versus'}} ({} without a
    compared build)."""
    kept = [r for r in runs if r not in excluded]
    out = {}
    for c in cases:
        tier, label = split_case(c)
        if not tier.startswith('remote') or not label:
            continue
        gain = _paired(kept, c, 'disk', repeats)
        out[c] = {
            'gain': gain,
            'verdict': ('undecided' if gain is None else
                        discipline.verdict(gain, high=1 / (1 + GOAL_GAIN))),
            'versus': _paired(kept, tier, c, repeats)}
    return out


def excess_ratio(runs, remote, repeats):
    """Per repeat, (remote - local) / (disk - local): the ratio of the
    time each swap device adds over the same work in enough memory.

    Under TCG the emulated CPU's share (the ``local`` time) is inflated
    and pulls remote / disk towards 1; subtracting it shows what the
    devices (and the guest's swap path) cost. It still includes the
    guest kernel's emulated swap path, so it is an indication of KVM's
    ratio, not a measurement of it. Repeats lacking a case, or whose
    disk run is not slower than local, are left out. Returns
    ``discipline.paired_ratio``'s dict, or None if no repeat is left."""
    by = {(r['case'], r['repeat']): r['completion_s'] for r in runs}
    nums, dens = [], []
    for i in range(repeats):
        loc, d, rem = (by.get(('local', i)), by.get(('disk', i)),
                       by.get((remote, i)))
        if None in (loc, d, rem) or d <= loc or rem <= loc:
            continue
        nums.append(rem - loc)
        dens.append(d - loc)
    return discipline.paired_ratio(nums, dens) if nums else None


def cpu_figures(runs, case=None):
    """Per remote run (of ``case`` only, if given), the client and lender
    memstores' CPU seconds per GiB the guest swapped (in + out), and
    memstore's mean service time of a READ and a WRITE (its stage
    counters); summaries over the runs that have them, {} when none
    has."""
    rows = {'client_cpu_s_per_gib': [], 'lender_cpu_s_per_gib': [],
            'read_service_us': [], 'write_service_us': [],
            'remote_read_us_per_read': [], 'writeback_wait_us_per_write': []}
    for r in runs:
        cpu, nbytes = r.get('cpu_s'), swapped_bytes(r)
        if not r['case'].startswith('remote') or not cpu or not nbytes:
            continue
        if case is not None and r['case'] != case:
            continue
        for who in ('client', 'lender'):
            if who in cpu:
                rows[who + '_cpu_s_per_gib'].append(
                    proccpu.per_gib(cpu[who], nbytes))
        st, reads, writes = (r.get('stage_us') or {}, r.get('nbd_reads'),
                             r.get('nbd_writes'))
        if st and reads and writes:
            rows['read_service_us'].append(st['read_us'] / reads)
            rows['write_service_us'].append(st['write_us'] / writes)
            rows['remote_read_us_per_read'].append(
                st['remote_read_us'] / reads)
            rows['writeback_wait_us_per_write'].append(
                st['remote_writeback_us'] / writes)
    return {k: discipline.summarize(v) for k, v in rows.items() if v}


def _ratio(g):
    return '%.3f [%s, %s]' % (g['mean'],
                              '%.3f' % g['low'] if g['low'] else '?',
                              '%.3f' % g['high'] if g['high'] else '?')


def markdown(result):
    lines = ['# Remote memory: gain for a memory-intensive guest '
             '(seed 004 Fig 4.4/4.5)', '',
             'Command: `%s`' % result['command'], '',
             'Guest: %d MiB booked, memwork fixed work: %d sequential '
             'passes over %d MiB (checked). `local`: %d MiB in the guest; '
             'the others %d MiB and %d MiB of swap. Link shaping: %s.'
             % (BOOKED_MIB, result['passes'], result['wss_mib'],
                BOOKED_MIB, SHORT_MIB, SWAP_MIB, result['shaping']), '']
    rows = []
    for case, s in result['summary'].items():
        rows.append([case, discipline.fmt(s, '.1f', 1, ' s'),
                     '%.1f' % s['min'], '%.1f' % s['max']])
    lines.append(discipline.markdown_table(
        ['case', 'completion time (mean ± 95 %)', 'min', 'max'], rows))
    g = result.get('gain')
    if g:
        lines += ['', 'remote / disk (paired, geometric mean): %.3f '
                  '[%s, %s]; gain over disk swap %.1f %% (goal ≥ %.0f %%: '
                  '%s).' % (g['mean'],
                            '%.3f' % g['low'] if g['low'] else '?',
                            '%.3f' % g['high'] if g['high'] else '?',
                            (1 / g['mean'] - 1) * 100, GOAL_GAIN * 100,
                            result['verdict'])]
    ex = result.get('excess_ratio')
    if ex:
        lines += ['', '(remote - local) / (disk - local), the time each '
                  'device adds over the same work in enough memory '
                  '(paired, geometric mean): %.3f [%s, %s] (n=%d); see '
                  'below for why it matters.' % (
                      ex['mean'], '%.3f' % ex['low'] if ex['low'] else '?',
                      '%.3f' % ex['high'] if ex['high'] else '?', ex['n'])]
    for case, c in (result.get('compared') or {}).items():
        tier, _ = split_case(case)
        lines += ['', 'Compared memstore (`%s`, %s):' % (
            case, result.get('binaries', {}).get(split_case(case)[1], '?')),
            '']
        if c['gain']:
            lines.append('* %s / disk (paired, geometric mean): %s (goal '
                         '≤ %.3f: %s)' % (
                             case, _ratio(c['gain']), 1 / (1 + GOAL_GAIN),
                             c['verdict']))
        if c['versus']:
            lines.append('* this memstore / the compared one, %s completion '
                         'time (paired per repeat; below 1: faster now): %s; '
                         'per repeat %s' % (
                             tier, _ratio(c['versus']),
                             ', '.join('%.2f' % v
                                       for v in c['versus']['values'])))
        ex = (result.get('excess_ratio_compared') or {}).get(case)
        if ex:
            lines.append('* (%s - local) / (disk - local): %s (n=%d)' % (
                case, _ratio(ex), ex['n']))
    if result.get('excluded_runs'):
        lines += ['', '%d remote run(s) left out: the slab had failed '
                  '(state %s), so they swapped to the backup file.' % (
                      len(result['excluded_runs']),
                      sorted({r.get('slab_state')
                              for r in result['excluded_runs']}))]
    done = len(result['runs'])
    if done < result.get('runs_planned', done):
        lines += ['', 'Partial: %d of %d planned runs done (time budget '
                  '%s s).' % (done, result['runs_planned'],
                              result.get('budget_s'))]
    remote_rows = [r for r in result['runs']
                   if r['case'].startswith('remote')]
    if remote_rows:
        lines += ['', 'Remote runs, pages placed on the slab / read from '
                  'it / missed by the RAM tier (read from the slab or the '
                  'backup file) / written to the backup file only (the '
                  'remote write queue was full): %s.' % '; '.join(
                      '%s rep %s: %s / %s / %s / %s' % (
                          r['case'], r.get('repeat'),
                          r.get('remote_placed_pages'),
                          r.get('remote_hit_pages'),
                          r.get('file_read_pages'),
                          r.get('remote_skipped_pages'))
                      for r in remote_rows)]
    cpu = {k: v for k, v in (result.get('cpu') or {}).items() if v}
    if cpu:
        # one column per remote case ({figure: summary} of one build
        # before --compare-binary, {case: {figure: summary}} since)
        per_case = (cpu if all(isinstance(v, dict) and 'mean' not in v
                               for v in cpu.values()) else {'remote': cpu})
        cols = list(per_case)
        lines += ['', 'Remote runs, CPU and service times (mean ± 95 % '
                  'over the runs; CPU from /proc/<pid>/stat, per GiB the '
                  'guest swapped in and out; service times from memstore\'s '
                  'stage counters, per NBD request):', '']
        labels = {
            'client_cpu_s_per_gib': ('client memstore CPU', ' s/GiB'),
            'lender_cpu_s_per_gib': ('lender memstore CPU', ' s/GiB'),
            'read_service_us': (
                'READ service time under the export\'s mutex', ' µs'),
            'remote_read_us_per_read': (
                'remote round trips per READ (outside the mutex since '
                'memstore 0d72f2d, inside before)', ' µs'),
            'write_service_us': ('WRITE service time', ' µs'),
            'writeback_wait_us_per_write': (
                'of which waiting for the dirty window', ' µs')}
        rows = []
        for k, (label, unit) in labels.items():
            cells = [per_case[c].get(k) for c in cols]
            if any(cells):
                rows.append([label] + [
                    discipline.fmt(v, '.3g', 1, unit) if v else '-'
                    for v in cells])
        lines.append(discipline.markdown_table(['figure'] + cols, rows))
    lines += discipline.closing_lines(result)
    return '\n'.join(lines) + '\n'


def command_line(args):
    """The command that reproduces a run (the lock included)."""
    cmd = ('flock /tmp/memmut-tcg.lock python -m '
           'tests.benchmarks.bench_remote_gain --repeats %d --passes %d '
           '--wss-mib %d --profile %s --seed %d' % (
               args.repeats, args.passes, args.wss_mib, args.profile,
               args.seed))
    if args.budget_s:
        cmd += ' --budget-s %g' % args.budget_s
    if args.memstore_binary:
        cmd += ' --memstore-binary %s' % args.memstore_binary
    if args.compare_binary:
        cmd += ' --compare-binary %s' % args.compare_binary
    return cmd


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--repeats', type=int, default=3)
    ap.add_argument('--passes', type=int, default=4)
    ap.add_argument('--wss-mib', type=int, default=288)
    ap.add_argument('--profile', default='10gbe')
    ap.add_argument('--disk-dir', default='/var/tmp')
    ap.add_argument('--timeout', type=int, default=400)
    ap.add_argument('--seed', type=int, default=44)
    ap.add_argument('--out', default=RESULTS)
    ap.add_argument('--cases', nargs='+', default=None,
                    choices=['local', 'disk', 'remote'],
                    help='run only these cases (profiling)')
    ap.add_argument('--perf-dir', default=None,
                    help='perf record the memstores during remote runs '
                         '(a profiling run: perf perturbs the timing)')
    ap.add_argument('--budget-s', type=float, default=None,
                    help='start no run after this many seconds (a lock '
                         'slot or a deadline): the repeats done are '
                         'reported, a partial last repeat unpaired')
    ap.add_argument('--memstore-binary', default=None, metavar='PATH',
                    help='memmut-memstore to measure (default: the '
                         'source tree\'s release build)')
    ap.add_argument('--compare-binary', default=None, metavar='PATH',
                    help='another memmut-memstore (e.g. an older build) '
                         'run beside it on its own pair of memstores, as '
                         'the case remote-<profile>@before, in the same '
                         'shuffled repeats')
    args = ap.parse_args(argv)
    if args.cases and 'remote' not in args.cases:
        ap.error('--cases must include remote')
    binaries = {'': memstore_process.find_binary(
        args.memstore_binary or memstore_process.BINARY)}
    if args.compare_binary:
        binaries['@before'] = memstore_process.find_binary(
            args.compare_binary)
    # a profiling run may keep only some cases (the gain needs disk and
    # remote)
    cases = case_list(args.profile, bool(args.compare_binary), args.cases)
    rec = discipline.Record(seed=args.seed, repeats=args.repeats)
    order = discipline.blocked_order(cases, args.repeats, args.seed)
    rec.orders['runs'] = [[c, r] for c, r in order]
    runs = []
    try:
        with remote_bed.two_hosts(args.profile, 'bench-gain-',
                                  binaries) as hosts:
            bed = hosts.bed     # its shaping is reported
            t0 = time.monotonic()
            budgeted = discipline.within_budget(order, args.budget_s)
            for i, case, rep in budgeted:
                pair = remote_bed.use_pair(hosts, split_case(case)[1])
                r = run_once(case, hosts.factory, pair.lender_ctl,
                             hosts.bed, args, i,
                             pids={'client': pair.client.pid,
                                   'lender': pair.lender.pid})
                r['repeat'] = rep
                runs.append(r)
                print('[%2d/%d %4.0fs] rep %d %-20s %6.1f s (wall %.1f s) '
                      'errors %d skipped %s' % (
                          i + 1, len(order), time.monotonic() - t0, rep,
                          case, r['completion_s'], r['wall_s'], r['errors'],
                          r.get('remote_skipped_pages', '-')), flush=True)
    except remote_bed.BedMissing as e:
        sys.exit('bench_remote_gain: %s' % e)
    rec.finish()
    if any(r['errors'] for r in runs):
        raise RuntimeError('memwork found wrong pages: %s' % runs)
    result = results(runs, cases, args)
    result.update({
        'command': command_line(args),
        'binaries': binaries,
        'shaping': '%s (%s)' % (bed.shaping, bed.shaping_note or 'as asked'),
        'runs_planned': len(order),
        'discipline': rec.as_dict(),
        'note': NOTE})
    discipline.write_results(args.out, 'remote_gain', result, markdown(result))


def results(runs, cases, args):
    """The figures of a run's result file from its runs: summaries, this
    build's gain and verdict, a compared build's (``compared``), the
    excess ratios and the CPU figures per remote case."""
    summary, gain, verdict, excluded = figures(runs, cases, args.repeats)
    kept = [r for r in runs if r not in excluded]
    remotes = [c for c in cases if c.startswith('remote')]
    return {
        'passes': args.passes, 'wss_mib': args.wss_mib,
        'runs': runs, 'summary': summary, 'gain': gain,
        'verdict': verdict, 'excluded_runs': excluded,
        'budget_s': args.budget_s,
        'excess_ratio': excess_ratio(kept, remotes[0], args.repeats),
        'compared': compared(runs, cases, args.repeats, excluded),
        'excess_ratio_compared': {
            c: excess_ratio(kept, c, args.repeats) for c in remotes[1:]},
        'cpu': {c: cpu_figures(runs, c) for c in remotes}}


if __name__ == '__main__':
    main()
