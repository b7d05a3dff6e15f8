"""One configuration of a model screen against another, run for run:
the paired mean differences over all runs, then per case that moved the
means over the seeds of vm_over, % saved, S_more and S_less (one poll of
allowance, % of booked).

    python3 compare.py REF_DIR REF_LABEL NEW_DIR NEW_LABEL
"""
import collections
import json
import math
import os
import statistics
import sys


def load(path, label):
    runs = [json.loads(line)
            for line in open(os.path.join(path, 'model.jsonl'))]
    none = {(r['pattern'], r['seed']): r['ops'] for r in runs
            if r['label'] == 'none'}
    out = {}
    for r in runs:
        if r['label'] != label:
            continue
        case = r['pattern'] + ('' if r.get('alloc', 's') == 's'
                               else ',' + r['alloc'])
        out[(case, r['start'], r['seed'])] = (
            none[(r['pattern'], r['seed'])] / r['ops'], r['saved_pct'],
            r.get('S_more'), r.get('S_less'))
    return out


def mean(values):
    values = [v for v in values if v is not None]
    return statistics.mean(values) if values else math.nan


def main(ref_dir, ref_label, new_dir, new_label):
    a = load(ref_dir, ref_label)
    b = load(new_dir, new_label)
    keys = sorted(set(a) & set(b))
    print('%d paired, %d identical; vm_over %+.4f saved %+.2f' % (
        len(keys), sum(a[k] == b[k] for k in keys),
        statistics.mean(b[k][0] - a[k][0] for k in keys),
        statistics.mean(b[k][1] - a[k][1] for k in keys)))
    per = collections.defaultdict(list)
    for k in keys:
        per[k[:2]].append((a[k], b[k]))
    for (case, start), v in sorted(per.items()):
        if all(x == y for x, y in v):
            continue
        cols = []
        for i, name in enumerate(('vm_over', 'saved', 'S_more', 'S_less')):
            spec = '%.3f' if i == 0 else '%5.2f'
            cols.append(('%s ' + spec + ' -> ' + spec) % (
                name, mean(x[i] for x, _ in v), mean(y[i] for _, y in v)))
        print('%-16s %-6s %s' % (case, start, '  '.join(cols)))
    return 0


if __name__ == '__main__':
    sys.exit(main(*sys.argv[1:5]))
