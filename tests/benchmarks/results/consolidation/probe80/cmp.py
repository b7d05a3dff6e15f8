"""Paired differences between two sweeps' runs (stop 80's probes).

``python cmp.py A.csv 'config a' B.csv 'config b'``: per input group,
the mean of each figure for ``config a`` in A and ``config b`` in B over
the inputs both ran, and the paired difference with the half-width of
its 95 % Student-t interval.
"""
import csv
import sys

import numpy as np

# Student-t 97.5 % quantiles by degrees of freedom
T = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447,
     7: 2.365, 8: 2.306, 9: 2.262}
KEYS = ['hosts', 'migrations_per_vm_day', 'cpu_overload',
        'memory_overload', 'memory_caused_share']
PERCENT = ('cpu_overload', 'memory_overload', 'memory_caused_share')


def runs(path, config):
    with open(path) as f:
        return {(r['group'], r['input']): r for r in csv.DictReader(f)
                if r['config'] == config}


def main(x, ca, y, cb):
    a_runs, b_runs = runs(x, ca), runs(y, cb)
    print('%-28s' % 'group', ' '.join('%-30s' % k for k in KEYS))
    for g in sorted({g for g, _ in a_runs}):
        keys = [k for k in a_runs if k[0] == g and k in b_runs]
        cells = []
        for k in KEYS:
            sc = 100 if k in PERCENT else 1
            a = np.array([float(a_runs[i][k]) for i in keys]) * sc
            b = np.array([float(b_runs[i][k]) for i in keys]) * sc
            d = b - a
            hw = (T[len(d) - 1] * d.std(ddof=1) / np.sqrt(len(d))
                  if len(d) > 1 else float('nan'))
            cells.append('%.3f->%.3f (%+.3f±%.3f)'
                         % (a.mean(), b.mean(), d.mean(), hw))
        print('%-28s' % ('%s n=%d' % (g, len(keys))),
              ' '.join('%-30s' % c for c in cells))


if __name__ == '__main__':
    main(*sys.argv[1:5])
