"""How far the per-step lower bound is from any planner (issue 19, part 6).

The issue's goal puts active hosts within 15 % of the per-step lower
bound, ``max(ceil(CPU / host CPU), ceil(memory / host memory))`` per
step (:func:`memmut.simulator.quality.lower_bound`). That bound packs
every step anew, for free, with VMs split like a fluid and hosts filled
to 100 %. This module measures, on the sweep's inputs (the Bitbrains
windows and the synthetic profiles, :mod:`tests.benchmarks.
consolidation_sweep`), how much of the gap between the planner and the
bound each of those idealisations accounts for, with a ladder of
references computed in hindsight from the same demands the simulator
accounts (CPU, and WSS^max_avg plus headroom):

1. ``lower_bound``: the issue's bound;
2. ``ffd``: a 2-D first-fit-decreasing packing of the step's VMs into
   whole hosts at 100 % (integral VMs; FFD is within 11/9 of the
   optimum in one dimension, so this is a reference, not a bound);
3. ``ffd_target``: the same at the placement's fill targets (CPU 0.8,
   memory 0.95): a planner that leaves the headroom its overload
   threshold needs;
4. ``held_1h`` and ``held_1d``: ``ffd_target`` held over one-hour and
   one-day blocks (each step gets its block's largest): a planner that
   keeps its placement for an hour, or a day, must fit the block's
   largest demand. The default underload forecast (a day-long peak)
   makes the planner behave closer to the day than to the hour;
5. ``bound_held_1h`` and ``bound_held_1d``: the issue's bound itself
   (fluid VMs, hosts at 100 %) held over one-hour and one-day blocks. A
   true lower bound, not a reference: a placement that stays put for a
   block without overloading a host needs, on every host, the block's
   largest sum of its VMs, and the hosts' sum of those is at least the
   block's largest total. Where it is already more than 15 % above the
   per-step bound, no planner that moves its VMs less than once per
   block can meet the issue's distance goal (without overload);
6. ``budget``: the bound for any planner within the issue's other two
   goals' budgets, migrations (0.15 per VM-day) and CPU overload (0.3 %
   of the host time a planner meeting the distance goal keeps on), on
   CPU alone (:mod:`memmut.simulator.budget_bound`). A planner may move
   a few VMs every hour and leave a host overloaded now and then, which
   the held bounds forbid; where this rung is within 15 % of the
   per-step bound, the three goals are not shown to exclude each other;
7. ``two_tier``: a plan made in hindsight within the migration budget,
   at the placement's fill targets and without CPU overload
   (:mod:`tests.benchmarks.hindsight_plan`: the VMs of most CPU packed
   anew every block, the others never moved), the best of a few heavy
   counts and block lengths. A plan, not a bound: what a planner that
   knew the trace and spent its budget the way the bound suggests
   would keep on;
8. ``sticky`` and ``sticky_target``: a clairvoyant re-packing every
   hour or four (:func:`tests.benchmarks.hindsight_plan.sticky_plan`:
   VMs move only when their host would overflow in the coming block or
   to empty a host, the latter while the budget allows), at 100 % and at
   the targets, within the migration budget and without overload. Also
   plans, not bounds: what knowing the trace buys a planner held to the
   budget.

Then the planner's active hosts (the ``wss default`` rows of a sweep
CSV, same inputs) against each rung. Writes
``tests/benchmarks/results/consolidation/bounds.{json,md}``. Run::

    python -m tests.benchmarks.consolidation_bounds \
        [--sweep-csv results/consolidation/tradeoff_budget.csv]
        [--trace PATH [--trace-part DIR] --seeds 0 --name bounds_<month>]

Another month of the data set (``--trace``) gets the references and
bounds alone, unless a sweep CSV of the same inputs gives the planner's
hosts. The held-out synthetic profiles (stop 80)::

    python -m tests.benchmarks.consolidation_bounds --synthetic-only \
        --profiles held-out --seeds 8 --name bounds_heldout \
        --sweep-csv tests/benchmarks/results/consolidation/heldout80_cold.csv
"""

import argparse
import dataclasses
import json
import os
import shlex
import sys

import numpy as np

