"""Benchmark: consolidation on the real Bitbrains month (issue 6).

Replays ``bitbrains-rnd-2013-7.tar.gz`` (500 VMs, 30 days, 300 s samples;
read in place, never copied) through memmut-sim's engine with the default
options, packing VMs on their booked memory (Neat) and on WSS^max_avg
(memmut), and compares the result with the goals of issue 6:

* active-host ratio booked / WSS >= 2.5 (seed 004: 2.04 on a Google trace);
* share of migrations caused by memory <= 3 % (seed: 3.17 %);
* host time with used memory above capacity <= 0.2 %;
* the whole month, both modes, in <= 10 minutes.

Then three sensitivity runs of the month (each changes one thing): hosts
with 128 GiB and with 512 GiB of memory instead of 256 GiB, and Neat's own
``minimum_migration_time_max_cpu`` VM selection instead of memmut's
default. Last, the time one round of planning takes with 100 to 10 000
simulated hosts (5 VMs per host, 100-sample histories, a mix of loaded,
overloaded and underloaded hosts).

Writes tests/benchmarks/results/consolidation.json,
consolidation_{active_hosts,migrations,memory,scaling}.png and prints a
summary. Run by hand (about 5 minutes on 2 cores)::

    /tmp/venv/bin/python -m tests.benchmarks.bench_consolidation \
        [--trace PATH] [--skip-sensitivity] [--skip-scaling]

Exit code 2 with a one-line error if the trace cannot be read.
"""

import argparse
import dataclasses
import os
import platform
import sys
import time

import numpy as np

from memmut.consolidation import loader
from memmut.consolidation import planner
from memmut.simulator import engine
from memmut.simulator import report
from memmut.simulator import trace as trace_mod
from tests import common

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RESULTS = os.path.join(HERE, 'results')
DEFAULT_TRACE = os.path.join(os.path.dirname(ROOT), 'shared', 'traces',
                             'bitbrains-rnd-2013-7.tar.gz')
GOALS = {
    'active_host_ratio_min': 2.5,
    'memory_caused_share_max': 0.03,
    'memory_overload_time_max': 0.002,
    'wall_seconds_max': 600.0,
}
SCALING_HOSTS = (100, 300, 1000, 3000, 10000)


def progress_printer(label):
    state = {'pct': -10}

    def show(done, total, snap):
        pct = 100 * done // max(1, total)
        if pct >= state['pct'] + 10 or done == total:
            state['pct'] = pct
            sys.stderr.write('  [%s] %3d%%  active hosts %d  migrations %d '
                             '(memory %d)\n' % (label, pct,
                                                snap['active_hosts'],
                                                snap['migrations'],
                                                snap['memory_migrations']))
    return show


def run_month(trace, settings, label):
    metrics, series = {}, {}
    for mode in engine.MODES:
        metrics[mode], series[mode] = engine.simulate(
            trace, mode, settings, progress_printer('%s %s' % (label, mode)))
    return metrics, series, engine.compare(metrics)


def brief(metrics, comparison):
    keep = ('avg_active_hosts', 'max_active_hosts', 'migrations',
            'memory_caused_migrations', 'memory_caused_share',
            'migrations_by_cause', 'memory_overload_host_time_fraction',
            'memory_overload_any_host_time_fraction',
            'cpu_overload_host_time_fraction', 'energy_kwh',
            'oversize_vms', 'failed_placements', 'mean_round_ms',
            'max_round_ms', 'wall_seconds')
    out = {m: {k: v[k] for k in keep} for m, v in metrics.items()}
    out['comparison'] = comparison
    return out


# ---------------------------------------------------------------------------
# Planning time vs number of hosts


