"""Summarize bench_badis runs of the issue-13 ablation (W3/W5).

    python tools/badis13_ablation.py DIR [DIR...] [--none NONE_DIR]
        [--shapes W1,W2,W3,W4,W5]

Per case: mean |error| (% of booked), one-poll allowance S_more/S_less,
vm_over against the ``none`` runs of NONE_DIR (default: each DIR's own
badis.jsonl), bad shrinks, pinned correction first/min/last (MiB), and the
per-poll error by estimate source (polls, mean MiB); then the mean of the
per-case mean errors and the median and worst vm_over of the cases shown.
``--shapes`` (default W3,W5) chooses the cases.
"""
import collections
import json
import os
import sys


def load(d):
    return load_jsonl(os.path.join(d, 'badis.jsonl'))


def load_jsonl(path):
    with open(path) as f:
        return [json.loads(x) for x in f if x.strip()]


def mean_of_known(xs):
    """The mean of the values that are not None, or None."""
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def _pct(x):
    return 'n/a' if x is None else '%.2f %%' % x


def main(argv):
    none_dir = None
    if '--none' in argv:
        i = argv.index('--none')
        none_dir = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    shapes = ('W3', 'W5')
    if '--shapes' in argv:
        i = argv.index('--shapes')
        shapes = tuple(argv[i + 1].split(','))
        argv = argv[:i] + argv[i + 2:]
    for d in argv:
        runs = load(d)
        ref = {(r['shape'], r['alloc']): r['passes']
               for r in (load(none_dir) if none_dir else runs)
               if r['estimator'] == 'none'}
        print('## %s' % d)
        print('| case | mean error | allow. S_more | allow. S_less | '
              'vm_over | bad shrinks | pinned first/min/last MiB | '
              'error by source (polls: mean MiB) |')
        print('|---|---|---|---|---|---|---|---|')
        errors, overs = [], []
        for r in sorted(runs, key=lambda r: (r['shape'], r['alloc'])):
            if r['estimator'] != 'badis' or r['shape'] not in (
                    shapes) or not r.get('rows'):
                continue
            e = r['errors']['badis']
            rows = r['rows']
            by = collections.defaultdict(list)
            for x in rows:
                if 'badis' in x:
                    src = x.get('detail') or '?'
                    by[src].append(abs(x['badis'] - x['truth_kb']) / 1024)
            srcs = ', '.join('%s %d: %.0f' % (k, len(v), sum(v) / len(v))
                             for k, v in sorted(by.items(),
                                                key=lambda kv: -len(kv[1])))
            pins = [x['pinned_kb'] // 1024 for x in rows
                    if x.get('pinned_kb') is not None]
            bad = max([x.get('bad_shrinks') or 0 for x in rows] or [0])
            n = ref.get((r['shape'], r['alloc']))
            vm = '%.3f' % (n / r['passes']) if n and r['passes'] else 'n/a'
            errors.append(e['all'])
            if n and r['passes']:
                overs.append(n / r['passes'])
            print('| %s,%s | %s | %s | %s | %s | %d | %s | %s |'
                  % (r['shape'], r['alloc'], _pct(e['all']),
                     _pct(e['allowance']['S_more']),
                     _pct(e['allowance']['S_less']), vm,
                     bad, '%d/%d/%d' % (pins[0], min(pins), pins[-1])
                     if pins else 'n/a', srcs))
        print()
        if errors:
            overs.sort()
            med = ('%.3f' % ((overs[(len(overs) - 1) // 2] +
                              overs[len(overs) // 2]) / 2)
                   if overs else 'n/a')
            print('mean of per-case mean errors %.2f %%; vm_over median %s, '
                  'worst %s (%d cases)'
                  % (sum(errors) / len(errors), med,
                     '%.3f' % overs[-1] if overs else 'n/a', len(errors)))
            print()


if __name__ == '__main__':
    main(sys.argv[1:])