from memmut.simulator import budget_bound
from memmut.simulator import engine
from memmut.simulator import quality
from memmut.simulator import trace as trace_mod
from memmut.consolidation import wss as wss_mod
from tests.benchmarks import bench_consolidation as bench
from tests.benchmarks import consolidation_sweep as sweep
from tests.benchmarks import hindsight_plan
from tests.benchmarks import discipline
from tests import common

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, 'results', 'consolidation')
ROOT = os.path.dirname(os.path.dirname(HERE))
TRACE = os.path.join(os.path.dirname(ROOT), 'shared', 'traces',
                     'bitbrains-rnd-2013-7.tar.gz')
RUNGS = ('lower_bound', 'budget', 'bound_held_1h', 'bound_held_1d', 'ffd',
         'ffd_target', 'held_1h', 'held_1d', 'sticky', 'sticky_target',
         'two_tier')


def ffd_hosts(cpu, mem, host_cpu, host_mem):
    """Hosts a 2-D first-fit-decreasing packing uses for one step's VMs
    (largest normalized size first, each into the first host it fits)."""
    c = np.asarray(cpu, dtype=float) / host_cpu
    m = np.asarray(mem, dtype=float) / host_mem
    keep = (c > 0) | (m > 0)
    c, m = c[keep], m[keep]
    order = np.argsort(-np.maximum(c, m), kind='stable')
    free_c = np.zeros(len(c))
    free_m = np.zeros(len(c))
    n = 0
    eps = 1e-9
    for i in order:
        fits = np.flatnonzero((free_c[:n] >= c[i] - eps) &
                              (free_m[:n] >= m[i] - eps))
        if len(fits):
            h = fits[0]
        else:
            h = n
            n += 1
            free_c[h], free_m[h] = 1.0, 1.0
        free_c[h] -= c[i]
        free_m[h] -= m[i]
    return n


