"""Badis on real access patterns (issue 13), scaled down.

Not run in CI. By hand, as root, with the functional-test prerequisites
(on a shared machine under /tmp/memmut-tcg.lock; about 10 minutes for the
whole suite at --seconds 40, 2 guests at a time):

    flock /tmp/memmut-tcg.lock .tox/functional/bin/python \\
        -m tests.benchmarks.bench_patterns --seconds 40
    ... --patterns load_idle,hotset --starts boot --estimators none,badis

Every run boots a 256 MiB TCG guest (``--booked-mib``; memfd RAM, a
swap disk as large on memmut-memstore) running memwork for ``--seconds``
with one access pattern of
:func:`memmut.evaluation.workloads.pattern_suite` over 160 MiB of data
(``--data-mib``; ``memwork.pattern=``: uniform random, Zipf at two
exponents, a moving hot
set, load-then-idle, phase changes), or a real program from Debian's
packages (:data:`PROGRAMS`): ``redis``, redis-server loaded with 20000
keys of 4 KiB by redis-benchmark, then random GETs for the run's length
(tests/harness/redis.py; throughput = GETs done); ``sqlite``, sqlite3
with 24000 rows of 3000 bytes in an in-memory table, then point lookups
whose keys follow a power law (a tenth of the rows gets 56 % of them;
tests/harness/sqlite.py; throughput = lookups done), ``sqlite16``, the
same with a steeper law (the colder half of the rows gets 4 % of the
lookups), and ``sqlite16_paced``, whose client thinks 100 ms between
batches of 200 (a server at part of its capacity; its runs also record
the mean service time of a batch). No true working set is stated for
the programs. The agent loop of :mod:`tests.harness.badis_run` runs one
estimator with balloon actuation
(1 s rounds), started either right after the guest boots (``boot``) or
once the workload has loaded its data (``loaded``: after memwork's first
pass over the step, plus 3 s).

Reported per run: the throughput loss (vm_over = operations the ``none``
run made / operations this run made, memwork's ``ops`` over the same
time), the memory saved (mean of booked - balloon over the polls after
the agent started, % of booked) beside what a perfect estimator one poll
late would save on the same actuation (``oracle``; not for Zipf, whose
working set has no single size), and, on the patterns whose working set
is well defined (the hot part once loaded, plus the guest's base), the
per-poll and one-poll-allowance errors of Badis in S_more and S_less.

Results: tests/benchmarks/results/patterns.json (+ patterns.jsonl, one
line per run), patterns.md and patterns.png.
"""

import argparse
import concurrent.futures
import dataclasses
import functools
import json
import os
import re
import shlex
import statistics
import sys
import threading
import time
import typing

from memmut.evaluation import workloads
from memmut.evaluation import wss_accuracy
from tests.benchmarks import discipline
from tests.harness import badis_run
from tests.harness import redis
from tests.harness import sqlite

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, 'results')
MIB = badis_run.MIB
BOOKED_MIB = badis_run.BOOKED_MIB
DATA_MIB = 160
STARTS = ('boot', 'loaded')
LOADED_DELAY_S = 3.0
_FIRST_PASS = re.compile(r'^MEMWORK step=0 .*pass=1 ', re.M)


@dataclasses.dataclass(frozen=True)
class Program:
    """A real program the guest runs instead of memwork: its image, its
    kernel command line for a run of ``seconds``, the console line that
    says its data is loaded, the one that ends the run with the
    operations done (group 1), and its progress lines (operations in the
    batch, guest uptime)."""
    name: str
    image: typing.Callable
    cmdline: typing.Callable
    loaded: typing.Pattern
    done: typing.Pattern
    batch: typing.Pattern

    def progress(self, log_text):
        """``[t, None, operations so far]`` per batch (the shape of
        :func:`progress`'s memwork lines), to see when a run lost its
        throughput."""
        out, total = [], 0
        for n, t in self.batch.findall(log_text):
            total += int(n)
            out.append([float(t), None, total])
        return out


