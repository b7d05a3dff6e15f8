"""Stop 63's redis pairs: vm_over (twin / run operations) per kind of
pair, with the mean and its 95 % Student-t interval, and Badis and
observe against the A/A pairs (the bed's own bias). Run from this
directory: python summary.py"""
import glob
import json
import math
import statistics

T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447,
       7: 2.365, 8: 2.306}


def interval(xs):
    m = statistics.mean(xs)
    if len(xs) < 2:
        return m, None
    return m, T95[len(xs) - 1] * statistics.stdev(xs) / math.sqrt(len(xs))


kinds = {}
for path in sorted(glob.glob('*_r*/patterns.jsonl')):
    d = path.split('/')[0]
    for line in open(path):
        r = json.loads(line)
        if not r.get('twin_ops'):
            continue
        kind = '%s %s %s' % ('pinned' if r.get('pinned') else 'unpinned',
                             r['estimator'], r['start'])
        kinds.setdefault(kind, []).append(
            (d, r['twin_ops'] / r['ops'], r.get('saved_pct')))
aa = [v for _, v, _ in kinds.get('unpinned none boot', [])]
for kind, runs in sorted(kinds.items()):
    vals = [v for _, v, _ in runs]
    m, h = interval(vals)
    print('%-26s n=%d vm_over %s  mean %.3f%s  saved %s' % (
        kind, len(vals), ' '.join('%.3f' % v for v in vals), m,
        ' ± %.3f' % h if h is not None else '',
        ' '.join('%.1f' % s for _, _, s in runs if s is not None)))
if aa:
    m, h = interval(aa)
    print('unpinned A/A bias: %.3f ± %.3f (n=%d)' % (m, h, len(aa)))