def ladder(trace, settings, start, steps):
    """Per-step series of every rung over the steps the simulator
    accounts (mirrors :func:`memmut.simulator.engine.simulate`)."""
    model = settings.hosts
    trace, _ = quality.reject_oversize(trace, model.cpu_mhz,
                                       model.memory_mb)
    clean = quality.clean_memory(trace, settings.missing_carry_seconds)
    d_mem, _ = engine.memory_series(trace, 'wss', settings, clean.mem)
    alive = trace.alive()
    w = wss_mod.slice_samples(settings.wss_time_slice, trace.step)
    s0 = min(max(w - 1, start), max(0, trace.n_steps - 2))
    end = trace.n_steps - 1
    if steps:
        end = min(end, s0 + steps)
    sl1 = slice(s0 + 1, end + 1)
    cpu, mem, ok = trace.cpu[:, sl1], d_mem[:, sl1], alive[:, sl1]
    c_t, m_t = engine.placement_targets(settings.spec)
    out = {'lower_bound': quality.lower_bound(
        cpu, mem, ok, model.cpu_mhz, model.memory_mb)[0]}
    ffd, ffd_t = [], []
    for k in range(cpu.shape[1]):
        a = ok[:, k]
        ffd.append(ffd_hosts(cpu[a, k], mem[a, k], model.cpu_mhz,
                             model.memory_mb))
        ffd_t.append(ffd_hosts(cpu[a, k], mem[a, k], model.cpu_mhz * c_t,
                               model.memory_mb * m_t))
    out['ffd'] = np.array(ffd, dtype=float)
    out['ffd_target'] = np.array(ffd_t, dtype=float)
    hour = max(1, int(round(3600.0 / trace.step)))
    out['held_1h'] = quality.held_lower_bound(out['ffd_target'], hour)
    out['held_1d'] = quality.held_lower_bound(out['ffd_target'], 24 * hour)
    out['bound_held_1h'] = quality.held_lower_bound(out['lower_bound'], hour)
    out['bound_held_1d'] = quality.held_lower_bound(out['lower_bound'],
                                                    24 * hour)
    goals = bench.GOALS
    budgets = budget_bound.goal_budgets(
        ok, trace.step, goals['migrations_per_vm_day_max'],
        goals['cpu_overload_time_max'],
        (1 + goals['above_lower_bound_max']) * out['lower_bound'].sum())
    found = budget_bound.budget_bound(cpu, ok, model.cpu_mhz, budgets,
                                      trace.step)
    out = {k: float(v.mean()) for k, v in out.items()}
    out['budget'] = found.mean_hosts
    out['budget_block_steps'] = found.block_steps
    out['budget_migrations'] = budgets.migrations
    out['budget_overloaded_host_steps'] = budgets.overloaded_host_steps
    plan = hindsight_plan.best_plan(cpu, mem, ok, model.cpu_mhz * c_t,
                                    model.memory_mb * m_t,
                                    budgets.migrations)
    out['two_tier'] = plan.mean_hosts
    out['two_tier_heavy'] = plan.heavy
    out['two_tier_block_steps'] = plan.block_steps
    out['two_tier_migrations'] = plan.migrations
    for name, c_f, m_f in (('sticky', 1.0, 1.0),
                           ('sticky_target', c_t, m_t)):
        plan = hindsight_plan.best_sticky(cpu, mem, ok, model.cpu_mhz * c_f,
                                          model.memory_mb * m_f,
                                          budgets.migrations)
        out[name] = plan.mean_hosts if plan else float('nan')
        out[name + '_migrations'] = plan.migrations if plan else None
        out[name + '_block_steps'] = plan.block_steps if plan else None
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--trace', default=None,
                    help='real trace (default %s when present)' % TRACE)
    ap.add_argument('--trace-part', default=None,
                    help='the directory of a trace holding several '
                    '(e.g. 2013-8 of the data set\'s rnd.zip)')
    ap.add_argument('--sweep-csv', default=None,
                    help='a sweep\'s CSV with the planner\'s active hosts '
                    'on the same inputs (default, for the default trace: '
                    'results/consolidation/tradeoff_budget.csv; another '
                    'trace has no planner rows unless one is named)')
    ap.add_argument('--config', default='wss default')
    ap.add_argument('--window-days', type=float, default=6.0)
    ap.add_argument('--seeds', type=int, default=3,
                    help='synthetic seeds per profile (0: none)')
    ap.add_argument('--profiles', default='tuned',
                    help='the synthetic profiles, as the sweep\'s '
                    '--sweep-profiles (default: the five tuned ones; '
                    '"held-out" for churn, heavy_tail, memory_growth)')
    ap.add_argument('--synthetic-only', action='store_true',
                    help='leave the real trace out')
    ap.add_argument('--name', default='bounds',
                    help='base name of the result files in %s' % OUT)
    args = ap.parse_args(argv)
    if args.window_days <= 0 or args.seeds < 0:
        sys.stderr.write('consolidation_bounds: error: --window-days must '
                         'be positive and --seeds not negative\n')
        return 2
    try:
        profiles = sweep.synthetic_set(args.profiles)
    except ValueError as e:
        sys.stderr.write('consolidation_bounds: error: --profiles: %s\n'
                         % e)
        return 2
    path = args.trace or (TRACE if os.path.exists(TRACE) else None)
    if args.synthetic_only:
        path = None
    sweep_csv = args.sweep_csv
    if sweep_csv is None and path == TRACE:
        sweep_csv = os.path.join(OUT, 'tradeoff_budget.csv')
    hosts = {}
    if sweep_csv:
        if not os.path.exists(sweep_csv):
            sys.stderr.write('consolidation_bounds: error: no sweep CSV '
                             'at %s\n' % sweep_csv)
            return 2
        hosts = {(r['group'], r['input']): r['hosts']
                 for r in sweep.read_csv(sweep_csv)
                 if r['config'] == args.config}
    conf = common.private_conf()
    base = engine.settings_from_conf(conf, 0.0, 300.0)
    real = None
    if path:
        try:
            real = trace_mod.load_bitbrains(path, part=args.trace_part)
        except trace_mod.TraceError as e:
            sys.stderr.write('consolidation_bounds: error: %s\n' % e)
            return 2
    per = []
    for group, label, tr, start, steps in sweep.inputs(
            real, args.window_days, args.seeds, profiles=profiles):
        if isinstance(tr, tuple):
            tr = sweep.synthetic_trace(tr)
        s = dataclasses.replace(base, start_steps=start,
                                duration_steps=steps)
        r = ladder(tr, s, start, steps)
        r.update(group=group, input=label,
                 hosts=hosts.get((group, label)))
        per.append(r)
        sys.stderr.write('%-24s %-10s %s\n' % (group, label, ' '.join(
            '%s %.2f' % (k, r[k]) for k in RUNGS + ('hosts',)
            if r[k] is not None)))
    summary = {}
    for group in sorted({r['group'] for r in per}):
        sel = [r for r in per if r['group'] == group]
        d = {k: discipline.summarize([r[k] for r in sel])
             for k in RUNGS}
        if all(r['hosts'] is not None for r in sel):
            d['hosts'] = discipline.summarize([r['hosts'] for r in sel])
            for k in RUNGS:
                d['over_' + k] = discipline.summarize(
                    [r['hosts'] / r[k] - 1 for r in sel])
        summary[group] = d
    result = {'command': 'python -m tests.benchmarks.consolidation_bounds '
                         + shlex.join(argv if argv is not None
                                      else sys.argv[1:]),
              'trace': real.source if real is not None else None,
              'sweep_csv': (os.path.relpath(sweep_csv, ROOT) if sweep_csv
                            else None),
              'config': args.config, 'rows': per, 'summary': summary,
              'versions': discipline.versions()}
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, args.name + '.json'), 'w') as f:
        json.dump(sweep._sig(result), f, indent=1, sort_keys=True)
        f.write('\n')
    md = markdown(result)
    with open(os.path.join(OUT, args.name + '.md'), 'w') as f:
        f.write(md)
    print(md)
    return 0


