"""Badis on real guests: accuracy, vm_over and hyper_over (seed 004 §2.6.3).

Not run in CI. By hand, as root, on a machine with the functional-test
prerequisites (about 25 minutes with the defaults; 2 guests at a time):

    /tmp/venv/bin/python -m tests.benchmarks.bench_badis
    /tmp/venv/bin/python -m tests.benchmarks.bench_badis --shapes W3 \\
        --allocs s --estimators none,badis --step 12

Every run boots a 256 MiB TCG guest (memfd-backed RAM, a 256 MiB swap
file) that runs memwork through one of the W1-W5 shapes (peak 160 MiB),
implemented static (``s``: mapped once at the peak) or dynamic (``d``:
mapped and unmapped step by step). An agent loop in this process polls it
every second through memmut's libvirt driver and runs one estimator with
balloon actuation:

``none``
    no estimation, balloon left at the booked size: the vm_over reference.
``badis``
    Badis (smaps sampling + balloon-statistics swap monitor, since the
    swap disk here is a file, not a memstore export) driving the single-VM
    on-demand loop. The passive baselines ``balloon_stats`` and
    ``balloon_stats_nocache`` are computed on the same run, in shadow (they
    do not move the balloon).
``zballoond``
    Zballoond's shrink-until-swap loop driven from the host, starting from
    the guest's Committed_AS (read from the test guest's console:
    intrusive, evaluation only).
``selfballoon``
    self-ballooning toward Committed_AS.

The true working set is the schedule's WSS plus the guest's base: the
memory it cannot give up when idle, booked - MemAvailable at boot (kernel
reservations, page tables, init). Each poll compares every estimate with it
and classifies the poll as S_more (truth <= balloon: the VM has memory to
spare) or S_less (truth > balloon: it lacks memory). Reported per
estimator: mean absolute error in % of booked memory, overall and per
phase; vm_over = memwork passes of the ``none`` run / passes of this run
(normalized run time of a fixed amount of work); hyper_over = the agent
thread's CPU time per VM-minute, and as % of a core at the benchmark's
2 s rounds and extrapolated to the production 60 s rounds.

Results: tests/benchmarks/results/badis.json (+ badis.jsonl, one line per
run, written as runs finish) and badis.png (estimates vs truth, like seed
Fig. 2.9).
"""

import argparse
import concurrent.futures
import json
import os
import re
import signal
import statistics
import sys
import threading
import time

from memmut.agent import estimation
from memmut import workloads
from memmut.virt import driver as virt_driver
from memmut.virt import libvirt_driver
from tests import common
from tests.functional.harness import domain
from tests.functional.harness import guest as guestmod

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, 'results')
MIB = 1024
BOOKED_MIB = 256
PEAK_MIB = 160
SHADOWS = ('balloon_stats', 'balloon_stats_nocache')
ACTIVE = ('none', 'badis', 'zballoond', 'selfballoon')

# Scaled-down Badis: 2 s rounds instead of 60 s, max-average over 3
# estimates and a 4 s slice instead of 5 and 1 h (the schedules' steps last
# seconds, not hours).
AGENT_OPTIONS = {
    'badis': {'round_interval': 2.0, 'average_window': 3, 'time_slice': 4.0,
              'headroom_kb': 16 * MIB, 'headroom_fraction': 0.05,
              'floor_kb': 64 * MIB, 'min_change_kb': 4 * MIB,
              'max_step_fraction': 0.125, 'swap_in_threshold_kb': 1024},
    'agent': {'sampling_backend': 'smaps', 'balloon_actuation': True},
}

_STEP = re.compile(r'^MEMWORK (?:end )?step=\d+ wss_mib=(\d+)', re.M)
_DONE = re.compile(r'^MEMWORK done .*passes=(\d+)', re.M)


def agent_conf(libvirt_options, **groups):
    opts = {g: dict(v) for g, v in AGENT_OPTIONS.items()}
    for g, v in groups.items():
        opts.setdefault(g, {}).update(v)
    opts['libvirt'] = dict(libvirt_options, domain_type='qemu')
    return common.private_conf(**opts)


def schedule(shape, step_s, peak_mib=PEAK_MIB):
    return workloads.shape_schedule(shape, peak_mib, step_s)


def base_kb(g, booked_kb):
    """Memory the guest cannot give up when idle: booked - MemAvailable."""
    first = g.wait_stat(lambda s: s.get('memavail_kb', 0) > 0, timeout=30)
    return booked_kb - first['memavail_kb']


def current_wss_mib(log_text):
    found = _STEP.findall(log_text)
    return int(found[-1]) if found else 0


