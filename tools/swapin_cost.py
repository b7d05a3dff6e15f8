"""What a swapped-in MiB costs the guest on the test bed (issue 13).

    python tools/swapin_cost.py [--json OUT] SLOT [SLOT...]

Each SLOT is a directory whose ``patterns.jsonl`` was written by
``tests.benchmarks.bench_patterns`` (any estimators, with the slot's
``none`` runs or ``--twin``). Per run: the memory the guest read back from
swap over the run (the balloon statistics' cumulative ``swap_in``, MiB,
from its first row to its last) and its vm_over (operations of its twin,
the same guest with all its memory run beside it, over this run's; without
a twin, of the slot's ``none`` run of the pattern).
Per pattern, and over every run: a least-squares line ``vm_over = a + b x
MiB`` with its correlation. ``b`` is the throughput a swapped-in MiB costs
on this machine; ``a`` is what the estimator costs with no swap-in
(sampling, balloon moves).

Why: the suite's vm_over goals (median 1.03, worst 1.10) are throughput,
and on a TCG guest a swap-in is an emulated disk read through an emulated
virtio queue. The line says how many MiB of swap-in a run can afford under
a goal on this bed; the swap-in volume, not vm_over, is what carries over
to KVM, where a swap-in from an NBD or memstore device costs a fraction of
it (the bed cannot measure that fraction).
"""
import argparse
import json
import os
import sys

import numpy as np


def runs(slot):
    """(pattern, swapped-in MiB, vm_over) of every non-``none`` run of a
    slot that has a twin or whose pattern has a ``none`` run there."""
    with open(os.path.join(slot, 'patterns.jsonl')) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    none = {r['pattern']: r['ops'] for r in rows
            if r['estimator'] == 'none' and r.get('ops')}
    out = []
    for r in rows:
        full = r.get('twin_ops') or none.get(r['pattern'])
        if r['estimator'] == 'none' or not (full and r.get('ops') and
                                            r.get('rows')):
            continue
        swapped = ((r['rows'][-1].get('swap_in') or 0) -
                   (r['rows'][0].get('swap_in') or 0)) / 1024.0
        out.append((r['pattern'], swapped, full / r['ops']))
    return out


def fit(points):
    """{'n', 'intercept', 'per_100_mib', 'r'} of vm_over on swapped-in MiB
    (None for fewer than 3 runs or no spread in MiB)."""
    if len(points) < 3:
        return None
    x = np.array([p[1] for p in points], dtype=float)
    y = np.array([p[2] for p in points], dtype=float)
    if np.ptp(x) == 0:
        return None
    b, a = np.polyfit(x, y, 1)
    r = float(np.corrcoef(x, y)[0, 1]) if np.ptp(y) else 0.0
    return {'n': len(points), 'intercept': float(a),
            'per_100_mib': float(100 * b), 'r': r,
            'mib_median': float(np.median(x)), 'mib_max': float(x.max())}


def affordable_mib(line, vm_over):
    """MiB of swap-in per run the line allows under ``vm_over`` (None
    when it does not rise with swap-in)."""
    if line is None or line['per_100_mib'] <= 0:
        return None
    return max(0.0, 100 * (vm_over - line['intercept']) /
               line['per_100_mib'])


def summarize(slots):
    points = [p for s in slots for p in runs(s)]
    per = {}
    for pattern in sorted({p[0] for p in points}):
        per[pattern] = fit([p for p in points if p[0] == pattern])
    return {'slots': list(slots), 'all': fit(points), 'patterns': per}


def markdown(result):
    lines = ['vm_over against the MiB a run read back from swap '
             '(least squares over the runs of %d slots):' %
             len(result['slots']), '',
             '| pattern | runs | vm_over at 0 MiB | per 100 MiB | r | '
             'MiB median / max | MiB under 1.03 / 1.10 |',
             '|---|---|---|---|---|---|---|']
    rows = list(result['patterns'].items()) + [('every run',
                                                result['all'])]
    for name, line in rows:
        if line is None:
            lines.append('| %s | too few runs | | | | | |' % name)
            continue
        under = [affordable_mib(line, v) for v in (1.03, 1.10)]
        lines.append('| %s | %d | %.3f | %+.3f | %.2f | %.0f / %.0f | %s |'
                     % (name, line['n'], line['intercept'],
                        line['per_100_mib'], line['r'], line['mib_median'],
                        line['mib_max'], ' / '.join(
                            'n/a' if u is None else '%.0f' % u
                            for u in under)))
    return '\n'.join(lines) + '\n'


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('slots', nargs='+')
    ap.add_argument('--json')
    args = ap.parse_args(argv)
    try:
        result = summarize(args.slots)
    except (OSError, ValueError, KeyError) as e:
        sys.stderr.write('swapin_cost: error: %s\n' % e)
        return 2
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(result, f, indent=1, sort_keys=True)
            f.write('\n')
    sys.stdout.write(markdown(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())
