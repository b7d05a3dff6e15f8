"""Side-by-side table of bench_badis runs (issue 13, session 3).

    python tools/badis13_compare.py DIR [DIR...]
    python tools/badis13_compare.py --patterns DIR [DIR...]

Each DIR holds a badis.jsonl whose ``none`` runs are the vm_over
reference of its ``badis`` runs (the same lock slot). Per case and DIR:
mean |error| per poll (% of booked), one-poll-allowance error in S_more /
S_less, vm_over, bad shrinks; then per DIR the mean of the per-case
figures, the median and worst vm_over and the total of bad shrinks.

``--patterns``: the same from bench_patterns' patterns.json (each DIR's
``none`` runs are its reference): per pattern and start, vm_over, memory
saved beside the one-poll-late oracle's (% of booked), allowance S_more /
S_less, bad shrinks.
"""
import json
import os
import sys

import badis13_ablation  # tools/, the script's own directory

_mean = badis13_ablation.mean_of_known


def _f(x):
    return 'n/a' if x is None else '%.2f' % x


def _f3(x):
    return 'n/a' if x is None else '%.3f' % x


def main(dirs):
    names = [os.path.basename(d.rstrip('/')) for d in dirs]
    data = {}
    for name, d in zip(names, dirs):
        runs = badis13_ablation.load(d)
        ref = {(r['shape'], r['alloc']): r['passes'] for r in runs
               if r['estimator'] == 'none'}
        for r in runs:
            if r['estimator'] != 'badis' or not r.get('rows'):
                continue
            e = r['errors']['badis']
            key = (r['shape'], r['alloc'])
            bad = max([x.get('bad_shrinks') or 0 for x in r['rows']] or [0])
            data.setdefault(key, {})[name] = (
                e['all'], e['allowance']['S_more'], e['allowance']['S_less'],
                ref[key] / r['passes'], bad)
    print('| case | ' + ' | '.join(names) + ' |')
    print('|---|' + '---|' * len(names))
    for key in sorted(data):
        cells = []
        for name in names:
            v = data[key].get(name)
            cells.append('%s / %s / %s / %.3f / %d'
                         % (_f(v[0]), _f(v[1]), _f(v[2]), v[3], v[4])
                         if v else '')
        print('| %s,%s | ' % key + ' | '.join(cells) + ' |')
    cells = []
    for name in names:
        vals = [data[k][name] for k in data if name in data[k]]
        overs = sorted(v[3] for v in vals)
        med = (overs[(len(overs) - 1) // 2] + overs[len(overs) // 2]) / 2
        cells.append('**%s** / %s / %s / median **%.3f**, worst %.3f / %d'
                     % (_f(_mean(v[0] for v in vals)),
                        _f(_mean(v[1] for v in vals)),
                        _f(_mean(v[2] for v in vals)), med, overs[-1],
                        sum(v[4] for v in vals)))
    print('| mean (%d cases) | ' % len(data) + ' | '.join(cells) + ' |')


def patterns(dirs):
    names = [os.path.basename(d.rstrip('/')) for d in dirs]
    data = {}
    for name, d in zip(names, dirs):
        with open(os.path.join(d, 'patterns.json')) as f:
            table = json.load(f)['summary']['runs']
        for r in table:
            if r['estimator'] != 'badis':
                continue
            data.setdefault((r['pattern'], r['start']), {})[name] = r
    print('| pattern, start | ' + ' | '.join(names) + ' |')
    print('|---|' + '---|' * len(names))
    for key in sorted(data):
        cells = []
        for name in names:
            r = data[key].get(name)
            cells.append('' if r is None else '%s / %s (%s) / %s / %s / %s'
                         % ('n/a' if r['vm_over'] is None
                            else '%.3f' % r['vm_over'],
                            _f(r['saved_pct']), _f(r['oracle_saved_pct']),
                            _f(r['allowance_S_more']),
                            _f(r['allowance_S_less']),
                            r['bad_shrinks']))
        print('| %s, %s | ' % key + ' | '.join(cells) + ' |')
    cells = []
    for name in names:
        rows = [data[k][name] for k in data if name in data[k]]
        overs = sorted(r['vm_over'] for r in rows
                       if r['vm_over'] is not None)
        med = ((overs[(len(overs) - 1) // 2] + overs[len(overs) // 2]) / 2
               if overs else None)
        cells.append('median **%s**, worst %s / saved %s / %s / %s'
                     % (_f3(med), _f3(overs[-1] if overs else None),
                        _f(_mean(r['saved_pct'] for r in rows)),
                        _f(_mean(r['allowance_S_more'] for r in rows)),
                        _f(_mean(r['allowance_S_less'] for r in rows))))
    print('| all (%d) | ' % len(data) + ' | '.join(cells) + ' |')


if __name__ == '__main__':
    if sys.argv[1:2] == ['--patterns']:
        patterns(sys.argv[2:])
    else:
        main(sys.argv[1:])
