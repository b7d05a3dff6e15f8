"""One line per TCG run of this directory (bench_patterns'
patterns.jsonl under tcg_*): vm_over against the twin, % of the booking
saved, what the guest read back from swap (MiB), bad shrinks; then per
pattern and start the old rule (`defaults`: the defaults before this
stop, in tcg_*; from queue3.sh on, the same options set explicitly) and
`both` (probe_burst_s = 3 and probe_rise_written, tcg_both_*) side by
side, paired by round. Usage: python tcg_summary.py [DIR LABEL PREFIX] (another
stop's runs: DIR/tcg_*, the other rule's, labelled LABEL, in
DIR/PREFIX<pattern>; badis69: ../badis69 rc tcg_rc_)"""
import collections
import glob
import json
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def summarize(here, other, prefix):
    """Print the runs of ``here``/tcg_*: ``defaults`` in tcg_<pattern>,
    ``other`` in <prefix><pattern>, a round _rN at the end of the name
    (1 without); badis69's tcg_summary.py calls it too."""
    labels = ('defaults', other)
    runs = collections.defaultdict(dict)
    for path in sorted(glob.glob(os.path.join(here,
                                              'tcg_*/patterns.jsonl'))):
        name = path.split('/')[-2]
        label = other if name.startswith(prefix) else 'defaults'
        m = re.search(r'_r(\d+)$', name)
        rnd = m.group(1) if m else '1'
        for line in open(path):
            r = json.loads(line)
            if r['estimator'] in ('none', 'oracle'):
                continue
            back = (r['rows'][-1].get('swap_in') or 0) / 1024
            vo = r['twin_ops'] / r['ops']
            print('%-12s %-6s %-8s r%s vm_over %.3f saved %5.1f %% read '
                  'back %5.1f MiB bad %d'
                  % (r['pattern'], r['start'], label, rnd, vo,
                     r['saved_pct'], back, r['bad_shrinks']))
            runs[(r['pattern'], r['start'])].setdefault(label, {})[rnd] = (
                vo, r['saved_pct'])
    print()
    dv, ds, allv = [], [], collections.defaultdict(list)
    for case, by in sorted(runs.items()):
        cells = []
        for label in labels:
            v = by.get(label, {})
            allv[label] += [x[0] for x in v.values()]
            cells.append(', '.join('%.3f / %.1f' % v[k] for k in sorted(v)))
        for k in set(by.get(labels[0], {})) & set(by.get(labels[1], {})):
            dv.append(by[labels[1]][k][0] - by[labels[0]][k][0])
            ds.append(by[labels[1]][k][1] - by[labels[0]][k][1])
        print('%-12s %-6s defaults %-32s %s %s'
              % (case + (cells[0], other, cells[1])))
    for label, v in allv.items():
        if v:
            print('%s: vm_over median %.3f worst %.3f (n=%d)'
                  % (label, statistics.median(v), max(v), len(v)))
    if dv:
        print('paired (%s - defaults, n=%d): vm_over %+.3f, saved %+.1f '
              'points' % (other, len(dv), statistics.mean(dv),
                          statistics.mean(ds)))


if __name__ == '__main__':
    if len(sys.argv) == 4:
        summarize(os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 1:
        summarize(HERE, 'both', 'tcg_both_')
    else:
        sys.exit(__doc__)
