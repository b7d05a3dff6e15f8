"""vg_entry_grow on the paged guest model against stop 75's defaults
(``slice15`` of ../badis74_slice, identical to them run for run): per
case the mean over the seeds of vm_over and % saved, the cases that
moved, and the paired mean difference over all runs.

    python3 compare.py clock|lru [DIR LABEL]

DIR (default: here) holds model_clock and model_lru of configuration
LABEL (default: vgentry); stop 77's badis77_first uses it so.
"""
import collections
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load(path, label):
    runs = [json.loads(line) for line in open(os.path.join(path,
                                                           'model.jsonl'))]
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
            r['swap_in_mib'], r.get('S_more'), r.get('S_less'))
    return out


def main(reclaim, where=HERE, label='vgentry'):
    a = load(os.path.join(HERE, '..', 'badis74_slice', 'model_' + reclaim),
             'slice15')
    b = load(os.path.join(where, 'model_' + reclaim), label)
    keys = sorted(set(a) & set(b))
    same = sum(1 for k in keys if a[k] == b[k])
    per = collections.defaultdict(list)
    for k in keys:
        per[k[:2]].append((a[k], b[k]))
    print('%s: %d runs paired, %d identical; paired vm_over %+.4f, saved '
          '%+.2f points' % (reclaim, len(keys), same, statistics.mean(
              b[k][0] - a[k][0] for k in keys), statistics.mean(
              b[k][1] - a[k][1] for k in keys)))
    for (case, start), v in sorted(per.items()):
        va = statistics.mean(x[0][0] for x in v)
        vb = statistics.mean(x[1][0] for x in v)
        sa = statistics.mean(x[0][1] for x in v)
        sb = statistics.mean(x[1][1] for x in v)
        if abs(vb - va) >= 0.002 or abs(sb - sa) >= 0.3:
            print('  %-14s %-6s vm_over %.3f -> %.3f  saved %.1f -> %.1f'
                  % (case, start, va, vb, sa, sb))


if __name__ == '__main__':
    main(*sys.argv[1:])
