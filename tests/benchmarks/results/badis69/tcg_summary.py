"""One line per TCG run of this directory (bench_patterns'
patterns.jsonl under tcg_*): vm_over against the twin, % of the booking
saved, what the guest read back from swap (MiB), bad shrinks; then per
pattern and start the defaults (tcg_<pattern>[_rN]) and
pinned_drop_rebase + probe_chain (tcg_rc_<pattern>[_rN]) side by side,
paired by round. Usage: python tcg_summary.py"""
import collections
import glob
import json
import os
import re
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
LABELS = ('defaults', 'rc')
runs = collections.defaultdict(dict)
for path in sorted(glob.glob(os.path.join(HERE, 'tcg_*/patterns.jsonl'))):
    name = path.split('/')[-2]
    label = 'rc' if name.startswith('tcg_rc_') else 'defaults'
    m = re.search(r'_r(\d+)$', name)
    rnd = m.group(1) if m else '1'
    for line in open(path):
        r = json.loads(line)
        if r['estimator'] in ('none', 'oracle'):
            continue
        back = (r['rows'][-1].get('swap_in') or 0) / 1024
        vo = r['twin_ops'] / r['ops']
        print('%-12s %-6s %-8s r%s vm_over %.3f saved %5.1f %% read back '
              '%5.1f MiB bad %d' % (r['pattern'], r['start'], label, rnd,
                                    vo, r['saved_pct'], back,
                                    r['bad_shrinks']))
        runs[(r['pattern'], r['start'])].setdefault(label, {})[rnd] = (
            vo, r['saved_pct'])
print()
dv, ds, allv = [], [], collections.defaultdict(list)
for case, by in sorted(runs.items()):
    cells = []
    for label in LABELS:
        v = by.get(label, {})
        allv[label] += [x[0] for x in v.values()]
        cells.append(', '.join('%.3f / %.1f' % v[k] for k in sorted(v)))
    for k in set(by.get(LABELS[0], {})) & set(by.get(LABELS[1], {})):
        dv.append(by[LABELS[1]][k][0] - by[LABELS[0]][k][0])
        ds.append(by[LABELS[1]][k][1] - by[LABELS[0]][k][1])
    print('%-12s %-6s defaults %-32s rc %s' % (case + (cells[0], cells[1])))
for label, v in allv.items():
    if v:
        print('%s: vm_over median %.3f worst %.3f (n=%d)'
              % (label, statistics.median(v), max(v), len(v)))
if dv:
    print('paired (rc - defaults, n=%d): vm_over %+.3f, saved %+.1f points'
          % (len(dv), statistics.mean(dv), statistics.mean(ds)))
