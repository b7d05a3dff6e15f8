"""Per W1-W5 schedule, two bench_badis series side by side: vm_over
(the repeat's `none` passes / Badis's), the mean error and the errors
with one poll of allowance (% of booked), means over the repeats, and
the S_less polls per repeat.

    python3 compare.py ../badis_repeats/badis.jsonl badis.jsonl
"""
import collections
import json
import statistics
import sys


def load(path):
    runs = [json.loads(line) for line in open(path)]
    none = {(r['shape'], r['alloc'], r['repeat']): r['passes']
            for r in runs if r['estimator'] == 'none'}
    out = collections.defaultdict(list)
    for r in runs:
        if r['estimator'] != 'badis':
            continue
        e = r['errors']['badis']
        allow = e.get('allowance', {})
        ref = none[(r['shape'], r['alloc'], r['repeat'])]
        out[(r['shape'], r['alloc'])].append(
            (ref / r['passes'], e['all'], allow.get('S_more'),
             allow.get('S_less'), e.get('polls_S_less')))
    return out


def mean(xs):
    xs = [x for x in xs if x is not None]
    return statistics.mean(xs) if xs else float('nan')


def main(a_path, b_path):
    a_runs, b_runs = load(a_path), load(b_path)
    print('case      vm_over         error           allow. S_more   '
          'allow. S_less   S_less polls')
    for case in sorted(a_runs):
        a, b = a_runs[case], b_runs.get(case, [])
        cells = ['%s,%s' % case]
        for i, fmt in ((0, '%.3f'), (1, '%5.2f'), (2, '%5.2f'),
                       (3, '%5.2f')):
            cells.append((fmt + '->' + fmt) % (mean(x[i] for x in a),
                                               mean(x[i] for x in b)))
        cells.append('%s->%s' % ([x[4] for x in a], [x[4] for x in b]))
        print('  '.join(cells))


if __name__ == '__main__':
    main(*sys.argv[1:3])