def scaling_round(n_hosts, vms_per_host=5, history=100, seed=0):
    """Hosts and VMs for one planning round of ``n_hosts`` hosts.

    Host CPU loads are spread so that about 5 % of hosts are overloaded
    (above 0.9), 20 % underloaded (below 0.5) and the rest in between;
    10 % of the hosts are suspended (targets for overloads).
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
            wss = float(rng.uniform(1024, 16384))
            vms.append(planner.PlannerVM('vm-%d-%d' % (h, k), name, cpu,
                                         wss * 1.05, np.full(history, wss)))
    return hosts, vms


def measure_scaling(host_counts, repeat=3):
    algos = loader.build_all(loader.AlgorithmSpec(), 300.0, 60.0)
    rows = []
    for n in host_counts:
        hosts, vms = scaling_round(n)
        times, plan = [], None
        for _ in range(repeat if n <= 1000 else 1):
            t0 = time.perf_counter()
            plan = planner.plan_round(hosts, vms, algos)
            times.append(time.perf_counter() - t0)
        rows.append({'hosts': n, 'vms': len(vms),
                     'round_seconds': min(times),
                     'overloaded': len(plan.overloaded),
                     'underloaded': len(plan.underloaded),
                     'migrations': len(plan.migrations)})
        sys.stderr.write('  scaling: %5d hosts, %6d VMs: %.3f s per round '
                         '(%d migrations)\n' % (n, len(vms), min(times),
                                                len(plan.migrations)))
    return rows


def plot_scaling(rows, path):
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    x = [r['hosts'] for r in rows]
    y = [r['round_seconds'] for r in rows]
    ax.loglog(x, y, 'o-', label='measured')
    ax.loglog(x, [y[0] * n / x[0] for n in x], ':', color='grey',
              label='linear from 100 hosts')
    ax.set_xlabel('simulated hosts (5 VMs each)')
    ax.set_ylabel('seconds per planning round')
    ax.set_title('Planning time of one consolidation round')
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--trace', default=DEFAULT_TRACE)
    ap.add_argument('--out', default=RESULTS)
    ap.add_argument('--skip-sensitivity', action='store_true')
    ap.add_argument('--skip-scaling', action='store_true')
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    t0 = time.perf_counter()
    try:
        trace = trace_mod.load_bitbrains(args.trace)
    except trace_mod.TraceError as e:
        sys.stderr.write('bench_consolidation: error: %s\n' % e)
        return 2
    load_s = time.perf_counter() - t0
    sys.stderr.write('trace: %(vms)d VMs, %(days)s days\n' % trace.summary())

    conf = common.private_conf()
    settings = engine.settings_from_conf(conf, 0.0, trace.step)
    metrics, series, comparison = run_month(trace, settings, 'month')
    wall = time.perf_counter() - t0
    w = metrics['wss']
    ratio = comparison['active_host_ratio_booked_over_wss']
    goals = {
        'active_host_ratio': {
            'value': ratio, 'goal': '>= %g' % GOALS['active_host_ratio_min'],
            'met': ratio >= GOALS['active_host_ratio_min'], 'seed': 2.04},
        'memory_caused_share_wss': {
            'value': w['memory_caused_share'],
            'goal': '<= %g' % GOALS['memory_caused_share_max'],
            'met': w['memory_caused_share'] <=
            GOALS['memory_caused_share_max'], 'seed': 0.0317},
        'memory_overload_time_wss': {
            'value': w['memory_overload_host_time_fraction'],
            'goal': '<= %g' % GOALS['memory_overload_time_max'],
            'met': w['memory_overload_host_time_fraction'] <=
            GOALS['memory_overload_time_max']},
        'wall_seconds_month_both_modes': {
            'value': wall, 'goal': '<= %g' % GOALS['wall_seconds_max'],
            'met': wall <= GOALS['wall_seconds_max'],
            'trace_load_seconds': load_s},
    }
    files = report.plot(args.out, series, metrics, prefix='consolidation_')

    results = {
        'trace': trace.summary(),
        'machine': {'python': platform.python_version(),
                    'cpus': os.cpu_count()},
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
                   'headroom_fraction': settings.headroom_fraction},
        'month': brief(metrics, comparison),
        'goals': goals,
    }

    if not args.skip_sensitivity:
        variants = {
            'host_memory_128gib': dataclasses.replace(
                settings, hosts=dataclasses.replace(settings.hosts,
                                                    memory_mb=131072.0)),
            'host_memory_512gib': dataclasses.replace(
                settings, hosts=dataclasses.replace(settings.hosts,
                                                    memory_mb=524288.0)),
            'neat_selection_mmt_max_cpu': dataclasses.replace(
                settings, spec=dataclasses.replace(
                    settings.spec,
                    vm_selection='minimum_migration_time_max_cpu')),
        }
        results['sensitivity'] = {}
        for name, s in variants.items():
            m, _, c = run_month(trace, s, name)
            results['sensitivity'][name] = brief(m, c)

    if not args.skip_scaling:
        rows = measure_scaling(SCALING_HOSTS)
        results['scaling'] = rows
        path = os.path.join(args.out, 'consolidation_scaling.png')
        plot_scaling(rows, path)
        files.append(path)

    results['total_wall_seconds'] = time.perf_counter() - t0
    results['files'] = [os.path.relpath(f, ROOT) for f in files]
    report.write_json(os.path.join(args.out, 'consolidation.json'), results)

    print('month, both modes, %.0f s (trace read in %.0f s)' % (wall, load_s))
    for line in report.summary_lines({'modes': metrics,
                                      'comparison': comparison}):
        print('  ' + line)
    for k, g in goals.items():
        print('  %-32s %-10.4g goal %-8s %s' % (k, g['value'], g['goal'],
                                                'met' if g['met'] else
                                                'MISSED'))
    for name, r in results.get('sensitivity', {}).items():
        print('  %-28s ratio %.2fx, wss migrations %d (memory %.2f %%), '
              'memory overload %.4f %%'
              % (name, r['comparison'].get(
                  'active_host_ratio_booked_over_wss', 0.0),
                 r['wss']['migrations'],
                 100 * r['wss']['memory_caused_share'],
                 100 * r['wss']['memory_overload_host_time_fraction']))
    print('results in %s' % os.path.relpath(args.out, os.getcwd()))
    return 0


if __name__ == '__main__':
    sys.exit(main())
