"""Per case, mean over the seeds of vm_over (against the seed's `none`
run) / % of the booking saved / MiB read back, per configuration, then
each configuration's median and worst vm_over over the runs and its
mean difference from the first configuration, paired by case and seed.

    python tests/benchmarks/results/badis68/summary.py DIR [DIR ...]
"""
import collections
import json
import statistics
import sys


def summarize(path):
    runs = [json.loads(line) for line in open(path + '/model.jsonl')]
    none = {(r['pattern'], r['seed']): r['ops'] for r in runs
            if r['label'] == 'none'}
    cases = collections.defaultdict(dict)
    labels = []
    for r in runs:
        if r['label'] == 'none':
            continue
        if r['label'] not in labels:
            labels.append(r['label'])
        case = (r['pattern'] + ('' if r.get('alloc', 's') == 's'
                                else ',' + r['alloc']), r['start'])
        cases[case].setdefault(r['label'], []).append(
            (r['seed'], none[(r['pattern'], r['seed'])] / r['ops'],
             r['saved_pct'], r['swap_in_mib']))
    print('==', path)
    print('%-24s' % 'case' + ''.join('%-22s' % x for x in labels))
    every = {x: [] for x in labels}
    d_over = {x: [] for x in labels}
    d_saved = {x: [] for x in labels}
    for case in sorted(cases):
        ref = {s: (v, sv) for s, v, sv, _ in cases[case][labels[0]]}
        cells = []
        for label in labels:
            got = cases[case][label]
            every[label] += [v for _, v, _, _ in got]
            d_over[label] += [v - ref[s][0] for s, v, _, _ in got]
            d_saved[label] += [sv - ref[s][1] for s, _, sv, _ in got]
            cells.append('%.3f/%5.1f/%4.0f' % (
                statistics.mean(v for _, v, _, _ in got),
                statistics.mean(sv for _, _, sv, _ in got),
                statistics.mean(m for _, _, _, m in got)))
        print('%-24s' % ' '.join(case) + ''.join('%-22s' % c for c in cells))
    for label in labels:
        print('%-10s median %.3f worst %.3f  paired vm_over %+.4f saved '
              '%+.2f' % (label, statistics.median(every[label]),
                         max(every[label]), statistics.mean(d_over[label]),
                         statistics.mean(d_saved[label])))


for arg in sys.argv[1:]:
    summarize(arg.rstrip('/'))
