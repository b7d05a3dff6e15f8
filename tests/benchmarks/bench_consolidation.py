"""Benchmark: consolidation, booked memory vs working sets (issues 6, 20).

Replays traces through memmut-sim's engine with the default options,
packing VMs on their booked memory (Neat) and on WSS^max_avg (memmut),
under the benchmark discipline of :mod:`tests.benchmarks.discipline`:
every headline figure is a mean over repeats with its 95 % interval, the
repeats run in a seeded random order, and the result file records the
versions and the machine's load.

Repeats:

* ``synthetic``: the built-in synthetic trace (300 VMs, 2 days) with
  seeds 0 .. N-1 (always run: needs no data);
* ``bitbrains``: when the real trace is present
  (``../shared/traces/bitbrains-rnd-2013-7.tar.gz``, read in place, never
  copied), consecutive windows of ``--window-days`` of the month (the
  default, 6 days, gives 5 windows of the 30-day month), each starting on
  its own day with the days before as history (a warm start).

Per repeat, both packings, their active hosts beside the per-step lower
bound on active hosts (``max(ceil(CPU / host CPU), ceil(memory / host
memory))`` for each packing's memory column), migrations (and their
duration and spill), memory overload, per-VM shortfall and energy. Then
variants of the real-trace repeats (each changes one thing): rounds every
1 800 s instead of 300 s, Badis's measured error and lag injected into the
working sets (``tests/benchmarks/results/badis.json``), a normal
relative error of 30 %, and migrations at 1 GbE (119 MB/s) instead of
Neat's default 10 MB/s. The whole month is also run once (its figures are
comparable to the single runs of earlier results, and give the plots).
Last, the time one round of planning takes with 100 to 10 000 simulated
hosts.

Steady state by default (since stop 65): every repeat is simulated
``--burn-in-days`` (1) before its start without accounting that time,
and the synthetic traces are ``--warm-days`` (1) longer with the repeat
starting after them, so the figures are those of a planner that has been
running, not of its first packing of every VM at once; the real trace's
variant ``cold_start`` keeps the figures from a cold start.

Goals, met only if the whole interval is inside: issue 6's active-host
ratio booked / WSS >= 2.5 (seed 004: 2.04 on a Google trace), share of
migrations caused by memory <= 3 % (seed: 3.17 %), host time with used
memory above capacity <= 0.2 %, and the month, both modes, in <= 10
minutes; issue 19's migrations per VM-day <= 0.15, CPU overload <= 0.3 %
of host time and active hosts within 15 % of the per-step lower bound.
Both packings here run memmut's default algorithms (the booked one on
bookings); issue 19's ESV goal against Neat's own algorithms is the
sweep's (``--sweep``, ``results/consolidation/tradeoff_burnin_w1b1``).

Writes tests/benchmarks/results/consolidation.json and .md,
consolidation_{active_hosts,migrations,memory,scaling}.png and prints a
summary. Run by hand (about 5 minutes of CPU; 10.5 minutes wall on 2
cores shared at a load average of 4-6)::

    .tox/py3/bin/python -m tests.benchmarks.bench_consolidation \
        [--trace PATH] [--repeats 5] [--window-days 6] [--seed 20] \
        [--burn-in-days 1] [--warm-days 1] [--synthetic-vms 300] \
        [--synthetic-only] [--skip-variants] [--skip-scaling] \
        [--skip-month]

Exit code 2 with a one-line error if a trace given explicitly cannot be
read.
"""

import argparse
import dataclasses
import os
import shlex
import sys
import time

import numpy as np

from memmut.consolidation import loader
from memmut.consolidation import planner
from memmut.simulator import engine
from memmut.simulator import quality
from memmut.simulator import report
from memmut.simulator import synthetic
from memmut.simulator import trace as trace_mod
from tests.benchmarks import discipline
from tests import common

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RESULTS = os.path.join(HERE, 'results')
DEFAULT_TRACE = os.path.join(os.path.dirname(ROOT), 'shared', 'traces',
                             'bitbrains-rnd-2013-7.tar.gz')
BADIS_RESULTS = os.path.join(RESULTS, 'badis.json')
GOALS = {
    # issue 6
    'active_host_ratio_min': 2.5,
    'memory_caused_share_max': 0.03,
    'memory_overload_time_max': 0.002,
    'wall_seconds_max': 600.0,
    # issue 19 (the Neat-relative ESV goal is the sweep's: its booked
    # packing there runs Neat's own algorithms)
    'migrations_per_vm_day_max': 0.15,
    'cpu_overload_time_max': 0.003,
    'above_lower_bound_max': 0.15,
}
SYNTHETIC_DAYS = 2.0
SCALING_HOSTS = (100, 300, 1000, 3000, 10000)
VMS_PER_HOST = 30
SWEEP_OUT = os.path.join(RESULTS, 'consolidation')

