"""Active hosts against CPU overload across several sweeps (issue 19).

The sweep (:mod:`tests.benchmarks.consolidation_sweep`) plots hosts
against migrations and against SLAV, one sweep at a time. Once the
migrations are well under their goal (after a burn-in), what a knob buys
in hosts it pays in CPU overload: this tool gathers the configurations of
several sweeps run on the same inputs, for one input group, and shows
that trade-off, with the configurations no other beats on both (fewer
hosts and less CPU overload) marked.

    python -m tests.benchmarks.consolidation_frontier \\
        --sweeps screen64_a,screen64_b,screen64_c --group bitbrains \\
        --name frontier_burnin_bitbrains

reads ``results/consolidation/<sweep>.csv`` and writes ``<name>.md``
and ``<name>.png`` there.
"""

import argparse
import os
import shlex
import sys

from tests.benchmarks import consolidation_sweep as sweep
from tests.benchmarks import discipline

CPU_GOAL = 0.003          # issue 19: CPU overload <= 0.3 % of host time
MIGRATION_GOAL = 0.15     # issue 19: <= 0.15 live migrations per VM-day
FIELDS = ('hosts', 'cpu_overload', 'migrations_per_vm_day')
REF = 'wss default'


class FrontierError(ValueError):
    pass


def collect(sweeps, group):
    """config -> {'mode', 'sweep', 'inputs' -> {input -> {field ->
    value}}} for ``group`` from ``sweeps`` ([(sweep name, rows)], the
    rows of each sweep's CSV). A configuration in several sweeps must
    have the same figures on every input in each (simulations are
    deterministic), else the sweeps ran different inputs or code and
    are not comparable."""
    points = {}
    for name, rows in sweeps:
        mine = {}
        for r in rows:
            if r['group'] != group:
                continue
            p = mine.setdefault(r['config'], {'mode': r['mode'],
                                              'sweep': name, 'inputs': {}})
            p['inputs'][r['input']] = {f: float(r[f]) for f in FIELDS}
        for config, p in mine.items():
            seen = points.get(config)
            if seen is None:
                points[config] = p
                continue
            for inp, vals in p['inputs'].items():
                old = seen['inputs'].get(inp)
                if old is None:
                    raise FrontierError(
                        '%r ran on %r in sweep %s but not in %s: not the '
                        'same inputs' % (config, inp, name, seen['sweep']))
                if any(abs(old[f] - vals[f]) > 1e-6 * max(1.0, abs(old[f]))
                       for f in FIELDS):
                    raise FrontierError(
                        '%r differs on %r between sweeps %s and %s: not '
                        'the same code or settings' % (
                            config, inp, seen['sweep'], name))
    if REF not in points:
        raise FrontierError('no %r on group %r in these sweeps' % (REF,
                                                                   group))
    return points


def figures(points):
    """config -> field -> discipline summary over the inputs, plus
    'hosts_vs_default': the paired ratio of active hosts to the
    defaults' on the same inputs (geometric mean and interval)."""
    ref = points[REF]['inputs']
    out = {}
    for config, p in points.items():
        inputs = sorted(p['inputs'])
        f = {k: discipline.summarize([p['inputs'][i][k] for i in inputs])
             for k in FIELDS}
        both = [i for i in inputs if i in ref]
        f['hosts_vs_default'] = discipline.paired_ratio(
            [p['inputs'][i]['hosts'] for i in both],
            [ref[i]['hosts'] for i in both])
        out[config] = f
    return out


def undominated(figs):
    """Names of the configurations that no other has both fewer (or as
    many) hosts, relative to the defaults on the same inputs, and less
    (or as much) CPU overload than, one of the two strictly (means)."""
    def key(f):
        return f['hosts_vs_default']['mean'], f['cpu_overload']['mean']
    out = set()
    for a, fa in figs.items():
        ha, ca = key(fa)
        if not any(hb <= ha and cb <= ca and (hb < ha or cb < ca)
                   for hb, cb in (key(fb) for b, fb in figs.items()
                                  if b != a)):
            out.add(a)
    return out


def _fmt(s, scale=1.0, spec='.2f', unit=''):
    return '%s ± %s%s' % (format(s['mean'] * scale, spec),
                          format((s['half_width'] or 0.0) * scale, spec),
                          unit)


def _ratio(r):
    if r['low'] is None:
        return '%.3f' % r['mean']
    return '%.3f [%.3f, %.3f]' % (r['mean'], r['low'], r['high'])


def _met(s, goal):
    return 'yes' if (s['high'] if s['high'] is not None
                     else s['mean']) <= goal else 'NO'