_PROGRAM_USED = re.compile(r'^[A-Z]+ load .*used_kb=(\d+)', re.M)
REDIS_KEYS = 20000                  # about 80 MiB of 4 KiB values
PROGRAMS = {p.name: p for p in (
    # uniform random GETs over all its keys: the working set is all data
    Program('redis', redis.redis_image,
            lambda seconds: redis.cmdline(seconds, REDIS_KEYS),
            re.compile(r'^REDIS load ', re.M),
            re.compile(r'^REDIS done get_requests=(\d+)', re.M),
            re.compile(r'^REDIS get requests=(\d+) .*t=([\d.]+)', re.M)),
    # skewed point lookups: no size at which the working set ends; at
    # skew 16 the colder half of the rows gets 4 % of them (16 % at 4);
    # paced: batches of 200 with 100 ms of thought between them
    *(Program(name, sqlite.sqlite_image,
              functools.partial(sqlite.cmdline, **params),
              re.compile(r'^SQLITE load ', re.M),
              re.compile(r'^SQLITE done lookups=(\d+) ', re.M),
              re.compile(r'^SQLITE get lookups=(\d+) .*t=([\d.]+)', re.M))
      for name, params in (
          ('sqlite', {'skew': 4}), ('sqlite16', {'skew': 16}),
          ('sqlite16_paced', {'skew': 16, 'batch': 200, 'pause_ms': 100}))),
)}
# a program's service time per batch (sqlite3's timer), where it has one
_BATCH_SERVICE = re.compile(r'^[A-Z]+ get .* s=([\d.]+) ', re.M)


def set_size(booked_mib, data_mib):
    """The guests' memory and the patterns' data for this process's
    runs (defaults: 256 and 160 MiB, the size the suite was tuned on)."""
    global BOOKED_MIB, DATA_MIB
    BOOKED_MIB, DATA_MIB = booked_mib, data_mib


def ops(g):
    """memwork's operations (page touches) over the whole run (seq prints
    none: every pass touches every page of the step)."""
    return sum(d.get('ops', d['passes'] * d['wss_mib'] * 256)
               for d in g.workload_lines() if d['event'] == 'end')


def progress(g):
    """memwork's progress lines (at most one a second per step):
    ``[t, step, ops so far in the step]``, to see when a run lost its
    throughput (a probe, a rise, a shrink) rather than only how much."""
    return [[d.get('t'), d.get('step'), d.get('ops')]
            for d in g.workload_lines()
            if d['event'] == 'pass' and d.get('ops') is not None]


def run_ops(r):
    """A recorded run's operations (runs recorded before seq's were
    counted: passes x pages)."""
    if not r.get('ops') and r.get('memwork_pattern') == 'seq':
        return (r.get('passes') or 0) * DATA_MIB * 256
    return r.get('ops')


def with_truth(rows, base, pattern):
    """Rows whose truth is the pattern's: the hot part of the step (the
    harness reads the step's size), None for Zipf."""
    out = []
    for r in rows:
        r = dict(r)
        mib = (r['truth_kb'] - base) // MIB
        r['truth_kb'] = (base + pattern.hot_of(mib) * MIB
                         if pattern.well_defined else None)
        out.append(r)
    return out


def oracle_truth(sched, pattern, base):
    """The working set the ``oracle`` run gives the guest, read from its
    console at each poll: a step's whole size while memwork loads it
    (before the step's first line, or once the previous step's ``end``
    line is out), then the part of it the pattern touches after loading
    (:meth:`Pattern.hot_of`); plus the guest's base."""
    def truth(log_text):
        found = badis_run._STEP.findall(log_text)
        if not found:
            return base + sched[0].mib * MIB
        end, step, mib = found[-1]
        if end and int(step) + 1 < len(sched):
            return base + sched[int(step) + 1].mib * MIB
        return base + pattern.hot_of(int(mib)) * MIB
    return truth


def has_oracle(name):
    """Whether the pattern has a true working set to drive an oracle
    run with (not Zipf, not a real program)."""
    if name in PROGRAMS:
        return False
    return workloads.named_pattern(name, DATA_MIB, 1.0)[0].well_defined


def saved_pct(rows, booked_kb, key='balloon_kb'):
    vals = [booked_kb - r[key] for r in rows if r.get(key) is not None]
    return (round(100.0 * statistics.mean(vals) / booked_kb, 2)
            if vals else None)


