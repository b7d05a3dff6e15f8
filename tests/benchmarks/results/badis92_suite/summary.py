"""Stop 92's pattern suite on TCG (queue*.sh): one row
per run (vm_over against the twin, memory saved beside the one-poll-late
oracle's, S_more / S_less with one poll of allowance, MiB read back from
swap), then each case's pairs, their median vm_over, and per guest size
the cases over each of the issue's goals.

    python3 summary.py [DIR ...]      (default: every tcg* directory here)

A row's swap-in is the guest's swap_in counter (pages of 4 KiB) over the
polls the run recorded, so it counts from the agent's start.
"""
import glob
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PAGE_KB = 4


def rows(dirs):
    """Every run of the directories' patterns.jsonl, with its guest size
    in MiB as ``size``."""
    paths = [os.path.join(d, 'patterns.jsonl') for d in dirs]
    for path in filter(os.path.exists, paths):
        with open(path) as f:
            runs = [json.loads(line) for line in f if line.strip()]
        for r in runs:
            yield dict(r, size='%d' % (r['booked_kb'] // 1024))


def _pct(x):
    return '-' if x is None else '%.1f' % x


def swapin_mib(r):
    counts = [x['swap_in'] for x in r['rows'] if x.get('swap_in') is not None]
    if len(counts) < 2:
        return None
    return (counts[-1] - counts[0]) * PAGE_KB / 1024.0


def vm_over(r):
    return r['twin_ops'] / r['ops']


def runs_table(runs):
    print('| MiB | pattern | start | estimator | vm_over | saved % | '
          'oracle saved % | S_more % | S_less % | swap-in MiB | '
          'bad shrinks |')
    print('|---|---|---|---|---|---|---|---|---|---|---|')
    for r in runs:
        allow = (r.get('errors') or {}).get('allowance') or {}
        sw = swapin_mib(r)
        print('| %s | %s | %s | %s | %.3f | %.1f | %s | %s | %s | %s | %s |'
              % (r['size'], r['pattern'], r['start'], r['estimator'],
                 vm_over(r), r['saved_pct'],
                 _pct(r.get('oracle_saved_pct')),
                 _pct(allow.get('S_more')), _pct(allow.get('S_less')),
                 '-' if sw is None else '%.0f' % sw,
                 r.get('bad_shrinks', '-')))


def _cases(runs):
    cases = {}
    for r in runs:
        cases.setdefault((r['size'], r['pattern'], r['start']), []).append(r)
    return sorted(cases.items(),
                  key=lambda kv: (int(kv[0][0]),) + kv[0][1:])


def per_case(runs):
    """Each case's pairs and their median vm_over (the goal is on a
    case's median, 1.03, and on any pair, 1.10), then per size how many
    cases meet each."""
    cases = _cases(runs)
    print()
    print('| MiB | pattern | start | pairs | vm_over each | median | '
          'saved % each | S_more % each | S_less % each |')
    print('|---|---|---|---|---|---|---|---|---|')
    for (size, pattern, start), rs in cases:
        allow = [(r.get('errors') or {}).get('allowance') or {} for r in rs]
        print('| %s | %s | %s | %d | %s | %.3f | %s | %s | %s |' % (
            size, pattern, start, len(rs),
            ', '.join('%.3f' % vm_over(r) for r in rs),
            statistics.median(vm_over(r) for r in rs),
            ', '.join('%.1f' % r['saved_pct'] for r in rs),
            ', '.join(_pct(a.get('S_more')) for a in allow),
            ', '.join(_pct(a.get('S_less')) for a in allow)))
    for size in sorted({k[0] for k, _ in cases}, key=int):
        medians = [(statistics.median(vm_over(r) for r in rs), k)
                   for k, rs in cases if k[0] == size]
        pairs = [(vm_over(r), k) for k, rs in cases if k[0] == size
                 for r in rs]
        print()
        print('%s MiB, %d cases, %d pairs: the cases\' medians %.3f '
              '(median), %.3f (worst); cases over 1.03: %s; pairs over '
              '1.10: %s' % (
                  size, len(medians), len(pairs),
                  statistics.median(v for v, _ in medians),
                  max(v for v, _ in medians),
                  ', '.join('%s/%s %.3f' % (k[1], k[2], v)
                            for v, k in medians if v > 1.03) or 'none',
                  ', '.join('%s/%s %.3f' % (k[1], k[2], v)
                            for v, k in pairs if v > 1.10) or 'none'))


def main(argv):
    dirs = argv or sorted(glob.glob(os.path.join(HERE, 'tcg*')))
    runs = sorted(rows(dirs), key=lambda r: (
        int(r['size']), r['pattern'], r['start'], r['estimator']))
    runs_table(runs)
    per_case([r for r in runs if r['estimator'] == 'badis'])


if __name__ == '__main__':
    main(sys.argv[1:])
