"""Per pattern and start, vm_over of every twin pair at stop 75's
defaults (``../badis75_suite`` and this directory) and their median: the
issue's goal is per workload and both starts, median <= 1.03 and worst
<= 1.10, which one pair per case cannot judge. Also S_more / S_less (one
poll of allowance, % of booked) per pair.

    python3 medians.py [DIR ...]
      (default: ../badis75_suite/tcg_* and ./tcg_*)
"""
import glob
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'badis75_suite'))
import summary  # noqa: E402


def runs(dirs):
    """Badis's twin-pair runs of ``dirs`` (``summary.rows`` of
    ../badis75_suite reads their patterns.jsonl)."""
    for r in summary.rows(dirs):
        if r.get('estimator') == 'badis' and r.get('twin_ops'):
            yield r


def _errs(r, key):
    # the one-poll-allowance errors bench_patterns recorded
    return ((r.get('errors') or {}).get('allowance') or {}).get(key)


def _fmt(xs):
    return ', '.join('-' if x is None else '%.1f' % x for x in xs)


def main(argv):
    dirs = argv or (sorted(glob.glob(os.path.join(HERE, '..',
                                                  'badis75_suite', 'tcg_*')))
                    + sorted(glob.glob(os.path.join(HERE, 'tcg_*'))))
    cases = {}
    for r in runs(dirs):
        cases.setdefault((r['pattern'], r['start']), []).append(r)
    print('| pattern | start | pairs | vm_over of each pair | median | '
          'S_more % | S_less % |')
    print('|---|---|---|---|---|---|---|')
    over = []
    medians = []
    for (pattern, start), rs in sorted(cases.items()):
        vm = [r['twin_ops'] / r['ops'] for r in rs]
        med = statistics.median(vm)
        medians.append(med)
        if med > 1.03 or max(vm) > 1.10:
            over.append('%s/%s %.3f (worst %.3f)'
                        % (pattern, start, med, max(vm)))
        s_more = [_errs(r, 'S_more') for r in rs]
        s_less = [_errs(r, 'S_less') for r in rs]
        print('| %s | %s | %d | %s | %.3f | %s | %s |'
              % (pattern, start, len(rs),
                 ', '.join('%.3f' % v for v in vm), med, _fmt(s_more),
                 _fmt(s_less)))
    print()
    print('%d cases; median of the case medians %.3f, worst case median '
          '%.3f; over the goals (median > 1.03 or a pair > 1.10): %s'
          % (len(medians), statistics.median(medians), max(medians),
             '; '.join(over) or 'none'))


if __name__ == '__main__':
    main(sys.argv[1:])