def oracle_saved_pct(rows, booked_kb):
    """What a perfect estimator one poll late would save on the same
    actuation (balloon_target, benchmark limits) from the first row."""
    if not rows or rows[0]['truth_kb'] is None:
        return None
    return saved_pct(wss_accuracy.late_oracle_rows(
        rows, booked_kb, badis_run.ORACLE_TARGET, rows[0]['truth_kb']),
        booked_kb)


def program_run(factory, libvirtd, program, start, estimator, seconds,
                cpuset=None):
    """A run of a real program (:data:`PROGRAMS`): operations are what
    its done line counts, no truth per poll."""
    booked = BOOKED_MIB * MIB
    g = factory(memory_mib=BOOKED_MIB, swap='memstore',
                swap_mib=max(256, BOOKED_MIB),
                memfd=True, tb_cache_mib=64, stat_period=1,
                cmdline=program.cmdline(seconds), cpuset=cpuset)
    try:
        base = badis_run.base_kb(g, booked)
        if start == 'loaded':
            g.wait_for(program.loaded.pattern, timeout=120)
            time.sleep(LOADED_DELAY_S)
        conf = badis_run.agent_conf(libvirtd.memmut_options())
        run = badis_run.Run(g, conf, estimator, booked, base,
                            done=program.done)
        done = run.run(seconds + 240)
        log = g.log()
        rows = [dict(r, truth_kb=None) for r in run.rows]
        res = {'pattern': program.name, 'memwork_pattern': None,
               'start': start, 'estimator': estimator, 'seconds': seconds,
               'booked_kb': booked, 'base_kb': base, 'passes': done,
               'ops': done or 0, 'wall_s': round(run.wall, 1),
               'moves': len(run.moves), 'rows': rows,
               'saved_pct': saved_pct(rows, booked),
               'bad_shrinks': max([0] + [r.get('bad_shrinks', 0)
                                         for r in rows]),
               'progress': program.progress(log)}
        served = [float(x) for x in _BATCH_SERVICE.findall(log)]
        if served:              # what a paced client feels
            res['batch_s_mean'] = statistics.mean(served)
        used = _PROGRAM_USED.search(log)
        if used:                # the data's memory once loaded
            res['program_used_kb'] = int(used.group(1))
        if done is None:
            res['failed'] = '%s did not finish' % program.name
        return res
    finally:
        g.destroy()


def one_run(factory, libvirtd, name, start, estimator, seconds,
            cpuset=None):
    if name in PROGRAMS:
        return program_run(factory, libvirtd, PROGRAMS[name], start,
                           estimator, seconds, cpuset)
    pattern, steps = workloads.named_pattern(name, DATA_MIB, seconds)
    booked = BOOKED_MIB * MIB
    g = factory(memory_mib=BOOKED_MIB, schedule=steps, alloc='d', loops=1,
                period_ms=200, swap='memstore',
                swap_mib=max(256, BOOKED_MIB), memfd=True,
                tb_cache_mib=64, stat_period=1, pattern=pattern,
                cpuset=cpuset)
    try:
        base = badis_run.base_kb(g, booked)
        if start == 'loaded':
            g.wait_for(_FIRST_PASS.pattern, timeout=60)
            time.sleep(LOADED_DELAY_S)
        conf = badis_run.agent_conf(libvirtd.memmut_options())
        oracle = (oracle_truth(steps, pattern, base)
                  if estimator == badis_run.ORACLE else None)
        run = badis_run.Run(g, conf, estimator, booked, base, sched=steps,
                            oracle=oracle)
        failure = None
        try:
            passes = run.run(workloads.duration(steps) + 120)
        except Exception as e:
            passes, failure = None, str(e)
            run.driver.close()
        rows = with_truth(run.rows, base, pattern)
        res = {'pattern': name, 'memwork_pattern': pattern.encode(),
               'start': start, 'estimator': estimator, 'seconds': seconds,
               'booked_kb': booked, 'base_kb': base, 'passes': passes,
               'ops': ops(g), 'wall_s': round(run.wall, 1),
               'moves': len(run.moves), 'rows': rows,
               'progress': progress(g),
               'saved_pct': saved_pct(rows, booked),
               'bad_shrinks': max([0] + [r.get('bad_shrinks', 0)
                                         for r in rows])}
        if passes is None:
            died = re.findall(r'(Out of memory: Killed process \d+ \(\S+\)|'
                              r'Kernel panic - [^\n]*)', g.log())
            res['failed'] = '%s; guest console: %s' % (
                failure or 'workload did not finish',
                '; '.join(died[:3]) or 'no OOM/panic line')
        if estimator not in ('none', badis_run.ORACLE,
                             badis_run.OBSERVE) and \
                pattern.well_defined:
            res['errors'] = wss_accuracy.errors(rows, estimator, booked)
            res['oracle_saved_pct'] = oracle_saved_pct(rows, booked)
        return res
    finally:
        g.destroy()