class Run:
    """The agent loop for one guest and one estimator; ``rows`` has one
    dict per poll."""

    def __init__(self, g, conf, estimator, booked_kb, base, poll=1.0):
        self.g = g
        self.estimator = estimator
        self.booked_kb = booked_kb
        self.base = base
        self.poll = poll
        self.driver = libvirt_driver.LibvirtDriver(conf)
        self.driver.connect()
        self.driver.set_stats_period(g.uuid, 1)
        committed = estimation.ConsoleCommittedAS(
            lambda vm: g.spec.serial_log)
        self.pipeline = estimation.EstimationPipeline(
            conf, self.driver, committed=committed, estimator=estimator)
        self.shadows = {}
        if estimator == 'badis':
            self.shadows = {s: estimation.EstimationPipeline(
                conf, self.driver, estimator=s) for s in SHADOWS}
        self.actuator = estimation.Actuator(conf, self.driver)
        self.rows = []
        self.moves = []
        self.wall = 0.0

    def step(self):
        try:
            vms = [v for v in self.driver.list_vms()
                   if v.uuid == self.g.uuid]
        except virt_driver.HypervisorUnavailable:
            return self.g.is_active()      # a hiccup: poll again
        if not vms:
            return False
        vm = vms[0]
        now = time.time()
        est = self.pipeline.estimate(vms, now)
        for uuid, target, reason in self.actuator.step(vms, est):
            self.moves.append((now, target, reason))
        row = {'t': now, 'balloon_kb': vm.balloon_kb,
               'truth_kb': current_wss_mib(self.g.log()) * MIB + self.base,
               'swap_in': vm.memory_stats.get('swap_in')}
        e = est.get(self.g.uuid)
        if e is not None and self.estimator != 'none':
            row[self.estimator] = e.wss_kb
            row['demand_kb'] = e.demand_kb
            row['mode'] = e.mode
            row['source'] = e.source
        for name, p in self.shadows.items():
            s = p.estimate(vms, now).get(self.g.uuid)
            if s is not None:
                row[name] = s.wss_kb
        self.rows.append(row)
        return True

    def run(self, timeout):
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            t0 = time.monotonic()
            if _DONE.search(self.g.log()) or not self.step():
                break
            time.sleep(max(0.0, self.poll - (time.monotonic() - t0)))
        self.wall = time.monotonic() - start
        self.driver.close()
        m = _DONE.search(self.g.log())
        return int(m.group(1)) if m else None

    def cpu_seconds(self):
        return self.pipeline.cpu_seconds + sum(
            p.cpu_seconds for p in self.shadows.values())


def errors(rows, key, booked_kb, skip_s=0.0):
    """Mean absolute error (% of booked) overall, in S_more and S_less."""
    out = {'all': [], 'S_more': [], 'S_less': []}
    if not rows:
        return {k: None for k in out}
    t0 = rows[0]['t']
    for r in rows:
        if key not in r or r['t'] - t0 < skip_s:
            continue
        err = abs(r[key] - r['truth_kb']) * 100.0 / booked_kb
        out['all'].append(err)
        out['S_more' if r['truth_kb'] <= r['balloon_kb']
            else 'S_less'].append(err)
    return {k: (round(statistics.mean(v), 2) if v else None)
            for k, v in out.items()} | {
        'polls_S_more': len(out['S_more']),
        'polls_S_less': len(out['S_less'])}


def one_run(factory, libvirtd, shape, alloc, estimator, step_s):
    sched = schedule(shape, step_s)
    booked = BOOKED_MIB * MIB
    # a swap file of its own (the factory numbers them by guest count,
    # which races when runs start in parallel)
    swap_file = guestmod.create_swap_file(os.path.join(
        factory.workdir, 'swap-%s-%s-%s.img' % (shape, alloc, estimator)),
        256)
    g = factory(memory_mib=BOOKED_MIB, schedule=sched, alloc=alloc,
                loops=1, period_ms=200,
                swap=domain.SwapDisk(file=swap_file), memfd=True,
                tb_cache_mib=64, stat_period=1)
    try:
        base = base_kb(g, booked)
        conf = agent_conf(libvirtd.memmut_options())
        run = Run(g, conf, estimator, booked, base)
        failure = None
        try:
            passes = run.run(workloads.duration(sched) + 120)
        except Exception as e:
            passes, failure = None, str(e)
            run.driver.close()
        res = {'shape': shape, 'alloc': alloc, 'estimator': estimator,
               'step_s': step_s, 'booked_kb': booked, 'base_kb': base,
               'passes': passes, 'wall_s': round(run.wall, 1),
               'cpu_s': round(run.cpu_seconds(), 4),
               'moves': len(run.moves), 'rows': run.rows}
        if passes is None:
            # The guest died (its OOM killer, a kernel panic) or never
            # finished: a result of the estimator, not of the benchmark.
            died = re.findall(r'(Out of memory: Killed process \d+ \(\S+\)|'
                              r'Kernel panic - [^\n]*)', g.log())
            res['failed'] = '%s; guest console: %s' % (
                failure or 'workload did not finish',
                '; '.join(died[:3]) or 'no OOM/panic line')
            return res
        if estimator != 'none':
            res['errors'] = {k: errors(run.rows, k, booked)
                             for k in (estimator,) + tuple(run.shadows)}
        return res
    finally:
        g.destroy()


