"""Per repeat: the geometric mean of vm_over over the ten W1-W5
schedules and the mean error (% of booked), for each bench_badis series
given; then per schedule, the mean vm_over over the repeats.

    python3 vmover.py w15 w15_off w15_s77 ../badis77_reuse_w15
"""
import collections
import json
import math
import sys


def load(d):
    rows = [json.loads(line) for line in open(d + '/badis.jsonl')]
    none = {(r['shape'], r['alloc'], r['repeat']): r['passes']
            for r in rows if r['estimator'] == 'none'}
    per = collections.defaultdict(dict)
    for r in rows:
        key = (r['shape'], r['alloc'], r['repeat'])
        if r['estimator'] == 'badis' and key in none:
            per[r['repeat']][key[:2]] = (none[key] / r['passes'],
                                         r['errors']['badis']['all'])
    return per


series = {d: load(d) for d in sys.argv[1:]}
for d, per in series.items():
    cells = []
    for rep, cases in sorted(per.items()):
        if len(cases) < 10:
            cells.append('r%d: %d of 10 schedules' % (rep, len(cases)))
            continue
        geo = math.exp(sum(math.log(v) for v, _ in cases.values()) / 10)
        err = sum(e for _, e in cases.values()) / 10
        cells.append('r%d %.4f / %.2f %%' % (rep, geo, err))
    print('%-24s %s' % (d, '   '.join(cells)))
cases = sorted({k for per in series.values() for c in per.values()
                for k in c})
print('\nschedule  ' + '  '.join('%-22s' % d[-22:] for d in series))
for k in cases:
    out = []
    for per in series.values():
        v = [c[k][0] for c in per.values() if k in c]
        out.append('%-22s' % ('%.3f (%s)' % (sum(v) / len(v), ' '.join(
            '%.3f' % x for x in v)) if v else '-'))
    print('%-9s %s' % ('%s,%s' % k, '  '.join(out)))
