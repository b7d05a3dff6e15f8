"""How far the defaults' hosts are from the per-step bound, and why
(issue 19): their CPU now against the peak of the same VMs over a day.

Runs the default configuration on the Bitbrains windows (or, without the
trace, on the synthetic profiles' seeds) with the simulator's
``observer`` and, every ``--every`` samples, reads each active host's
VMs: their summed CPU at that sample (what the per-step lower bound
packs on) and the largest of their summed CPU over the day before (what
a placement held for a day must hold, and what the underload forecast's
``peak_threshold`` looks at). A planner can come near the per-step
bound only by repacking to the first, at the price of migrations; the
gap between the two is what keeps the defaults from it.

Run::

    python -m tests.benchmarks.consolidation_peaks [--trace PATH]

It writes ``results/consolidation/host_peaks.json`` and ``.md``. Counts
and quantiles, not goals.
"""

import argparse
import dataclasses
import json
import os
import shlex
import sys

import numpy as np

from memmut.simulator import engine
from memmut.simulator import trace as trace_mod
from tests import common
from tests.benchmarks import bench_consolidation as bench
from tests.benchmarks import consolidation_sweep as sweep

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'results',
                   'consolidation')
DAY = 288            # samples of 300 s


def host_utilisation(cpu, where, t, cpu_mhz, day=DAY):
    """(now, day peak) per active host at sample ``t``: its VMs' summed
    CPU at ``t`` and the largest of their summed CPU over the ``day``
    samples up to ``t``, as fractions of ``cpu_mhz``. ``where``: each
    VM's host index (-1: none)."""
    now, peak = [], []
    lo = max(0, t - day + 1)
    for h in np.unique(where[where >= 0]):
        vms = np.flatnonzero(where == h)
        now.append(float(cpu[vms, t].sum()) / cpu_mhz)
        peak.append(float(cpu[vms, lo:t + 1].sum(axis=0).max()) / cpu_mhz)
    return now, peak


def summarise(now, peak, threshold):
    now, peak = np.asarray(now), np.asarray(peak)
    return {'host_samples': int(len(now)),
            'cpu_now_mean': float(now.mean()),
            'cpu_now_median': float(np.median(now)),
            'cpu_day_peak_mean': float(peak.mean()),
            'cpu_day_peak_median': float(np.median(peak)),
            'share_day_peak_above_underload_peak': float(
                (peak > threshold).mean()),
            'underload_peak_threshold': threshold}


def run(inputs, every, config='wss default'):
    base = engine.settings_from_conf(common.private_conf(), 0.0, 300.0)
    mode, spec, plan = sweep.configurations()[config][:3]
    threshold = float(spec.effective()['underload'][1].get(
        'peak_threshold', 1.0))
    out = []
    for group, label, tr, start, steps in inputs:
        if isinstance(tr, tuple):
            tr = sweep.synthetic_trace(tr)
        s = dataclasses.replace(base, spec=spec, plan=plan,
                                start_steps=start, duration_steps=steps)
        now, peak = [], []
        seen = [0]

        def observer(event, **data):
            if event != 'interval':
                return
            seen[0] += 1
            if seen[0] % every:
                return
            n, p = host_utilisation(tr.cpu, data['where'], data['t'],
                                    s.hosts.cpu_mhz)
            now.extend(n)
            peak.extend(p)
        metrics, _ = engine.simulate(tr, mode, s, observer=observer)
        row = {'group': group, 'input': label,
               'active_hosts': metrics['avg_active_hosts'],
               'lower_bound_hosts': metrics['lower_bound_hosts']}
        row.update(summarise(now, peak, threshold))
        out.append(row)
        print('%-24s %-12s hosts %.2f (bound %.2f) CPU now median %.2f, '
              'day peak median %.2f, %.0f %% above %.2f'
              % (group, label, row['active_hosts'],
                 row['lower_bound_hosts'], row['cpu_now_median'],
                 row['cpu_day_peak_median'],
                 100 * row['share_day_peak_above_underload_peak'],
                 threshold), flush=True)
    return out


def markdown(rows, command):
    lines = ['# Host CPU now and over the day, the defaults (issue 19)', '',
             'Command: `%s`' % command, '',
             'Per input: active hosts and the per-step lower bound; over '
             'the active hosts sampled, their VMs\' summed CPU at the '
             'sample (what the bound packs on) and the largest of it over '
             'the day before (what a placement held for a day must '
             'hold), as fractions of a host; and the share of host '
             'samples whose day peak is above the underload forecast\'s '
             'peak_threshold (such a host is not emptied).', '',
             '| group | input | active hosts | lower bound | CPU now mean '
             '/ median | day peak mean / median | day peak above the '
             'threshold |', '|---|---|---|---|---|---|---|']
    for r in rows:
        lines.append('| %s | %s | %.2f | %.2f | %.2f / %.2f | %.2f / %.2f '
                     '| %.0f %% |' % (
                         r['group'], r['input'], r['active_hosts'],
                         r['lower_bound_hosts'], r['cpu_now_mean'],
                         r['cpu_now_median'], r['cpu_day_peak_mean'],
                         r['cpu_day_peak_median'],
                         100 * r['share_day_peak_above_underload_peak']))
    return '\n'.join(lines) + '\n'


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--trace', default=None,
                    help='the Bitbrains archive (default: %s if present, '
                         'else the synthetic profiles)' % bench.DEFAULT_TRACE)
    ap.add_argument('--seeds', type=int, default=2,
                    help='seeds per synthetic profile without the trace')
    ap.add_argument('--every', type=int, default=6,
                    help='read the hosts every this many samples')
    ap.add_argument('--out', default=OUT)
    args = ap.parse_args(argv)
    if args.every < 1:
        ap.error('--every must be at least 1')
    path = args.trace or (bench.DEFAULT_TRACE
                          if os.path.exists(bench.DEFAULT_TRACE) else None)
    if path is not None:
        try:
            real = trace_mod.load_bitbrains(path)
        except (OSError, ValueError) as e:
            ap.error('cannot read the trace %s: %s' % (path, e))
        inputs = sweep.inputs(real, 6.0, 0)
    else:
        inputs = sweep.inputs(None, 6.0, args.seeds)
    rows = run(inputs, args.every)
    command = ('python -m tests.benchmarks.consolidation_peaks '
               + shlex.join(argv if argv is not None else sys.argv[1:]))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, 'host_peaks.json'), 'w') as f:
        json.dump({'command': command, 'inputs': rows}, f, indent=1,
                  sort_keys=True)
        f.write('\n')
    with open(os.path.join(args.out, 'host_peaks.md'), 'w') as f:
        f.write(markdown(rows, command))
    return 0


if __name__ == '__main__':
    sys.exit(main())
