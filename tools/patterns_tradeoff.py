"""Memory saved against the guest's slowdown, one point per configuration
of a pattern-suite comparison (issue 13's trade-off).

    python tools/patterns_tradeoff.py COMPARE.json --out tradeoff.png \\
        [--order badis,ts12,ts30,oracle]

COMPARE.json is what ``tools/badis15_compare.py --estimators --json``
writes: per configuration, every run's ``saved`` (% of booked) and
``vm_over`` (operations/s with the full booking over operations/s at the
configuration's allocation, same slot). Each point is a configuration:
x the mean saved, y the median vm_over, its bar down to the best run and
up to the worst (the mean saved is over the configuration's own runs: the
oracle has none on Zipf, so the labels give the run count); the issue's
goals (median <= 1.03, worst <= 1.10) are drawn as lines. A second
panel gives each pattern's mean vm_over (both starts), so a
configuration that meets the goal on average but not on one pattern
shows it. The table it prints is the plot's data.

Exits 2 with a message when the file is not a comparison or a
configuration named in ``--order`` is not in it.
"""

import argparse
import json
import statistics
import sys

GOAL_MEDIAN = 1.03
GOAL_WORST = 1.10


def points(compare, order=None):
    """[(config, {n, saved, median, best, worst, per_pattern})] in
    ``order`` (default: the file's)."""
    runs = compare['runs']
    names = order or list(runs)
    out = []
    for name in names:
        if name not in runs:
            raise KeyError(name)
        vals = [(case, m) for _, case, m in runs[name]
                if m.get('vm_over') is not None]
        if not vals:
            continue
        over = [m['vm_over'] for _, m in vals]
        saved = [m['saved'] for _, m in vals if m.get('saved') is not None]
        per = {}
        for (pattern, _start), m in vals:
            per.setdefault(pattern, []).append(m['vm_over'])
        out.append((name, {
            'n': len(over),
            'saved': statistics.mean(saved) if saved else None,
            'median': statistics.median(over),
            'best': min(over),
            'worst': max(over),
            'per_pattern': {p: statistics.mean(v) for p, v in per.items()},
        }))
    return out


def table(pts):
    lines = ['| configuration | runs | saved % of booked | vm_over median '
             '| best | worst | goals met |',
             '|---|---|---|---|---|---|---|']
    for name, p in pts:
        met = p['median'] <= GOAL_MEDIAN and p['worst'] <= GOAL_WORST
        lines.append('| %s | %d | %s | %.3f | %.3f | %.3f | %s |' % (
            name, p['n'],
            'n/a' if p['saved'] is None else '%.1f' % p['saved'],
            p['median'], p['best'], p['worst'], 'yes' if met else 'no'))
    return '\n'.join(lines)


def plot(pts, out, title):
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    for name, p in pts:
        if p['saved'] is None:
            continue
        left.errorbar([p['saved']], [p['median']],
                      yerr=[[p['median'] - p['best']],
                            [p['worst'] - p['median']]],
                      fmt='o', capsize=4, label=name)
        # the run count: the oracle has no Zipf runs (no single size), so
        # its mean saved is over fewer cases than the others'
        left.annotate('%s (%d runs)' % (name, p['n']),
                      (p['saved'], p['median']),
                      textcoords='offset points', xytext=(6, 4),
                      fontsize=8)
    left.axhline(GOAL_MEDIAN, color='grey', linestyle='--', linewidth=0.8,
                 label='goal: median %.2f' % GOAL_MEDIAN)
    left.axhline(GOAL_WORST, color='grey', linestyle=':', linewidth=0.8,
                 label='goal: worst %.2f' % GOAL_WORST)
    left.set_xlabel('memory saved, mean % of booked')
    left.set_ylabel('vm_over: median (bar: best to worst run)')
    left.legend(fontsize=7, loc='best')
    patterns = sorted({k for _, p in pts for k in p['per_pattern']})
    width = 0.8 / max(1, len(pts))
    for i, (name, p) in enumerate(pts):
        xs = [j + i * width for j in range(len(patterns))]
        right.bar(xs, [p['per_pattern'].get(k, float('nan')) - 1
                       for k in patterns], width=width, label=name)
    right.axhline(GOAL_MEDIAN - 1, color='grey', linestyle='--',
                  linewidth=0.8)
    right.set_xticks([j + 0.4 - width / 2 for j in range(len(patterns))])
    right.set_xticklabels(patterns, fontsize=8)
    right.set_ylabel('mean vm_over - 1 (both starts)')
    right.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('compare', help='badis15_compare.py --json output')
    ap.add_argument('--out', help='PNG to write (default: table only)')
    ap.add_argument('--order', help='configurations to show, in order')
    ap.add_argument('--title', default='memory saved against vm_over')
    args = ap.parse_args(argv)
    try:
        with open(args.compare) as f:
            compare = json.load(f)
        compare['runs']
    except (OSError, ValueError, KeyError, TypeError) as e:
        print('%s: not a badis15_compare.py --json comparison (%s)'
              % (args.compare, e))
        return 2
    order = args.order.split(',') if args.order else None
    try:
        pts = points(compare, order)
    except KeyError as e:
        print('%s: no configuration %s (there: %s)'
              % (args.compare, e, ', '.join(compare['runs'])))
        return 2
    print(table(pts))
    if args.out:
        try:
            plot(pts, args.out, args.title)
        except ImportError as e:
            print('no plot: %s (matplotlib is in the py3 tox environment)'
                  % e)
            return 2
        print('wrote %s' % args.out)
    return 0


if __name__ == '__main__':
    sys.exit(main())