def markdown(result):
    names = {'lower_bound': 'per-step lower bound (the goal\'s)',
             'budget': 'bound within the migration and CPU-overload '
                       'goals (a bound, CPU only)',
             'ffd': 'hindsight FFD, 100 %',
             'ffd_target': 'hindsight FFD at the targets',
             'held_1h': 'FFD at the targets held 1 h',
             'held_1d': 'FFD at the targets held 1 day',
             'sticky': 'clairvoyant re-packing within the migration '
                       'budget, 100 %',
             'sticky_target': 'clairvoyant re-packing within the '
                              'migration budget, at the targets',
             'two_tier': 'hindsight plan within the migration budget, '
                         'at the targets (heavy VMs re-packed, the '
                         'rest never moved)',
             'bound_held_1h': 'per-step bound held 1 h (a bound)',
             'bound_held_1d': 'per-step bound held 1 day (a bound)'}
    lines = ['# Active hosts against the lower bound and hindsight '
             'packings (issue 19)', '',
             'Command: `%s` (%s).' % (
                 result['command'],
                 'active hosts: the `%s` rows of `%s`' % (
                     result['config'], result['sweep_csv'])
                 if result.get('sweep_csv') else
                 'no planner rows: no sweep CSV for this trace'),
             '', 'Mean ± 95 % interval over each group\'s inputs of the '
             'mean over the accounted steps. "planner above": active '
             'hosts / reference - 1. FFD rungs are hindsight packings '
             '(every step packed anew, migrations free), not bounds; '
             'the held bounds are lower bounds for a placement kept for '
             'the block without overload; the bound within the goals\' '
             'budgets is a lower bound for any planner that spends no '
             'more migrations and CPU overload than the goals allow; '
             'the clairvoyant re-packing and the hindsight plan are '
             'plans made knowing the trace, within the migration budget '
             'and without overload, not bounds: see the module '
             'documentation.', '']
    for group, d in result['summary'].items():
        lines += ['## %s' % group, '',
                  '| reference | hosts | planner above it |',
                  '|---|---|---|']
        for k in RUNGS:
            lines.append('| %s | %s | %s |' % (
                names[k], discipline.fmt(d[k], '.2f'),
                discipline.fmt(d['over_' + k], '.1f', 100, ' %')
                if 'over_' + k in d else '-'))
        if 'hosts' in d:
            lines.append('| **planner (%s)** | %s | |' % (
                result['config'], discipline.fmt(d['hosts'], '.2f')))
        lines.append('')
    return '\n'.join(lines)


if __name__ == '__main__':
    sys.exit(main())