def twin_run(factory, libvirtd, name, start, estimator, seconds,
             pin=False):
    """``estimator``'s run with a ``none`` run of the same case started
    beside it (``--twin``): its reference under the same machine
    conditions. Memory-bound patterns' throughput on this bed drifts with
    the host's state by more than the estimates cost (Zipf 0.8 at 512
    MiB: the same ``none`` run made 45.4 M operations in one hour and
    38.2-39.9 M two hours later, badis41), so a ``none`` run taken
    before the configurations cannot judge them. The twin shares the
    two cores with the run it judges, and a run that swaps leaves its
    twin more of the memory bandwidth: if anything, vm_over reads high.
    ``pin`` (``--pin``): the run on host CPU 0, its twin on CPU 1, each
    guest's vCPU and QEMU threads on their own core instead of sharing
    both as the scheduler likes.
    Returns the run with ``twin_ops`` (None when the twin failed)."""
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        mine = pool.submit(one_run, factory, libvirtd, name, start,
                           estimator, seconds, '0' if pin else None)
        twin = pool.submit(one_run, factory, libvirtd, name, start, 'none',
                           seconds, '1' if pin else None)
        r = mine.result()
        try:
            t = twin.result()
        except Exception as e:
            t = {'failed': str(e)}
    r['twin_ops'] = (run_ops(t) or None) if not t.get('failed') else None
    # when each lost or gained against the other, not only how much
    r['twin_progress'] = t.get('progress')
    if t.get('batch_s_mean') is not None:
        r['twin_batch_s_mean'] = t['batch_s_mean']
    r['pinned'] = bool(pin)
    return r


def settled_errors(run):
    """:func:`wss_accuracy.settled` of a run: its one-poll-allowance
    errors over the second half (``{}`` without errors or rows)."""
    rows = run.get('rows')
    if not run.get('errors') or not rows:
        return {}
    # a labelled configuration's rows keep the estimator's own key
    key = 'badis' if any('badis' in r for r in rows) else run['estimator']
    return wss_accuracy.settled(rows, key, run['booked_kb'])


def packing_errors(run):
    """:func:`wss_accuracy.packing` of a run, without and with the shrink
    floor, over the run and its second half: ``{'max_avg': ...,
    'max_avg_2nd': ..., 'floor': ..., 'floor_2nd': ...}`` (``{}`` for
    runs without errors or without the figures: runs recorded before
    they were)."""
    rows = run.get('rows')
    if not run.get('errors') or not rows or \
            not any('max_avg_kb' in r for r in rows):
        return {}
    booked = run['booked_kb']
    return {name + half: wss_accuracy.packing(rows, booked, carry, frac)
            for name, carry in (('max_avg', False), ('floor', True))
            for half, frac in (('', 0.0), ('_2nd', 0.5))}