def summarize(runs):
    by = {}
    ref = {(r['shape'], r['alloc']): r['passes'] for r in runs
           if r['estimator'] == 'none' and r['passes']}
    failed = {}
    for r in runs:
        if r.get('failed'):
            failed.setdefault(r['estimator'], []).append(
                '%s,%s: %s' % (r['shape'], r['alloc'], r['failed']))
        for name, e in (r.get('errors') or {}).items():
            d = by.setdefault(name, {'all': [], 'S_more': [], 'S_less': [],
                                     'vm_over': [], 'cpu_pct_core': []})
            for k in ('all', 'S_more', 'S_less'):
                if e[k] is not None:
                    d[k].append(e[k])
            if name == r['estimator']:
                base = ref.get((r['shape'], r['alloc']))
                if base and r['passes']:
                    d['vm_over'].append(round(base / r['passes'], 3))
                if r['wall_s']:
                    d['cpu_pct_core'].append(
                        100.0 * r['cpu_s'] / r['wall_s'])
    out = {}
    for name in failed:
        by.setdefault(name, {'all': [], 'S_more': [], 'S_less': [],
                             'vm_over': [], 'cpu_pct_core': []})
    for name, d in by.items():
        cpu = statistics.mean(d['cpu_pct_core']) if d['cpu_pct_core'] else \
            None
        out[name] = {
            'mean_error_pct_booked': _mean(d['all']),
            'S_more_error_pct_booked': _mean(d['S_more']),
            'S_less_error_pct_booked': _mean(d['S_less']),
            'vm_over_median': (statistics.median(d['vm_over'])
                               if d['vm_over'] else None),
            'vm_over': d['vm_over'],
            'cpu_pct_core_per_vm_at_2s_rounds': (round(cpu, 4)
                                                 if cpu is not None else
                                                 None),
            'cpu_s_per_vm_minute': (round(cpu * 60 / 100, 4)
                                    if cpu is not None else None),
            'cpu_pct_core_per_10_vms_at_60s_rounds': (
                round(cpu * 10 * 2.0 / 60.0, 4) if cpu is not None
                else None),
            'failed_runs': failed.get(name, []),
        }
    return out


def _mean(values):
    return round(statistics.mean(values), 2) if values else None


