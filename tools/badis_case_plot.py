"""Plot one case of a pattern-suite slot: the balloon of every
configuration over time, the true working set, and the MiB read back from
swap (issue 13).

    python tools/badis_case_plot.py SLOT_DIR --pattern load_idle \\
        --start loaded --out case.png

SLOT_DIR holds the ``patterns.jsonl`` that ``tests.benchmarks.bench_patterns``
writes (one line per run; a configuration run with ``--label`` is recorded
under that label). Exits 2 with a message when the case is not there.
"""

import argparse
import json
import os
import sys

MIB = 1024


def runs_of(slot, pattern, start):
    """label -> run (the recorded dict) of one case, ``none`` left out."""
    path = os.path.join(slot, 'patterns.jsonl')
    out = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if (r.get('pattern') == pattern and r.get('start') == start
                    and r.get('estimator') != 'none'):
                out[r.get('label') or r['estimator']] = r
    return out


def series(run):
    """(seconds from the first poll, balloon MiB, truth MiB or None,
    MiB read back since the first poll)."""
    rows = run['rows']
    t0, s0 = rows[0]['t'], rows[0]['swap_in']
    return ([r['t'] - t0 for r in rows],
            [r['balloon_kb'] / MIB for r in rows],
            [None if r.get('truth_kb') is None else r['truth_kb'] / MIB
             for r in rows],
            [(r['swap_in'] - s0) / MIB for r in rows])


def plot(runs, title, out):
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6), sharex=True,
                                      height_ratios=(2, 1))
    truth_drawn = False
    for label in sorted(runs):
        t, balloon, truth, read = series(runs[label])
        top.step(t, balloon, where='post', label=label, linewidth=1.2)
        bottom.plot(t, read, label=label, linewidth=1.2)
        if not truth_drawn and any(v is not None for v in truth):
            top.step(t, [v if v is not None else float('nan')
                         for v in truth], where='post', color='black',
                     linestyle=':', label='true working set')
            truth_drawn = True
    top.set_ylabel('balloon (MiB)')
    top.set_title(title)
    top.legend(fontsize=8, loc='lower left')
    bottom.set_ylabel('read back from swap (MiB)')
    bottom.set_xlabel('seconds')
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('slot')
    ap.add_argument('--pattern', required=True)
    ap.add_argument('--start', default='loaded')
    ap.add_argument('--out', required=True)
    args = ap.parse_args(argv)
    try:
        runs = runs_of(args.slot, args.pattern, args.start)
    except (OSError, ValueError) as e:
        sys.stderr.write('badis_case_plot: cannot read %s: %s\n'
                         % (args.slot, e))
        return 2
    if not runs:
        sys.stderr.write('badis_case_plot: no run of %s from %s in %s\n'
                         % (args.pattern, args.start, args.slot))
        return 2
    plot(runs, '%s, agent started %s (%s)' % (
        args.pattern, 'at boot' if args.start == 'boot' else
        'after loading', os.path.basename(os.path.normpath(args.slot))),
        args.out)
    return 0


if __name__ == '__main__':
    sys.exit(main())
