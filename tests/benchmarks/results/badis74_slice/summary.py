"""The TCG twin pairs of this directory side by side: per pattern and
start, vm_over against the twin / % of the booking saved, for the
defaults (tcg_def*), the slice
at 60 s (tcg_slice*, 321b491) and at 15 slices with a probe's swap-ins
left out (tcg_probe*, 8d62759); then each one's median and worst
vm_over and its paired difference from the defaults.

    python3 summary.py
"""
import collections
import glob
import json
import os
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = (('defaults', 'tcg_def'), ('slice60', 'tcg_slice'),
           ('slice15+probe', 'tcg_probe'))


def runs():
    out = collections.defaultdict(dict)
    for label, prefix in CONFIGS:
        for path in sorted(glob.glob(os.path.join(HERE, prefix + '*',
                                                  'patterns.jsonl'))):
            for line in open(path):
                r = json.loads(line)
                case = (r['pattern'], r['start'])
                out[case][label] = (r['twin_ops'] / r['ops'],
                                    r['saved_pct'])
    return out


def main():
    cases = runs()
    head = '%-12s %-6s' % ('pattern', 'start')
    print(head + ''.join(' %-16s' % label for label, _ in CONFIGS))
    for case in sorted(cases):
        cells = []
        for label, _ in CONFIGS:
            v = cases[case].get(label)
            cells.append(' %-16s' % ('-' if v is None else
                                     '%.3f / %4.1f' % v))
        print('%-12s %-6s' % case + ''.join(cells))
    for label, _ in CONFIGS:
        vm = [c[label][0] for c in cases.values() if label in c]
        paired = [(c[label][0] - c['defaults'][0],
                   c[label][1] - c['defaults'][1])
                  for c in cases.values() if label in c and
                  'defaults' in c]
        if not vm:
            continue
        print('%s: vm_over median %.3f worst %.3f (n=%d); paired to the '
              'defaults over the same cases: vm_over %+.4f, saved %+.1f '
              'points' % (label, statistics.median(vm), max(vm), len(vm),
                          statistics.mean(p[0] for p in paired),
                          statistics.mean(p[1] for p in paired)))


if __name__ == '__main__':
    main()
