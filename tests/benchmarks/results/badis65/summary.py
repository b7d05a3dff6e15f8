"""Per case of the held-out model runs: vm_over median / worst over the
seeds (the issue's goals are per workload: median <= 1.03, worst <=
1.10) and memory saved beside the one-poll-late oracle's.

    python tests/benchmarks/results/badis65/summary.py DIR [DIR ...]
"""

import json
import os
import statistics
import sys


def load(path):
    with open(os.path.join(path, 'model.jsonl')) as f:
        return [json.loads(x) for x in f if x.strip()]


def table(runs):
    none = {(r['pattern'], r['seed']): r['ops'] for r in runs
            if r['label'] == 'none'}
    cases = {}
    for r in runs:
        if r['label'] == 'none':
            continue
        v = none[(r['pattern'], r['seed'])] / r['ops']
        c = cases.setdefault((r['pattern'], r['start']), {}).setdefault(
            r['label'], {'vm_over': [], 'saved': []})
        c['vm_over'].append(v)
        c['saved'].append(r['saved_pct'])
    labels = sorted({k for c in cases.values() for k in c})
    lines = ['| case | ' + ' | '.join(labels) + ' |',
             '|---|' + '---|' * len(labels)]
    missed = []
    for (pattern, start), per in sorted(cases.items()):
        cells = []
        for k in labels:
            c = per.get(k)
            if not c:
                cells.append('n/a')
                continue
            med, worst = statistics.median(c['vm_over']), max(c['vm_over'])
            cells.append('%.3f / %.3f, %.1f %%' % (
                med, worst, statistics.mean(c['saved'])))
            if k != 'oracle' and (med > 1.03 or worst > 1.10):
                missed.append('%s %s, %s: %.3f / %.3f' % (
                    pattern, start, k, med, worst))
        lines.append('| %s, %s | %s |' % (pattern, start, ' | '.join(cells)))
    return lines, missed


def main(paths):
    for path in paths:
        lines, missed = table(load(path))
        print('## %s\n' % os.path.basename(os.path.normpath(path)))
        print('vm_over median / worst over the seeds, memory saved (% of '
              'booked, mean):\n')
        print('\n'.join(lines))
        print('\nOutside the goals (median <= 1.03, worst <= 1.10): %s\n'
              % ('; '.join(missed) or 'none'))


if __name__ == '__main__':
    main(sys.argv[1:] or [os.path.join(os.path.dirname(__file__), d)
                          for d in ('heldout256', 'heldout512kvm',
                                    'phases256')])