def summarize(runs):
    ref = {r['pattern']: run_ops(r) for r in runs
           if r['estimator'] == 'none' and run_ops(r)}
    table = []
    for r in sorted(runs, key=lambda r: (r['pattern'], r['start'],
                                         r['estimator'])):
        if r['estimator'] == 'none' and not r.get('twin_ops'):
            continue                 # a reference; an A/A pair (--aa) is
        e = r.get('errors') or {}    # shown: the bed's noise
        allow = e.get('allowance') or {}
        settled = settled_errors(r)
        # a twin (--twin) ran beside this run, under the same machine
        # conditions: it is the reference
        base = r.get('twin_ops') or ref.get(r['pattern'])
        table.append({
            'pattern': r['pattern'], 'start': r['start'],
            'estimator': r['estimator'],
            'vm_over': (round(base / run_ops(r), 3)
                        if base and run_ops(r) else None),
            'saved_pct': r.get('saved_pct'),
            'oracle_saved_pct': r.get('oracle_saved_pct'),
            'S_more': e.get('S_more'), 'S_less': e.get('S_less'),
            'allowance_S_more': allow.get('S_more'),
            'allowance_S_less': allow.get('S_less'),
            'settled_S_more': settled.get('S_more'),
            'settled_S_less': settled.get('S_less'),
            'bad_shrinks': r.get('bad_shrinks'),
            'packing': packing_errors(r),
            'twin': bool(r.get('twin_ops')),
            'failed': r.get('failed')})
    oracle = {(row['pattern'], row['start']): row['vm_over']
              for row in table if row['estimator'] == badis_run.ORACLE}
    for row in table:
        o = oracle.get((row['pattern'], row['start']))
        row['vm_over_vs_oracle'] = (
            round(row['vm_over'] / o, 3)
            if o and row['vm_over'] is not None and
            row['estimator'] != badis_run.ORACLE else None)
    by = {}
    for row in table:
        if row['vm_over'] is not None:
            by.setdefault(row['estimator'], []).append(row['vm_over'])
    overall = {k: {'vm_over_median': statistics.median(v),
                   'vm_over_worst': max(v)} for k, v in by.items()}
    return {'runs': table, 'overall': overall}


# What the table cannot say by itself (patterns.md's notes).
NOTES = [
    '- vm_over also carries the agent\'s own CPU on 2 cores shared with '
    'the TCG guests, and run-to-run noise: compare with the seq and random '
    'cases, whose true working set is close to the booking, before '
    'reading a small vm_over as a cost of the estimate.',
    '- The truth counts the hot part from the first second, also while '
    'memwork still loads the data (a few seconds under TCG).',
    '- Zipf has no single working-set size: no oracle and no S_more / '
    'S_less; the throughput the estimate leaves is the vm_over column.',
    '- hotset\'s window (40 of 160 MiB) moves every 3.75 s, faster than '
    'the swap-in bound of 1 MiB/s: its working set is the whole step '
    '(workloads.Pattern.hot_of; runs before session 8 counted the window '
    'only, and an oracle run at the window lost a third of its '
    'throughput).',
    '- The `oracle` run drives the balloon with the true working set read '
    'from the guest\'s console at each poll (the whole step while memwork '
    'loads it), through the same actuator and headroom: its vm_over is '
    'what saving that memory costs on this bed, whatever the estimate.',
]


def _f(v, pct=False):
    if v is None:
        return 'n/a'
    return ('%.2f %%' % v) if pct else ('%.3f' % v)


def packing_table(runs):
    """The figure the controller packs on (WSS^max_avg, and with the
    shrink floor: ``[consolidation] pack_on_shrink_floor``) against the
    truth; no lines when no run recorded it."""
    shown = [r for r in runs if r.get('packing')]
    if not shown:
        return []

    def cell(p):
        if not p:
            return 'n/a'
        return '%.1f / %.1f (%.0f %%)' % (p['short'], p['over'],
                                          p['polls_short'])
    lines = ['Packing figure: mean shortfall / excess against the truth, '
             '% of booked, one poll of allowance (% of polls short); '
             'WSS^max_avg alone, and with the shrink floor the agent '
             'holds (`[consolidation] pack_on_shrink_floor`).', '',
             '| pattern | start | estimator | WSS^max_avg | 2nd half | '
             'with floor | 2nd half |', '|---|---|---|---|---|---|---|']
    for r in shown:
        p = r['packing']
        lines.append('| %s | %s | %s | %s | %s | %s | %s |' % (
            r['pattern'], r['start'], r['estimator'], cell(p['max_avg']),
            cell(p['max_avg_2nd']), cell(p['floor']),
            cell(p['floor_2nd'])))
    return lines + ['']


