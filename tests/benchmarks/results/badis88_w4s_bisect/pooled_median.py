"""Badis's vm_over median over the ten W1-W5 schedules, per repeat,
pooled from several bench_badis series of one commit, with the 95 %
interval (Student's t) of their mean: the issue's "median <= 1.03" on
more repeats than one series has.

    python3 pooled_median.py ../badis87_defaults/w15 w15_f4d93169
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                *[os.pardir] * 4))
from tests.benchmarks import discipline  # noqa: E402

values = []
for d in sys.argv[1:]:
    data = json.load(open(d + '/badis.json'))
    v = data['summary']['badis']['intervals']['vm_over_median']['values']
    commits = {r['memmut_commit'] for r in data['runs']} if 'runs' in data \
        else None
    print('%-28s %s  commits %s' % (d[-28:], ' '.join('%.4f' % x for x in v),
                                    sorted(commits) if commits else '?'))
    values += v
s = discipline.summarize(values)
print('pooled: %.4f [%.4f, %.4f] (n=%d)' % (
    s['mean'], s['low'], s['high'], s['n']))
