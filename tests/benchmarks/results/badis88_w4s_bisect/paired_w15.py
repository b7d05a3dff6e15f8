"""W1-W5 run schedule by schedule in alternation on two trees
(pairs_w15.sh): per repeat each tree's geometric mean of vm_over over
the ten schedules and mean error (% of booked), then per schedule the
paired difference B - A of vm_over, and its mean over all pairs with a
95 % interval (Student's t).

    python3 paired_w15.py w15_9f6caeb3 w15_f4d93169
"""
import collections
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                *[os.pardir] * 4))
from tests.benchmarks import discipline  # noqa: E402


def load(d):
    rows = [json.loads(line) for line in open(d + '/badis.jsonl')]
    none = {(r['shape'], r['alloc'], r['repeat']): r['passes']
            for r in rows if r['estimator'] == 'none'}
    return {(r['shape'], r['alloc'], r['repeat']):
            (none[(r['shape'], r['alloc'], r['repeat'])] / r['passes'],
             r['errors']['badis']['all'])
            for r in rows if r['estimator'] == 'badis' and
            (r['shape'], r['alloc'], r['repeat']) in none}


def interval(v):
    s = discipline.summarize(v)
    if s['half_width'] is None:
        return '%+.4f (n=1)' % s['mean']
    return '%+.4f [%+.4f, %+.4f] (n=%d)' % (s['mean'], s['low'], s['high'],
                                            s['n'])


a_dir, b_dir = sys.argv[1:3]
a, b = load(a_dir), load(b_dir)
for name, runs in ((a_dir, a), (b_dir, b)):
    per = collections.defaultdict(list)
    for (s, al, rep), v in runs.items():
        per[rep].append(v)
    print('%-16s %s' % (name, '   '.join(
        'r%d %.4f / %.2f %%' % (rep, math.exp(statistics.mean(
            math.log(x) for x, _ in vs)), statistics.mean(e for _, e in vs))
        if len(vs) == 10 else 'r%d: %d of 10' % (rep, len(vs))
        for rep, vs in sorted(per.items()))))
print('\nschedule  %s - %s per repeat' % (b_dir, a_dir))
diffs = []
by_rep = collections.defaultdict(list)
for key in sorted(set(a) & set(b)):
    d = b[key][0] - a[key][0]
    diffs.append(d)
    by_rep[key[2]].append(math.log(b[key][0]) - math.log(a[key][0]))
    print('%s,%s r%d  %.3f  %.3f  %+.3f' % (key + (a[key][0], b[key][0], d)))
print('\nall pairs: %s' % interval(diffs))
print('geometric mean ratio B/A per complete repeat: %s' % ', '.join(
    'r%d %.4f' % (rep, math.exp(statistics.mean(v)))
    for rep, v in sorted(by_rep.items()) if len(v) == 10))
