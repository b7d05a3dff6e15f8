"""Paired differences of W1-W5 runs (same case) to the defaults, from
compare.json: python3 w15/paired.py w15/compare.json > w15/paired.md"""
import json
import math
import statistics
import sys

T975 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36,
        8: 2.31, 9: 2.26, 10: 2.23}


def half(xs):
    n = len(xs)
    if n < 2:
        return float('nan')
    return T975.get(n - 1, 2.0) * statistics.stdev(xs) / math.sqrt(n)


runs = json.load(open(sys.argv[1]))['runs']
base = {tuple(case): m for _, case, m in runs['badis']}
print('| config - badis | error % | S_more % | S_less % |')
print('|---|---|---|---|')
for name in sorted(runs):
    if name in ('badis', 'main') or not runs[name]:
        continue
    cells = []
    for key in ('err', 'S_more', 'S_less'):
        xs = [m[key] - base[tuple(c)][key] for _, c, m in runs[name]
              if m.get(key) is not None and
              base.get(tuple(c), {}).get(key) is not None]
        cells.append('%+.2f ± %.2f (n=%d)'
                     % (statistics.mean(xs), half(xs), len(xs)))
    print('| %s | %s |' % (name, ' | '.join(cells)))