def plot(runs, path):
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt
    shown = [r for r in runs if r['estimator'] in ('badis', 'zballoond')]
    shown.sort(key=lambda r: (r['shape'], r['alloc'], r['estimator']))
    cases = sorted({(r['shape'], r['alloc']) for r in shown})
    if not cases:
        return
    cols = 2
    rows = (len(cases) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(12, 2.6 * rows),
                             squeeze=False)
    for ax, case in zip(axes.flat, cases):
        for r in shown:
            if (r['shape'], r['alloc']) != case or not r['rows']:
                continue
            t0 = r['rows'][0]['t']
            ts = [(x['t'] - t0) for x in r['rows']]
            if r['estimator'] == 'badis':
                ax.plot(ts, [x['truth_kb'] / MIB for x in r['rows']], 'k--',
                        label='true WSS')
                ax.plot(ts, [x['balloon_kb'] / MIB for x in r['rows']],
                        color='0.7', label='Badis allocation')
            ax.plot(ts, [x.get(r['estimator'], float('nan')) / MIB
                         for x in r['rows']],
                    label=r['estimator'] + ' estimate')
        ax.set_title('%s,%s' % case)
        ax.set_ylabel('MiB')
        ax.set_ylim(0, BOOKED_MIB + 16)
    for ax in axes.flat[len(cases):]:
        ax.axis('off')
    axes.flat[0].legend(fontsize=7, loc='lower right')
    for ax in axes[-1]:
        ax.set_xlabel('seconds')
    fig.suptitle('Badis and Zballoond on 256 MiB TCG guests (cf. seed 004 '
                 'Fig. 2.9)')
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def _interrupt(signum, frame):
    raise KeyboardInterrupt('SIGTERM')


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--shapes', default='W1,W2,W3,W4,W5')
    p.add_argument('--allocs', default='s,d')
    p.add_argument('--estimators', default=','.join(ACTIVE))
    p.add_argument('--step', type=float, default=12.0,
                   help='seconds per schedule step')
    p.add_argument('--parallel', type=int, default=2)
    p.add_argument('--out', default=RESULTS)
    p.add_argument('--cases', default='',
                   help='explicit runs SHAPE:ALLOC:ESTIMATOR,... instead '
                        'of the product of the three lists')
    p.add_argument('--report-only', action='store_true',
                   help='recompute badis.json and badis.png from the '
                        'badis.jsonl of an earlier run')
    args = p.parse_args(argv)
    if args.report_only:
        with open(os.path.join(args.out, 'badis.jsonl')) as f:
            runs = [json.loads(line) for line in f if line.strip()]
        old = {}
        try:
            with open(os.path.join(args.out, 'badis.json')) as f:
                old = json.load(f)
        except (OSError, ValueError):
            pass
        write_results(runs, args, argv, old.get('duration_s', 0))
        return
    # SIGTERM (a kill, a job timeout) must still run the cleanup below.
    signal.signal(signal.SIGTERM, _interrupt)

    from tests.functional.harness import fixtures
    from tests.functional.harness import image
    from tests.functional.harness import libvirtd as libvirtd_mod
    import tempfile

    os.makedirs(args.out, exist_ok=True)
    cache = os.environ.get('MEMMUT_TEST_CACHE', image.DEFAULT_CACHE)
    img = image.build_image(cache)
    daemon = libvirtd_mod.PrivateLibvirtd(
        cache_dir=os.path.join(cache, 'libvirt-cache'))
    daemon.start()
    work = tempfile.mkdtemp(prefix='bench-badis-')
    factory = fixtures.GuestFactory(daemon, img, work)
    lock = threading.Lock()
    jsonl = os.path.join(args.out, 'badis.jsonl')
    cases = [(s, a, e) for s in args.shapes.split(',')
             for a in args.allocs.split(',')
             for e in args.estimators.split(',')]
    if args.cases:
        cases = [tuple(c.split(':')) for c in args.cases.split(',')]
    runs = []
    started = time.time()
    try:
        with open(jsonl, 'w') as out, concurrent.futures.ThreadPoolExecutor(
                args.parallel) as pool:
            futs = {pool.submit(one_run, factory, daemon, s, a, e,
                                args.step): (s, a, e) for s, a, e in cases}
            for fut in concurrent.futures.as_completed(futs):
                case = futs[fut]
                try:
                    r = fut.result()
                except Exception as e:
                    print('run %s failed: %s' % (case, e), flush=True)
                    continue
                with lock:
                    runs.append(r)
                    out.write(json.dumps(r) + '\n')
                    out.flush()
                print('%s,%s %-12s passes=%s errors=%s' % (
                    r['shape'], r['alloc'], r['estimator'], r['passes'],
                    {k: v['all'] for k, v in (r.get('errors') or {})
                     .items()}), flush=True)
    finally:
        factory.cleanup()
        daemon.stop()
    write_results(runs, args, argv, time.time() - started)


def write_results(runs, args, argv, duration_s):
    summary = summarize(runs)
    command = 'python -m tests.benchmarks.bench_badis ' + ' '.join(
        argv if argv is not None else sys.argv[1:])
    setup = {'booked_mib': BOOKED_MIB, 'peak_wss_mib': PEAK_MIB,
             'step_s': args.step, 'agent_options': AGENT_OPTIONS,
             'guest': 'TCG, 1 vCPU, memfd RAM, 256 MiB swap file, memwork '
                      'period 200 ms'}
    goals = {'badis_mean_error_pct_booked_each_phase': 5.0,
             'vm_over_median': 1.03, 'cpu_pct_core_per_10_vms': 1.0}
    result = {
        'command': command,
        'date': time.strftime('%Y-%m-%d %H:%M:%S'),
        'duration_s': round(duration_s),
        'machine': ('2 cores shared with other sessions running TCG guests '
                    'at the same time; figures drift from run to run'),
        'setup': setup,
        'goals': goals,
        'summary': summary,
        'runs': [{k: v for k, v in r.items() if k != 'rows'}
                 for r in sorted(runs, key=lambda r: (
                     r['shape'], r['alloc'], r['estimator']))],
    }
    with open(os.path.join(args.out, 'badis.json'), 'w') as f:
        json.dump(result, f, indent=1)
    plot(runs, os.path.join(args.out, 'badis.png'))
    print(json.dumps(summary, indent=1))


if __name__ == '__main__':
    main()