# Headline figures: (key, label, where from, format, scale, unit)
HEADLINES = (
    ('ratio', 'active-host ratio booked / WSS', 'comparison',
     'active_host_ratio_booked_over_wss', '.2f', 1, 'x'),
    ('lb_ratio', 'lower-bound ratio booked / WSS', 'comparison',
     'lower_bound_ratio_booked_over_wss', '.2f', 1, 'x'),
    ('booked_hosts', 'booked: active hosts', 'booked', 'avg_active_hosts',
     '.2f', 1, ''),
    ('booked_lb', 'booked: lower bound', 'booked', 'lower_bound_hosts',
     '.2f', 1, ''),
    ('wss_hosts', 'WSS: active hosts', 'wss', 'avg_active_hosts', '.2f',
     1, ''),
    ('wss_lb', 'WSS: lower bound', 'wss', 'lower_bound_hosts', '.2f', 1,
     ''),
    ('wss_lb_cpu', 'WSS: lower bound from CPU alone', 'wss',
     'lower_bound_cpu_hosts', '.2f', 1, ''),
    ('wss_migrations_per_day', 'WSS: migrations per day', 'wss',
     'migrations_per_day', '.0f', 1, ''),
    ('booked_mig_vm_day', 'booked: migrations per VM-day', 'booked',
     'migrations_per_vm_day', '.3f', 1, ''),
    ('wss_mig_vm_day', 'WSS: migrations per VM-day', 'wss',
     'migrations_per_vm_day', '.3f', 1, ''),
    ('wss_memory_share', 'WSS: migrations caused by memory', 'wss',
     'memory_caused_share', '.2f', 100, ' %'),
    ('wss_spilled', 'WSS: migrations spilling past their round', 'wss',
     'spilled_share', '.1f', 100, ' %'),
    ('wss_migration_s', 'WSS: mean migration (s)', 'wss',
     'mean_migration_s', '.0f', 1, ''),
    ('wss_mem_overload', 'WSS: memory overload (host time)', 'wss',
     'memory_overload_host_time_fraction', '.3f', 100, ' %'),
    ('booked_cpu_overload', 'booked: CPU overload (host time)', 'booked',
     'cpu_overload_host_time_fraction', '.3f', 100, ' %'),
    ('wss_cpu_overload', 'WSS: CPU overload (host time)', 'wss',
     'cpu_overload_host_time_fraction', '.3f', 100, ' %'),
    ('wss_over_lb_pct', 'WSS: above the lower bound', 'wss',
     'above_lower_bound', '.1f', 100, ' %'),
    ('booked_slav', 'booked: SLAV (OTF x PDM)', 'booked', 'slav', '.3g', 1,
     ''),
    ('wss_slav', 'WSS: SLAV (OTF x PDM)', 'wss', 'slav', '.3g', 1, ''),
    ('booked_esv', 'booked: ESV (kWh)', 'booked', 'esv', '.3g', 1, ''),
    ('wss_esv', 'WSS: ESV (kWh)', 'wss', 'esv', '.3g', 1, ''),
    ('wss_short', 'WSS: VM-intervals short of memory', 'wss',
     'shortfall_vm_interval_fraction', '.2f', 100, ' %'),
    ('wss_short_mean', 'WSS: mean shortfall (MiB)', 'wss',
     'shortfall_mean_mib', '.0f', 1, ''),
    ('wss_short_p99', 'WSS: p99 shortfall (MiB)', 'wss',
     'shortfall_p99_mib', '.0f', 1, ''),
    ('energy_ratio', 'energy ratio booked / WSS', 'comparison',
     'energy_ratio_booked_over_wss', '.2f', 1, 'x'),
)


def synthetic_repeat(seed, n_vms, warm_days, settings):
    """The synthetic trace of one repeat and its settings: the trace is
    ``warm_days`` longer than :data:`SYNTHETIC_DAYS` and the repeat
    starts after them, so its VMs have that much history (and a burn-in
    has days to run on)."""
    tr = synthetic.generate(n_vms, SYNTHETIC_DAYS + warm_days, seed)
    warm = int(round(warm_days * 86400.0 / tr.step))
    if warm:
        settings = dataclasses.replace(
            settings, start_steps=warm,
            duration_steps=int(round(SYNTHETIC_DAYS * 86400.0 / tr.step)))
    return tr, settings


def run_modes(trace, settings):
    metrics = {}
    for mode in engine.MODES:
        metrics[mode], _ = engine.simulate(trace, mode, settings)
    return metrics, engine.compare(metrics)


def figures(metrics, comparison):
    """The headline values of one repeat."""
    for m in metrics.values():
        days = m['hours'] / 24.0
        m['migrations_per_day'] = m['migrations'] / days if days else 0.0
        m['spilled_share'] = (m['migrations_spilled'] / m['migrations']
                              if m['migrations'] else 0.0)
        m['above_lower_bound'] = (m['active_over_lower_bound'] - 1.0
                                  if m.get('active_over_lower_bound')
                                  else None)
    src = dict(metrics, comparison=comparison)
    return {key: src[where].get(field)
            for key, _, where, field, _, _, _ in HEADLINES}


def summarize(values_list):
    out = {}
    for key, *_ in HEADLINES:
        vals = [v[key] for v in values_list if v.get(key) is not None]
        if vals:
            out[key] = discipline.summarize(vals)
    return out


