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
import statistics
import sys

T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447,
        7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179,
        13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101,
        19: 2.093, 20: 2.086}


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
    m = statistics.mean(v)
    if len(v) < 2:
        return '%+.4f (n=1)' % m
    h = T975.get(len(v) - 1, 1.96) * statistics.stdev(v) / math.sqrt(len(v))
    return '%+.4f [%+.4f, %+.4f] (n=%d)' % (m, m - h, m + h, len(v))


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
