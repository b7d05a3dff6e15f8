"""Pooled paired differences over badis37 slots 2-3 (nhc - badis) and
badis38 slot 1 (badis - old): the same two configurations.

Run from tests/benchmarks/results: ``python3 badis38/pool.py``.
"""

import json
import math
import statistics

T_975_DF29 = 2.045       # Student's t, 95 % two-sided, 29 degrees


def diffs(path, ref, new, key):
    runs = json.load(open(path))['runs']
    a = {(s, tuple(c)): v[key] for s, c, v in runs[ref]}
    b = {(s, tuple(c)): v[key] for s, c, v in runs[new]}
    return [b[k] - a[k] for k in a
            if k in b and a[k] is not None and b[k] is not None]


def main():
    for key in ('vm_over', 'saved'):
        d = (diffs('badis37/compare_23.json', 'badis', 'nhc', key) +
             diffs('badis38/compare_1.json', 'old', 'badis', key))
        assert len(d) == 30, len(d)
        half = T_975_DF29 * statistics.stdev(d) / math.sqrt(len(d))
        print('%s n=%d mean %+.3f ± %.3f'
              % (key, len(d), statistics.mean(d), half))


if __name__ == '__main__':
    main()