def brief(metrics, comparison):
    keep = ('burn_in_intervals', 'avg_active_hosts', 'lower_bound_hosts',
            'lower_bound_cpu_hosts', 'lower_bound_memory_hosts',
            'active_over_lower_bound', 'max_active_hosts', 'rounds',
            'migrations', 'memory_caused_migrations', 'memory_caused_share',
            'migrations_by_cause', 'migrations_spilled',
            'mean_migration_s', 'max_migration_s', 'mean_migration_wait_s',
            'max_in_flight', 'memory_overload_host_time_fraction',
            'memory_overload_any_host_time_fraction',
            'shortfall_vm_interval_fraction', 'shortfall_mean_mib',
            'shortfall_p99_mib', 'shortfall_gib_hours',
            'shortfall_vms_fraction', 'cpu_overload_host_time_fraction',
            'energy_kwh', 'migrations_per_vm_day', 'otf', 'pdm', 'slav',
            'esv', 'oversize_vms', 'rejected_vms', 'readings',
            'wss_error', 'failed_placements', 'mean_round_ms',
            'max_round_ms', 'wall_seconds')
    out = {m: {k: v.get(k) for k in keep} for m, v in metrics.items()}
    out['comparison'] = comparison
    return out


def windows(trace, days):
    """Consecutive windows of ``days`` days (the last partial one
    dropped): ``(start day, start step, steps)``. Each is simulated from
    its start step with the samples before it as history (a warm start:
    a window cut out as a trace of its own would begin with every VM at
    its booking for an hour, and the memory underloads that follow)."""
    n = int(round(days * 86400.0 / trace.step))
    return [(k * n * trace.step / 86400.0, k * n, n)
            for k in range(trace.n_steps // n)]


def goal_row(name, summary, low=None, high=None, scale=1.0, unit='',
             spec='.3g'):
    met = discipline.goal_met(summary, low, high)
    goal = ('>= %s%s' % (format(low * scale, 'g'), unit) if low is not None
            else '<= %s%s' % (format(high * scale, 'g'), unit))
    return {'figure': name, 'value': discipline.fmt(summary, spec, scale,
                                                    unit),
            'mean': summary['mean'], 'low': summary['low'],
            'high': summary['high'], 'goal': goal, 'met': met}


# ---------------------------------------------------------------------------
# Planning time vs number of hosts


def scaling_round(n_hosts, vms_per_host=5, history=100, seed=0):
    """Hosts and VMs for one planning round of ``n_hosts`` hosts.

    Host CPU loads are spread so that about 5 % of hosts are overloaded
    (above 0.9), 20 % underloaded (below 0.5) and the rest in between;
    10 % of the hosts are suspended (targets for overloads). Working sets
    are drawn from 1-16 GiB scaled by ``5 / vms_per_host``, so the hosts'
    memory load does not depend on the VMs per host.
    """
    rng = np.random.default_rng(seed)
    cap_cpu, cap_mem = 83200.0, 262144.0
    hosts, vms = [], []
    n_on = int(n_hosts * 0.9)
    load = rng.choice([0.3, 0.7, 0.95], size=n_on, p=[0.2, 0.75, 0.05])
    for h in range(n_hosts):
        name = 'host-%05d' % h
        hosts.append(planner.PlannerHost(name, cap_cpu, cap_mem,
                                         active=h < n_on))
        if h >= n_on:
            continue
        share = rng.dirichlet(np.ones(vms_per_host))
        for k in range(vms_per_host):
            level = load[h] * cap_cpu * share[k]
            cpu = np.maximum(0.0, level * rng.normal(1.0, 0.05, history))
            cpu[-1] = level
            wss = float(rng.uniform(1024, 16384)) * 5.0 / vms_per_host
            vms.append(planner.PlannerVM('vm-%d-%d' % (h, k), name, cpu,
                                         wss * 1.05, np.full(history, wss)))
    return hosts, vms


def _without_session(algos):
    """The same algorithms, the placement without its session: the
    planner then rebuilds every host's figures per placement (the path of
    a third-party placement, and the planner before issue 19)."""
    decide = algos.placement

    def placement(*args, **kwargs):
        return decide(*args, **kwargs)
    return dataclasses.replace(algos, placement=placement)


def fit_exponent(rows, key):
    """Least-squares slope of log(time) over log(hosts): the measured
    exponent ``k`` of ``time ~ hosts^k``."""
    pts = [(r['hosts'], r[key]) for r in rows if r.get(key)]
    if len(pts) < 2:
        return None
    x = np.log([p[0] for p in pts])
    y = np.log([p[1] for p in pts])
    return float(np.polyfit(x, y, 1)[0])


def measure_scaling(host_counts, vms_per_host=VMS_PER_HOST, repeat=3,
                    plain_up_to=3000, spec=None, history=100, kept=False):
    """Seconds per planning round (best of ``repeat``; wall and CPU time
    of this process) for each host count, with the placement session
    (the planner's path) and, up to ``plain_up_to`` hosts, without it.
    ``spec``: the algorithms (default: the migration-aware defaults);
    ``history``: samples per VM history (the set's history_length).
    ``kept``: also time rounds with the hosts' sums kept from the round
    before (:class:`memmut.consolidation.history_sums.HistorySums`): the
    VMs' series are ``repeat`` samples longer, a first round fills the
    sums and each timed round moves the window on by one sample
    (``kept_round_*``, best of ``repeat``; ``same_plan_kept``: every
    kept round's plan equals the plan from scratch of the same round)."""
    algos = loader.build_all(spec or loader.AlgorithmSpec(), 300.0, 60.0)
    plain = _without_session(algos)
    rows = []
    for n in host_counts:
        hosts, vms = scaling_round(n, vms_per_host, history=history)
        row = {'hosts': n, 'vms': len(vms), 'history': history}
        variants = [('', algos)]
        if n <= plain_up_to:
            variants.append(('plain_', plain))
        plans = {}
        for prefix, al in variants:
            walls, cpus = [], []
            for _ in range(repeat):
                t0, c0 = time.perf_counter(), time.process_time()
                plans[prefix] = planner.plan_round(hosts, vms, al)
                walls.append(time.perf_counter() - t0)
                cpus.append(time.process_time() - c0)
            row[prefix + 'round_seconds'] = min(walls)
            row[prefix + 'round_cpu_seconds'] = min(cpus)
        if kept:
            row.update(_measure_kept(n, vms_per_host, history, repeat,
                                     algos))
        plan = plans['']
        row.update(overloaded=len(plan.overloaded),
                   underloaded=len(plan.underloaded),
                   migrations=len(plan.migrations),
                   same_plan_as_plain=(plans[''] == plans['plain_']
                                       if 'plain_' in plans else None))
        rows.append(row)
        sys.stderr.write(
            '  scaling: %5d hosts, %6d VMs: %.3f s per round (CPU %.3f s; '
            'without the session %s) %d migrations\n'
            % (n, len(vms), row['round_seconds'], row['round_cpu_seconds'],
               '%.3f s' % row['plain_round_seconds']
               if 'plain_round_seconds' in row else '-',
               len(plan.migrations)))
    return rows


def _measure_kept(n, vms_per_host, history, repeat, algos):
    """``measure_scaling``'s kept-sums figures for ``n`` hosts."""
    from memmut.consolidation import history_sums
    hosts, full = scaling_round(n, vms_per_host, history=history + repeat)

    def window(r):
        return [planner.PlannerVM(v.uuid, v.host,
                                  v.cpu_history[r:r + history], v.ram,
                                  v.mem_history[r:r + history],
                                  history_end=r + history - 1)
                for v in full]
    sums = history_sums.HistorySums()
    planner.plan_round(hosts, window(0), algos, sums=sums)
    walls, cpus, same = [], [], True
    for r in range(1, repeat + 1):
        vms = window(r)
        t0, c0 = time.perf_counter(), time.process_time()
        plan = planner.plan_round(hosts, vms, algos, sums=sums)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        same = same and plan == planner.plan_round(hosts, vms, algos)
    return {'kept_round_seconds': min(walls),
            'kept_round_cpu_seconds': min(cpus), 'same_plan_kept': same}


def plot_scaling(rows, path, default_rows=None):
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    x = [r['hosts'] for r in rows]
    y = [r['round_cpu_seconds'] for r in rows]
    ax.loglog(x, y, 'o-', label='Neat\'s set, sorted best fit, one index '
              'per round (k = %.2f)' % fit_exponent(rows,
                                                    'round_cpu_seconds'))
    if default_rows:
        ax.loglog([r['hosts'] for r in default_rows],
                  [r['round_cpu_seconds'] for r in default_rows], 'd-',
                  color='tab:green', label='migration-aware defaults '
                  '(k = %.2f)' % fit_exponent(default_rows,
                                              'round_cpu_seconds'))
        kept = [r for r in default_rows if r.get('kept_round_cpu_seconds')]
        if len(kept) > 1:
            ax.loglog([r['hosts'] for r in kept],
                      [r['kept_round_cpu_seconds'] for r in kept], 'v-',
                      color='tab:olive', label='defaults, sums kept '
                      'between rounds (k = %.2f)'
                      % fit_exponent(kept, 'kept_round_cpu_seconds'))
    xp = [r['hosts'] for r in rows if r.get('plain_round_cpu_seconds')]
    yp = [r['plain_round_cpu_seconds'] for r in rows
          if r.get('plain_round_cpu_seconds')]
    if len(xp) > 1:
        ax.loglog(xp, yp, 's--', color='tab:red',
                  label='Neat\'s set, hosts rebuilt per placement '
                  '(k = %.2f)'
                  % fit_exponent(rows, 'plain_round_cpu_seconds'))
    ax.loglog(x, [y[0] * n / x[0] for n in x], ':', color='grey',
              label='linear from %d hosts' % x[0])
    ax.axhline(1.0, color='black', lw=0.6, ls='-.')
    ax.set_xlabel('simulated hosts (90 %% on, %d VMs each)'
                  % VMS_PER_HOST)
    ax.set_ylabel('CPU seconds per planning round')
    ax.set_title('Planning time of one consolidation round')
    ax.legend(fontsize='small')
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def scaling_results(rows):
    """The scaling rows with their fitted exponents (for the JSON)."""
    return {'vms_per_active_host': VMS_PER_HOST,
            'rows': rows,
            'exponent_cpu': fit_exponent(rows, 'round_cpu_seconds'),
            'exponent_wall': fit_exponent(rows, 'round_seconds'),
            'exponent_plain_cpu': fit_exponent(rows,
                                               'plain_round_cpu_seconds'),
            'exponent_kept_cpu': fit_exponent(rows,
                                              'kept_round_cpu_seconds'),
            'goal': 'one round for 10 000 hosts x 30 VMs in <= 1 s on '
                    'one core (issue 19)',
            'note': 'best of 3 per point; CPU time of this process, wall '
                    'time beside it (the machine is shared). "plain": '
                    'the placement called without a session, the '
                    'planner path before issue 19.'}


# ---------------------------------------------------------------------------


def markdown(results):
    lines = ['# Consolidation benchmark', '',
             'Command: `%s`' % results['command'], '',
             'Each figure: mean ± half-width of the 95 %% Student-t interval '
             '(n repeats). Repeats: synthetic trace seeds; windows of the '
             'real trace (different start days). Case order shuffled with '
             'seed %d.' % results['discipline']['seed'], '']
    if results.get('burn_in_days'):
        lines += ['Steady state: every repeat was simulated %g day(s) '
                  'before its start and that time not accounted (warm-up '
                  'deletion; the first Bitbrains window has no days '
                  'before it), the synthetic traces %g day(s) longer with '
                  'the repeat starting after them.%s'
                  % (results['burn_in_days'],
                     results.get('warm_days') or 0,
                     ' The column "cold_start" is the same windows '
                     'without the burn-in: the first days after memmut is '
                     'switched on, every VM packed at once.'
                     if 'cold_start' in results['sources'].get(
                         'bitbrains', {}).get('variants', {})
                     else ''), '']
    else:
        lines += ['Cold start: no burn-in (every VM packed at once at the '
                  'start of each repeat).', '']
    for source in ('synthetic', 'bitbrains'):
        block = results['sources'].get(source)
        if not block:
            continue
        lines += ['## %s: %s' % (source, block['description']), '']
        names = ['default'] + sorted(block.get('variants', {}))
        rows = []
        for key, label, _, _, spec, scale, unit in HEADLINES:
            row = [label]
            for name in names:
                s = (block['summary'] if name == 'default'
                     else block['variants'][name]['summary']).get(key)
                row.append(discipline.fmt(s, spec, scale, unit) if s
                           else '-')
            rows.append(row)
        lines += [discipline.markdown_table(['figure'] + names, rows), '']
    if results.get('goals'):
        lines += ['## Goals (met only if the whole interval is inside)', '']
        lines += [discipline.markdown_table(
            ['goal', 'value', 'target', 'met'],
            [[k, g['value'], g['goal'], 'yes' if g['met'] else 'NO']
             for k, g in results['goals'].items()]), '']
    d = results['discipline']
    lines += ['Load average before %s, after %s; versions: %s.'
              % (d['load_before'], d['load_after'],
                 ', '.join('%s %s' % kv for kv in d['versions'].items())),
              '']
    return '\n'.join(lines)


def scaling_main():
    """Only the scaling curve, into results/consolidation/."""
    os.makedirs(SWEEP_OUT, exist_ok=True)
    rec = discipline.Record(seed=0, repeats=3)
    sets = {}
    # Each set with its history: Neat's 100 samples, the defaults'
    # history_length (a day).
    default_history = common.private_conf().consolidation.history_length
    for name, spec, plain_up_to, history in (
            ('neat', loader.AlgorithmSpec.neat(), 3000, 100),
            ('default', loader.AlgorithmSpec(), 0, default_history)):
        sys.stderr.write('%s set (%d samples of history):\n'
                         % (name, history))
        rows = measure_scaling(SCALING_HOSTS, spec=spec,
                               plain_up_to=plain_up_to, history=history,
                               kept=name == 'default')
        sets[name] = scaling_results(rows)
        sets[name]['algorithms'] = {k: n for k, (n, _)
                                    in spec.effective().items()}
        sets[name]['history_length'] = history
    rec.finish()
    out = {'sets': sets,
           'command': ('python -m tests.benchmarks.bench_consolidation '
                       '--scaling-only'),
           'discipline': rec.as_dict()}
    report.write_json(os.path.join(SWEEP_OUT, 'planner_scaling.json'), out)
    plot_scaling(sets['neat']['rows'],
                 os.path.join(SWEEP_OUT, 'planner_scaling.png'),
                 sets['default']['rows'])
    for name, d in sets.items():
        rows = d['rows']
        print('%s set: exponent (CPU time) %.2f, wall %.2f; without the '
              'session %s; 10 000 hosts: %.3f s CPU, %.3f s wall'
              % (name, d['exponent_cpu'], d['exponent_wall'],
                 '%.2f' % d['exponent_plain_cpu']
                 if d['exponent_plain_cpu'] else '-',
                 rows[-1]['round_cpu_seconds'], rows[-1]['round_seconds']))
        if d.get('exponent_kept_cpu'):
            print('  sums kept between rounds: exponent %.2f; 10 000 '
                  'hosts: %.3f s CPU (same plans: %s)'
                  % (d['exponent_kept_cpu'],
                     rows[-1]['kept_round_cpu_seconds'],
                     all(r['same_plan_kept'] for r in rows)))
    return 0


def bad_arguments(args):
    """Why the main run's arguments cannot be used, or None."""
    if args.window_days <= 0:
        return '--window-days must be positive (got %g)' % args.window_days
    for flag, value in (('--burn-in-days', args.burn_in_days),
                        ('--warm-days', args.warm_days)):
        if value < 0:
            return '%s must be >= 0 (got %g)' % (flag, value)
    if args.synthetic_vms < 1 or args.repeats < 1:
        return '--synthetic-vms and --repeats must be at least 1'
    from tests.benchmarks import consolidation_sweep
    try:
        consolidation_sweep.synthetic_set(args.sweep_profiles)
    except ValueError as e:
        return '--sweep-profiles: %s' % e
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--trace', default=None,
                    help='real trace (default %s when present)'
                    % DEFAULT_TRACE)
    ap.add_argument('--trace-part', default=None,
                    help='the directory of a trace holding several '
                    '(e.g. 2013-8 of the data set\'s rnd.zip)')
    ap.add_argument('--out', default=RESULTS)
    ap.add_argument('--repeats', type=int, default=5,
                    help='synthetic seeds (default 5)')
    ap.add_argument('--window-days', type=float, default=6.0)
    ap.add_argument('--burn-in-days', type=float, default=1.0,
                    help='simulate every repeat that many days before '
                    'its start without accounting them (warm-up '
                    'deletion): the figures of a planner that has been '
                    'running, not of its first packing of every VM at '
                    'once. The first Bitbrains window has no days before '
                    'it; the real trace\'s variant "cold_start" runs '
                    'with none (0: every repeat from a cold start, the '
                    'benchmark before stop 65)')
    ap.add_argument('--warm-days', type=float, default=1.0,
                    help='synthetic traces that many days longer, each '
                    'repeat starting after them: its VMs have that much '
                    'history and the burn-in has days to run on (the '
                    'Bitbrains windows after the first have the month '
                    'before them)')
    ap.add_argument('--synthetic-vms', type=int, default=300,
                    help='VMs of the synthetic trace (default 300)')
    ap.add_argument('--seed', type=int, default=20,
                    help='seed of the case order')
    ap.add_argument('--synthetic-only', action='store_true',
                    help='leave the real trace out even when present')
    ap.add_argument('--skip-variants', action='store_true')
    ap.add_argument('--skip-month', action='store_true')
    ap.add_argument('--skip-scaling', action='store_true')
    ap.add_argument('--scaling-only', action='store_true',
                    help='only the planner scaling curve (writes '
                    'results/consolidation/planner_scaling.json and .png)')
    ap.add_argument('--sweep', action='store_true',
                    help='only the trade-off sweep (issue 19): every '
                    'configuration of tests/benchmarks/consolidation_sweep'
                    '.py on the trace windows and the synthetic profiles; '
                    'writes results/consolidation/tradeoff.*')
    ap.add_argument('--sweep-replot', action='store_true',
                    help='draw the sweep plots again from tradeoff.json')
    ap.add_argument('--sweep-markdown', action='store_true',
                    help='write the Markdown of --sweep-name again from '
                    'its .json and .csv (with the paired differences to '
                    'the defaults), no simulation')
    ap.add_argument('--sweep-seeds', type=int, default=3,
                    help='seeds per synthetic profile in the sweep')
    ap.add_argument('--sweep-first-seed', type=int, default=0,
                    help='first synthetic seed of the sweep (seeds the '
                    'configurations were not chosen on: a held-out '
                    'check)')
    ap.add_argument('--sweep-warm-days', type=float, default=0.0,
                    help='synthetic traces that many days longer, the '
                    'sweep starting after them: every VM present at the '
                    'start has that much history, as on the Bitbrains '
                    'windows after the first (0: every VM new at the '
                    'start)')
    ap.add_argument('--sweep-burn-in-days', type=float, default=0.0,
                    help='simulate every run that many days before its '
                    'start without accounting them (warm-up deletion: '
                    'the figures are then those of a planner that has '
                    'been running, not of its first packing; with '
                    '--sweep-warm-days at least as long, the synthetic '
                    'traces have the data for it)')
    ap.add_argument('--sweep-configs', default='',
                    help='only the sweep configurations whose names '
                    'contain one of these comma-separated words (plus '
                    '"wss default" and "booked pre-19 (Neat)")')
    ap.add_argument('--sweep-profiles', default='tuned',
                    help='the sweep\'s synthetic profiles: comma-separated '
                    'names, "tuned" (the five the defaults were chosen '
                    'on) or "held-out" (churn, heavy_tail, memory_growth: '
                    'none chosen on)')
    ap.add_argument('--sweep-name', default='tradeoff',
                    help='base name of the sweep\'s files in '
                    'results/consolidation/')
    args = ap.parse_args(argv)
    if args.sweep_replot:
        from tests.benchmarks import consolidation_sweep
        consolidation_sweep.replot(SWEEP_OUT)
        return 0
    if args.sweep_markdown:
        from tests.benchmarks import consolidation_sweep
        try:
            print(consolidation_sweep.remarkdown(SWEEP_OUT,
                                                 args.sweep_name))
        except FileNotFoundError as e:
            sys.stderr.write(
                'bench_consolidation: error: no sweep named %r in %s '
                '(%s)\n' % (args.sweep_name, SWEEP_OUT, e.strerror))
            return 2
        return 0
    if args.scaling_only:
        return scaling_main()
    problem = bad_arguments(args)
    if problem:
        sys.stderr.write('bench_consolidation: error: %s\n' % problem)
        return 2
    os.makedirs(args.out, exist_ok=True)
    t_all = time.perf_counter()
    rec = discipline.Record(seed=args.seed, repeats=args.repeats)

    conf = common.private_conf()
    settings = engine.settings_from_conf(conf, 0.0, 300.0)
    real = None
    path = args.trace or (DEFAULT_TRACE if os.path.exists(DEFAULT_TRACE)
                          else None)
    if args.synthetic_only:
        path = None
    load_s = None
    if path:
        t0 = time.perf_counter()
        try:
            real = trace_mod.load_bitbrains(path, part=args.trace_part)
        except trace_mod.TraceError as e:
            sys.stderr.write('bench_consolidation: error: %s\n' % e)
            return 2
        load_s = time.perf_counter() - t0
        sys.stderr.write('trace: %(vms)d VMs, %(days)s days\n'
                         % real.summary())
    elif not args.synthetic_only:
        sys.stderr.write('bench_consolidation: no trace at %s: synthetic '
                         'inputs only\n' % DEFAULT_TRACE)
    if args.sweep:
        from tests.benchmarks import consolidation_sweep
        command = ('python -m tests.benchmarks.bench_consolidation '
                   + shlex.join(argv if argv is not None else sys.argv[1:]))
        return consolidation_sweep.main(real, settings, args, rec,
                                        SWEEP_OUT, command)

    variants = {}
    if not args.skip_variants:
        variants = {
            # rounds every 30 min, planning on histories binned to the
            # interval as the controller's (the default), and on every
            # trace step's (finer than the controller has: the variant
            # as it was measured before 2026-11-30)
            'interval_1800s': dataclasses.replace(settings,
                                                  interval=1800.0),
            'interval_1800s_trace': dataclasses.replace(
                settings, interval=1800.0, history_resolution='trace'),
            # the interval's CPU peak instead of its mean
            # ([consolidation] cpu_interval_statistic = peak)
            'interval_1800s_peak': dataclasses.replace(
                settings, interval=1800.0, cpu_interval_statistic='peak'),
            'wss_error_badis': dataclasses.replace(
                settings, wss_error=quality.error_model_from_file(
                    BADIS_RESULTS)),
            'wss_error_normal_30pct': dataclasses.replace(
                settings, wss_error=quality.ErrorModel(relative_sd=0.3)),
            'migration_1gbe': dataclasses.replace(settings,
                                                  bandwidth_mb_s=119.0),
        }
        if args.burn_in_days:
            # the same windows from a cold start: what the first days of
            # a cloud that just switched memmut on look like
            variants['cold_start'] = settings

    cases = [('synthetic', s, 'default') for s in range(args.repeats)]
    parts = {}
    if real is not None:
        parts = dict(enumerate(windows(real, args.window_days)))
        for name in ['default'] + sorted(variants):
            cases += [('bitbrains', k, name) for k in parts]
    order = rec.order([list(c) for c in cases], repeats=1)
    values = {}
    for (source, key, variant), _ in order:
        s = settings if variant == 'default' else variants[variant]
        burn_in = 0.0 if variant == 'cold_start' else args.burn_in_days
        if source == 'synthetic':
            tr, s = synthetic_repeat(key, args.synthetic_vms,
                                     args.warm_days, s)
            label = 'seed %d' % key
        else:
            start_day, first, steps = parts[key]
            tr = real
            s = dataclasses.replace(s, start_steps=first,
                                    duration_steps=steps)
            label = 'days %g-%g' % (start_day,
                                    start_day + args.window_days)
        s = dataclasses.replace(s, burn_in_steps=int(round(
            burn_in * 86400.0 / tr.step)))
        t0 = time.perf_counter()
        metrics, comp = run_modes(tr, s)
        fig = figures(metrics, comp)
        values.setdefault((source, variant), []).append(
            {'repeat': label, 'figures': fig,
             'detail': brief(metrics, comp)})
        sys.stderr.write('  %-9s %-22s %-12s ratio %.2fx (bounds %.2fx) '
                         'wss hosts %.2f / bound %.2f  %.0f s\n'
                         % (source, variant, label, fig['ratio'],
                            fig['lb_ratio'], fig['wss_hosts'],
                            fig['wss_lb'], time.perf_counter() - t0))

    sources = {}
    for source, desc in (
            ('synthetic', 'built-in synthetic trace, %d VMs, %g days, '
             'seeds 0-%d%s' % (args.synthetic_vms, SYNTHETIC_DAYS,
                               args.repeats - 1,
                               ', after %g warm days' % args.warm_days
                               if args.warm_days else '')),
            ('bitbrains', '%s, %g-day windows' % (
                os.path.basename(path or ''), args.window_days))):
        runs = values.get((source, 'default'))
        if not runs:
            continue
        block = {'description': desc,
                 'summary': summarize([r['figures'] for r in runs]),
                 'repeats': sorted(runs, key=lambda r: r['repeat'])}
        vs = {}
        for name in variants:
            vr = values.get((source, name))
            if vr:
                vs[name] = {'summary': summarize([r['figures']
                                                  for r in vr]),
                            'repeats': sorted(vr,
                                              key=lambda r: r['repeat'])}
        if vs:
            block['variants'] = vs
        sources[source] = block

    results = {
        'command': ('python -m tests.benchmarks.bench_consolidation '
                    + shlex.join(argv if argv is not None
                                 else sys.argv[1:])),
        'hosts': dataclasses.asdict(settings.hosts),
        'algorithms': {k: {'name': n, 'parameters': p} for k, (n, p)
                       in settings.spec.effective().items()},
        'plan': {'underload_combination':
                 settings.plan.underload_combination,
                 'max_overload_moves': settings.plan.max_overload_moves,
                 'underload_grace_rounds':
                 settings.plan.underload_grace_rounds},
        'memory': {'wss_average_window': settings.wss_average_window,
                   'wss_time_slice_s': settings.wss_time_slice,
                   'headroom_mb': settings.headroom_mb,
                   'headroom_fraction': settings.headroom_fraction,
                   'missing_carry_seconds': settings.missing_carry_seconds},
        'rounds': {'interval_s': settings.interval,
                   'migration_bandwidth_mb_s': settings.bandwidth_mb_s,
                   'migration_concurrency': settings.migration_concurrency,
                   'migration_incoming_concurrency':
                       settings.migration_incoming_concurrency,
                   'migration_parallel': settings.migration_parallel,
                   'round_pacing': settings.round_pacing,
                   'migration_cpu_mhz': settings.migration_cpu_mhz},
        'variants': {k: {'interval_s': v.interval,
                         'migration_bandwidth_mb_s': v.bandwidth_mb_s,
                         'wss_error': v.wss_error.describe()}
                     for k, v in variants.items()},
        'sources': sources,
        'burn_in_days': args.burn_in_days,
        'warm_days': args.warm_days,
    }

    main_src = sources.get('bitbrains') or sources.get('synthetic')
    summ = main_src['summary']
    goals = {
        'active_host_ratio': goal_row(
            'active-host ratio booked / WSS', summ['ratio'],
            low=GOALS['active_host_ratio_min'], unit='x', spec='.2f'),
        'memory_caused_share_wss': goal_row(
            'WSS migrations caused by memory', summ['wss_memory_share'],
            high=GOALS['memory_caused_share_max'], scale=100, unit=' %',
            spec='.2f'),
        'memory_overload_time_wss': goal_row(
            'WSS memory overload (host time)', summ['wss_mem_overload'],
            high=GOALS['memory_overload_time_max'], scale=100, unit=' %',
            spec='.3f'),
        'migrations_per_vm_day_wss': goal_row(
            'WSS migrations per VM-day', summ['wss_mig_vm_day'],
            high=GOALS['migrations_per_vm_day_max'], spec='.3f'),
        'cpu_overload_time_wss': goal_row(
            'WSS CPU overload (host time)', summ['wss_cpu_overload'],
            high=GOALS['cpu_overload_time_max'], scale=100, unit=' %',
            spec='.3f'),
        'above_lower_bound_wss': goal_row(
            'WSS active hosts above the per-step lower bound',
            summ['wss_over_lb_pct'], high=GOALS['above_lower_bound_max'],
            scale=100, unit=' %', spec='.1f'),
    }
    files = []
    if real is not None and not args.skip_month:
        t0 = time.perf_counter()
        metrics, series = {}, {}
        for mode in engine.MODES:
            metrics[mode], series[mode] = engine.simulate(real, mode,
                                                          settings)
        wall = time.perf_counter() - t0 + load_s
        comp = engine.compare(metrics)
        results['month'] = brief(metrics, comp)
        results['month']['wall_seconds_both_modes'] = wall
        results['month']['trace_load_seconds'] = load_s
        results['trace'] = real.summary()
        goals['wall_seconds_month_both_modes'] = {
            'figure': 'whole month, both modes (s)', 'value': '%.0f' % wall,
            'mean': wall, 'goal': '<= %g' % GOALS['wall_seconds_max'],
            'met': wall <= GOALS['wall_seconds_max']}
        files = report.plot(args.out, series, metrics,
                            prefix='consolidation_')
        print('month, both modes, %.0f s (trace read in %.0f s)'
              % (wall, load_s))
        for line in report.summary_lines({'modes': metrics,
                                          'comparison': comp}):
            print('  ' + line)
    results['goals'] = goals

    if not args.skip_scaling:
        rows = measure_scaling(SCALING_HOSTS, spec=loader.AlgorithmSpec.neat())
        results['scaling'] = scaling_results(rows)
        p = os.path.join(args.out, 'consolidation_scaling.png')
        plot_scaling(rows, p)
        files.append(p)

    rec.finish()
    results['discipline'] = rec.as_dict()
    results['total_wall_seconds'] = time.perf_counter() - t_all
    results['files'] = [os.path.relpath(f, ROOT) for f in files]
    report.write_json(os.path.join(args.out, 'consolidation.json'), results)
    with open(os.path.join(args.out, 'consolidation.md'), 'w') as f:
        f.write(markdown(results))

    for source, block in sources.items():
        print('%s (%s):' % (source, block['description']))
        for key, label, _, _, spec, scale, unit in HEADLINES:
            s = block['summary'].get(key)
            if s:
                print('  %-44s %s' % (label, discipline.fmt(s, spec, scale,
                                                            unit)))
    for k, g in goals.items():
        print('  goal %-30s %-24s %-10s %s' % (k, g['value'], g['goal'],
                                               'met' if g['met'] else
                                               'NOT MET'))
    print('results in %s' % os.path.relpath(args.out, os.getcwd()))
    return 0


if __name__ == '__main__':
    sys.exit(main())