def markdown(result):
    sm = result['summary']
    setup = result.get('setup', {})
    lines = ['# Badis on real access patterns (issue 13): benchmark', '',
             'Generated by `tests/benchmarks/bench_patterns.py` (`%s`, %s, '
             '%s s). %d MiB TCG guests, %d MiB of data, %g s per run, '
             'swap on memmut-memstore, 1 s rounds; %s.'
             % (result['command'], result['date'], result['duration_s'],
                setup.get('booked_mib', BOOKED_MIB),
                setup.get('data_mib', DATA_MIB), result['seconds'],
                result['machine']), '',
             'vm_over = memwork operations of the `none` run (of its '
             'twin, started beside it, where the table says so) / this '
             'run\'s '
             '(throughput loss; goal: median <= 1.03, worst <= 1.10). '
             'Saved: mean booked - balloon over the polls, % of booked; '
             'oracle: a perfect estimator one poll late on the same '
             'actuation. Errors: mean |estimate - truth|, % of booked, per '
             'poll and with one poll of allowance (n/a for Zipf: no single '
             'true working set). 2nd half: the allowance errors over the '
             'second half of the run (a first descent, a one-time cost, '
             'is behind it).', '',
             'vm_over / oracle: this run\'s vm_over over the `oracle` '
             'run\'s in the same case (the balloon driven by the true '
             'working set, one poll late, through the same actuator: what '
             'saving that memory costs on this bed).', '',
             '| pattern | start | estimator | vm_over | vm_over / oracle | '
             'saved | oracle saved | S_more | S_less | allow. S_more | '
             'allow. S_less | 2nd half S_more | 2nd half S_less | '
             'bad shrinks |',
             '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|']
    for r in sm['runs']:
        lines.append('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | '
                     '%s | %s | %s | %s |' % (
                         r['pattern'], r['start'], r['estimator'],
                         _f(r['vm_over']) + (' (twin)' if r.get('twin')
                                             else ''),
                         _f(r.get('vm_over_vs_oracle')),
                         _f(r['saved_pct'], True),
                         _f(r['oracle_saved_pct'], True),
                         _f(r['S_more'], True), _f(r['S_less'], True),
                         _f(r['allowance_S_more'], True),
                         _f(r['allowance_S_less'], True),
                         _f(r.get('settled_S_more'), True),
                         _f(r.get('settled_S_less'), True),
                         r['bad_shrinks'] if r['bad_shrinks'] is not None
                         else 'n/a'))
    lines.append('')
    lines += packing_table(sm['runs'])
    for name, d in sorted(sm['overall'].items()):
        lines.append('- %s: vm_over median %.3f, worst %.3f' % (
            name, d['vm_over_median'], d['vm_over_worst']))
    for r in sm['runs']:
        if r.get('failed'):
            lines.append('- failed: %s,%s,%s: %s' % (
                r['pattern'], r['start'], r['estimator'], r['failed']))
    lines += ['', '## Notes', ''] + NOTES + ['']
    return '\n'.join(lines)


