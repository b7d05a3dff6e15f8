"""Paired differences between two runs of the consolidation sweep.

The sweep (``bench_consolidation --sweep``) pairs configurations within
one run. When the simulator or the planner changes, the same
configurations run again give a second CSV; this compares each
configuration with itself across the two, per input (the same Bitbrains
window or synthetic seed on both sides), and prints the sweep's paired
Markdown::

    PYTHONPATH=. python tools/sweep_compare.py BEFORE.csv AFTER.csv \\
        [--label 'after the change'] [--out FILE.md]
"""

import argparse
import sys

from tests.benchmarks import consolidation_sweep as sweep


def compare(before, after, label):
    """config -> paired summaries of ``after - before`` (see
    :func:`consolidation_sweep.paired_differences`)."""
    out = {}
    for config in sorted({r['config'] for r in before} &
                         {r['config'] for r in after}):
        tag = '%s, %s' % (config, label)
        rows = [r for r in before if r['config'] == config]
        rows += [dict(r, config=tag) for r in after
                 if r['config'] == config]
        out.update(sweep.paired_differences(rows, ref=config, skip=()))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('before')
    ap.add_argument('after')
    ap.add_argument('--label', default='after')
    ap.add_argument('--out')
    args = ap.parse_args(argv)
    paired = compare(sweep.read_csv(args.before), sweep.read_csv(args.after),
                     args.label)
    lines = sweep.paired_markdown(paired, ref='the same configuration in '
                                  + args.before)
    text = '\n'.join(lines) + '\n'
    if args.out:
        with open(args.out, 'w') as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
