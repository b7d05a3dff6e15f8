"""W4 static alone, per series directory given: runs, mean, standard
deviation and range of vm_over (none's passes over Badis's in the same
repeat); then every run in the order it started, with its tree.

    python3 w4s_summary.py c_* ../badis87_defaults/w4s_t77 \
        ../badis87_defaults/w4s_t87
"""
import json
import statistics
import sys


def runs(d):
    rows = [json.loads(line) for line in open(d + '/badis.jsonl')]
    none = {r['repeat']: r['passes'] for r in rows
            if r['estimator'] == 'none' and r['shape'] == 'W4'}
    return [(r['invocation'], d, r['repeat'],
             none[r['repeat']] / r['passes']) for r in rows
            if r['estimator'] == 'badis' and r['shape'] == 'W4' and
            r['alloc'] == 's' and r['repeat'] in none]


every = []
for d in sys.argv[1:]:
    v = [x[-1] for x in runs(d)]
    every += runs(d)
    print('%-30s n=%d mean %.3f sd %.3f range %.3f-%.3f' % (
        d[-30:], len(v), statistics.mean(v),
        statistics.stdev(v) if len(v) > 1 else 0, min(v), max(v)))
v = [x[-1] for x in every]
print('%-30s n=%d mean %.3f sd %.3f range %.3f-%.3f' % (
    'all', len(v), statistics.mean(v), statistics.stdev(v), min(v), max(v)))
print()
for when, d, rep, vm in sorted(every):
    print('%s  %-30s r%d  %.3f' % (when, d[-30:], rep, vm))