def plot(runs, path):
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt
    shown = [r for r in runs if r['estimator'] != 'none' and r['rows']]
    cases = sorted({(r['pattern'], r['start']) for r in shown})
    if not cases:
        return
    cols = 2
    nrows = (len(cases) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(12, 2.4 * nrows),
                             squeeze=False)
    for ax, case in zip(axes.flat, cases):
        for r in shown:
            if (r['pattern'], r['start']) != case:
                continue
            t0 = r['rows'][0]['t']
            ts = [x['t'] - t0 for x in r['rows']]
            ax.plot(ts, [x['truth_kb'] / MIB if x['truth_kb'] is not None
                         else float('nan') for x in r['rows']], 'k--',
                    label='true WSS')
            ax.plot(ts, [x['balloon_kb'] / MIB for x in r['rows']],
                    color='0.7', label='allocation')
            ax.plot(ts, [x.get(r['estimator'], float('nan')) / MIB
                         for x in r['rows']], label=r['estimator'])
        ax.set_title('%s, agent from %s' % case, fontsize=9)
        ax.set_ylim(0, BOOKED_MIB + 16)
        ax.set_ylabel('MiB')
    for ax in axes.flat[len(cases):]:
        ax.axis('off')
    axes.flat[0].legend(fontsize=7, loc='lower right')
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--patterns', default=','.join(
        workloads.pattern_suite(DATA_MIB, 40)),
        help='memwork patterns of workloads.pattern_suite (or, named, '
             'of workloads.held_out_suite: parameters Badis was not '
             'tuned on); the real programs %s only when named (their '
             'images need their Debian packages on the host: redis-server '
             'redis-tools, sqlite3)' % ', '.join(sorted(PROGRAMS)))
    p.add_argument('--starts', default=','.join(STARTS))
    p.add_argument('--estimators', default='none,badis',
                   help='none, badis, zballoond, selfballoon, oracle (the '
                        'balloon at the true working set), observe (Badis '
                        'sampling with the balloon left at the booking: '
                        'what sampling alone costs the guest)')
    p.add_argument('--seconds', type=float, default=40.0)
    p.add_argument('--booked-mib', type=int, default=BOOKED_MIB,
                   help='each guest\'s memory (MiB; its swap disk is as '
                        'large): the suite at another size than the one '
                        'it was tuned on')
    p.add_argument('--data-mib', type=int, default=DATA_MIB,
                   help='the patterns\' data (MiB; must leave the guest\'s '
                        'base, about 80 MiB, inside --booked-mib)')
    p.add_argument('--parallel', type=int, default=2)
    p.add_argument('--twin', action='store_true',
                   help='run a none copy of each case beside it, as its '
                        'reference (vm_over = twin operations / this '
                        'run\'s): --parallel counts the pairs\' guests, '
                        'and no separate none run is made')
    p.add_argument('--pin', action='store_true',
                   help='with --twin: the run on host CPU 0 and its twin '
                        'on CPU 1 (libvirt vcpu cpuset), so the pair does '
                        'not share cores as the scheduler likes. On a '
                        '2-core bed it was noisier than unpinned pairs and '
                        'put the agent\'s CPU on the run\'s core '
                        '(results/badis53)')
    p.add_argument('--aa', action='store_true',
                   help='with --twin: run none beside none too (an A/A '
                        'pair: its vm_over is the bed\'s own noise, what '
                        'no estimator can be judged within)')
    p.add_argument('--out', default=RESULTS)
    p.add_argument('--keep-other-runs', action='store_true',
                   help='keep the runs of the existing patterns.jsonl '
                        'whose case is not run again')
    p.add_argument('--report-only', action='store_true',
                   help='rewrite patterns.json/.md/.png from the '
                        'patterns.jsonl of earlier runs')
    p.add_argument('--runs-command', default=None,
                   help='with --report-only: the commands that recorded '
                        'the runs, for the results\' header')
    p.add_argument('--badis-option', action='append', default=[],
                   metavar='KEY=VALUE',
                   help='override a [badis] option of the agent loop '
                        '(repeatable), e.g. shrink_guard=false')
    p.add_argument('--label', default=None,
                   help='record the badis runs under this name instead of '
                        '"badis" (two configurations or commits in one '
                        'result file, e.g. with --keep-other-runs)')
    p.add_argument('--log', default=None, metavar='FILE',
                   help='append the agent loops\' log (INFO: Badis '
                        'events, probes, floors; each line names its '
                        'guest) to FILE')
    p.add_argument('--log-level', default='INFO',
                   choices=('DEBUG', 'INFO', 'WARNING'),
                   help='with --log: DEBUG adds each round\'s sample, swap '
                        'reading (KiB read back and written), estimate '
                        'and demand')
    args = p.parse_args(argv)
    why = workloads.size_error(args.booked_mib, args.data_mib)
    if why:
        p.error(why)
    unknown = [n for n in args.patterns.split(',')
               if n not in PROGRAMS and n not in workloads.suite_names()]
    if unknown:
        p.error('unknown pattern(s) %s (known: %s, %s)'
                % (', '.join(unknown), ', '.join(workloads.suite_names()),
                   ', '.join(sorted(PROGRAMS))))
    if (args.pin or args.aa) and not args.twin:
        p.error('--pin and --aa are about a run and its twin: they need '
                '--twin')
    set_size(args.booked_mib, args.data_mib)
    badis_run.set_badis_options(args.badis_option)
    if args.log:
        import logging
        logging.basicConfig(
            filename=args.log, level=getattr(logging, args.log_level),
            format='%(asctime)s.%(msecs)03d %(name)s %(message)s',
            datefmt='%H:%M:%S')
    if args.report_only:
        with open(os.path.join(args.out, 'patterns.jsonl')) as f:
            runs = [json.loads(x) for x in f if x.strip()]
        seconds = {r['seconds'] for r in runs}
        if len(seconds) == 1:
            args.seconds = seconds.pop()
        write_results(runs, args, argv, 0)
        return

    from tests.harness import bed
    from tests.harness import fixtures
    from tests.harness import image
    import tempfile

    os.makedirs(args.out, exist_ok=True)
    daemon, img, work, factory = bed.start('bench-patterns-')
    factories = {None: factory}
    cache = os.environ.get('MEMMUT_TEST_CACHE', image.DEFAULT_CACHE)
    for name in args.patterns.split(','):
        if name in PROGRAMS:
            factories[name] = fixtures.GuestFactory(
                daemon, PROGRAMS[name].image(cache), tempfile.mkdtemp(
                    prefix='bench-patterns-%s-' % name))
    jsonl = os.path.join(args.out, 'patterns.jsonl')
    cases = []
    for name in args.patterns.split(','):
        for est in args.estimators.split(','):
            if args.twin and est == 'none' and not args.aa:
                continue                 # each run has its own
            # the none run does not depend on when an agent would start
            if est == badis_run.ORACLE and not has_oracle(name):
                continue
            for start in (('boot',) if est == 'none'
                          else args.starts.split(',')):
                cases.append((name, start, est))

    def label_of(est):
        return args.label if args.label and est == 'badis' else est

    runs = []
    if args.keep_other_runs and os.path.exists(jsonl):
        mine = {(n, s, label_of(e)) for n, s, e in cases}
        with open(jsonl) as f:
            runs = [r for r in (json.loads(x) for x in f if x.strip())
                    if (r['pattern'], r['start'], r['estimator'])
                    not in mine]
    lock = threading.Lock()
    started = time.time()
    try:
        runner = (functools.partial(twin_run, pin=args.pin) if args.twin
                  else one_run)
        with open(jsonl, 'w') as out, discipline.run_pool(
                max(1, args.parallel // 2) if args.twin
                else args.parallel) as pool:
            for r in runs:
                out.write(json.dumps(r) + '\n')
            futs = {pool.submit(runner, factories.get(n, factory), daemon,
                                n, s, e, args.seconds): (n, s, e)
                    for n, s, e in cases}
            for fut in concurrent.futures.as_completed(futs):
                try:
                    r = fut.result()
                except Exception as e:
                    print('run %s failed: %s' % (futs[fut], e), flush=True)
                    continue
                r['estimator'] = label_of(r['estimator'])
                if r['estimator'] != 'none':
                    r['badis_options'] = list(args.badis_option)
                with lock:
                    runs.append(r)
                    out.write(json.dumps(r) + '\n')
                    out.flush()
                print('%s %s %s ops=%s%s saved=%s%% errors=%s' % (
                    r['pattern'], r['start'], r['estimator'], r['ops'],
                    ' twin_ops=%s' % r['twin_ops'] if 'twin_ops' in r
                    else '', r['saved_pct'],
                    (r.get('errors') or {}).get('all')), flush=True)
    finally:
        for f in factories.values():
            f.cleanup()
        daemon.stop()
    write_results(runs, args, argv, time.time() - started)


def write_results(runs, args, argv, duration_s):
    command = 'python -m tests.benchmarks.bench_patterns ' + shlex.join(
        argv if argv is not None else sys.argv[1:])
    if getattr(args, 'runs_command', None):
        command = '%s (summary: --report-only)' % args.runs_command
    result = {
        'command': command,
        'date': time.strftime('%Y-%m-%d %H:%M:%S'),
        'duration_s': round(duration_s), 'seconds': args.seconds,
        'machine': '2 cores shared with other sessions running TCG guests',
        'setup': {'booked_mib': BOOKED_MIB, 'data_mib': DATA_MIB,
                  'agent_options': badis_run.AGENT_OPTIONS,
                  'loaded_delay_s': LOADED_DELAY_S},
        'summary': summarize(runs),
        # the per-poll and per-batch series stay in patterns.jsonl
        'runs': [{k: v for k, v in r.items()
                  if k not in ('rows', 'progress', 'twin_progress')}
                 for r in runs]}
    with open(os.path.join(args.out, 'patterns.json'), 'w') as f:
        json.dump(result, f, indent=1)
    with open(os.path.join(args.out, 'patterns.md'), 'w') as f:
        f.write(markdown(result))
    plot(runs, os.path.join(args.out, 'patterns.png'))
    print(markdown(result))


if __name__ == '__main__':
    discipline.run_main(main, 'bench_patterns')
