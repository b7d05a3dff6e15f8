"""Issue 13's redis pairs, unpinned, stops 63 and 64 together: vm_over
(twin / run operations) per estimator and start, with the suite's goal
figures (median, worst), the mean and its 95 % Student-t interval, and
the memory saved. Run from this directory: python summary.py [--quiet]
(--quiet: without the rounds that ran beside a consolidation sweep)"""
import glob
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                *[os.pardir] * 4))
from tests.benchmarks import discipline  # noqa: E402


def interval(xs):
    s = discipline.summarize(xs)
    return s['mean'], s['half_width']


# Rounds that ran beside a consolidation sweep on the other core (the
# sweep's CPU lands on either guest of a pair): stop 63's rounds 1-2 (at
# nice 19), this stop's rounds 7-10.
DISTURBED = {'../badis53/aa_r1', '../badis53/aa_r2', 'badis_r7', 'aa_r7',
             'badis_r8', 'aa_r8', 'badis_r9', 'aa_r9', 'badis_r10',
             'aa_r10'}
QUIET = '--quiet' in sys.argv

kinds = {}
for path in sorted(glob.glob('../badis53/*_r*/patterns.jsonl')
                   + glob.glob('*_r*/patterns.jsonl')):
    if QUIET and os.path.dirname(path) in DISTURBED:
        continue
    for line in open(path):
        r = json.loads(line)
        if not r.get('twin_ops') or r.get('pinned'):
            continue
        kind = '%s %s' % (r['estimator'], r['start'])
        kinds.setdefault(kind, []).append(
            (r['twin_ops'] / r['ops'], r.get('saved_pct')))
for kind, runs in sorted(kinds.items()):
    vals = [v for v, _ in runs]
    m, h = interval(vals)
    saved = [s for _, s in runs if s is not None]
    print('%-14s n=%2d vm_over median %.3f worst %.3f mean %.3f%s'
          '  saved %s' % (
              kind, len(vals), statistics.median(vals), max(vals), m,
              ' ± %.3f' % h if h is not None else '',
              '%.1f-%.1f %%' % (min(saved), max(saved)) if saved else '-'))
    print('%14s %s' % ('', ' '.join('%.3f' % v for v in vals)))