def markdown(points, figs, group, sweeps, command):
    """The table; ``figs`` is :func:`figures` of ``points``."""
    front = undominated(figs)
    lines = ['# Active hosts against CPU overload: %s (issue 19)' % group,
             '', 'Command: `%s`' % command, '',
             'From the sweeps %s: mean ± half-width of the 95 %% interval '
             'over the group\'s inputs; "hosts / default": the paired '
             'ratio of active hosts to the defaults\' on the same inputs '
             '(geometric mean [95 %% interval]), which the inputs\' spread '
             'does not blur. Goals met when the whole interval is inside: '
             'CPU overload <= 0.3 %% of host time, migrations <= %.2f per '
             'VM-day. "front": no other configuration has both fewer '
             'hosts (relative) and less CPU overload (means).' % (
                 ', '.join('`%s`' % s for s in sweeps), MIGRATION_GOAL),
             '']
    rows = []
    for config, f in sorted(figs.items(),
                            key=lambda kv: kv[1]['hosts_vs_default']['mean']):
        rows.append([
            config, _fmt(f['hosts']), _ratio(f['hosts_vs_default']),
            _fmt(f['cpu_overload'], 100, '.3f', ' %'),
            _fmt(f['migrations_per_vm_day'], 1, '.3f'),
            _met(f['cpu_overload'], CPU_GOAL),
            _met(f['migrations_per_vm_day'], MIGRATION_GOAL),
            'front' if config in front else '', points[config]['sweep']])
    lines += [discipline.markdown_table(
        ['configuration', 'active hosts', 'hosts / default',
         'CPU overload', 'migrations per VM-day', 'CPU goal met',
         'migration goal met', '', 'sweep'], rows), '']
    return '\n'.join(lines)


def plot(points, figs, group, path):
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt
    front = undominated(figs)
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for config, f in sorted(figs.items()):
        if points[config]['mode'] != 'wss':
            continue      # booked packing: another scale of hosts
        c, r = f['cpu_overload'], f['hosts_vs_default']
        y = r['mean'] * 100
        yerr = ([[y - r['low'] * 100], [r['high'] * 100 - y]]
                if r['low'] is not None else None)
        default = config == REF
        ax.errorbar(c['mean'] * 100, y, xerr=(c['half_width'] or 0) * 100,
                    yerr=yerr, fmt='*' if default else 'o',
                    ms=13 if default else 7, lw=0.7, alpha=0.85,
                    color='tab:green' if config in front else 'tab:blue')
        ax.annotate(config.split(' ', 1)[1], (c['mean'] * 100, y),
                    fontsize=7, xytext=(5, 3), textcoords='offset points')
    ax.axvline(CPU_GOAL * 100, ls='--', lw=0.8, color='grey')
    ax.axhline(100, ls=':', lw=0.8, color='grey')
    ax.set_xlabel('CPU overload, % of host time (dashed: the 0.3 % goal)')
    ax.set_ylabel('active hosts, % of the defaults\' (paired)')
    ax.set_title('%s, WSS packing: hosts against CPU overload (green: not '
                 'beaten on both)' % group, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv=None, out_dir=None):
    out_dir = out_dir or os.path.join(os.path.dirname(__file__), 'results',
                                      'consolidation')
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--sweeps', required=True,
                    help='comma-separated sweep names (their .csv in '
                    'results/consolidation/)')
    ap.add_argument('--group', default='bitbrains',
                    help='input group: bitbrains, or "synthetic PROFILE"')
    ap.add_argument('--name', required=True,
                    help='base name of the .md and .png written')
    args = ap.parse_args(argv)
    names = [s.strip() for s in args.sweeps.split(',') if s.strip()]
    sweeps = []
    try:
        for n in names:
            try:
                sweeps.append((n, sweep.read_csv(
                    os.path.join(out_dir, n + '.csv'))))
            except (OSError, KeyError, ValueError) as e:
                raise FrontierError('cannot read sweep %r: %s' % (n, e))
        points = collect(sweeps, args.group)
    except FrontierError as e:
        sys.stderr.write('consolidation_frontier: error: %s\n' % e)
        return 2
    command = ('python -m tests.benchmarks.consolidation_frontier '
               '--sweeps %s --group %s --name %s'
               % (','.join(names), shlex.quote(args.group), args.name))
    figs = figures(points)
    with open(os.path.join(out_dir, args.name + '.md'), 'w') as f:
        f.write(markdown(points, figs, args.group, names, command) + '\n')
    plot(points, figs, args.group,
         os.path.join(out_dir, args.name + '.png'))
    print(os.path.join(out_dir, args.name + '.md'))
    return 0


if __name__ == '__main__':
    sys.exit(main())
