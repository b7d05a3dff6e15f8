"""The whole pattern suite at stop 75's defaults on TCG (queue.sh): per
pattern and start, vm_over against the twin (the issue's goals per
workload: median <= 1.03, worst <= 1.10), memory saved beside the
one-poll-late oracle's, and S_more / S_less with one poll of allowance
(<= 5 % where the working set is well defined); then the suite's median
and worst vm_over and the cases over each goal.

    python3 summary.py [DIR ...]      (default: tcg_*)
"""
import glob
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def rows(dirs):
    for d in dirs:
        path = os.path.join(d, 'patterns.jsonl')
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                if line.strip():
                    yield json.loads(line)


def _pct(x):
    return '-' if x is None else '%.1f' % x


def main(argv):
    dirs = argv or sorted(glob.glob(os.path.join(HERE, 'tcg_*')))
    print('| pattern | start | vm_over | saved % | oracle saved % | '
          'S_more % | S_less % | bad shrinks |')
    print('|---|---|---|---|---|---|---|---|')
    vm = []
    for r in sorted(rows(dirs), key=lambda r: (r['pattern'], r['start'])):
        v = r['twin_ops'] / r['ops']
        vm.append((v, r['pattern'], r['start']))
        allow = r.get('errors', {}).get('allowance', {})
        oracle = r.get('oracle_saved_pct')
        print('| %s | %s | %.3f | %.1f | %s | %s | %s | %s |' % (
            r['pattern'], r['start'], v, r['saved_pct'],
            '-' if oracle is None else '%.1f' % oracle,
            _pct(allow.get('S_more')), _pct(allow.get('S_less')),
            r.get('bad_shrinks', '-')))
    if not vm:
        return
    values = [v for v, _, _ in vm]
    print()
    print('vm_over over %d cases: median %.3f, worst %.3f; over 1.03: %s; '
          'over 1.10: %s' % (
              len(vm), statistics.median(values), max(values),
              ', '.join('%s/%s %.3f' % (p, s, v) for v, p, s in vm
                        if v > 1.03) or 'none',
              ', '.join('%s/%s %.3f' % (p, s, v) for v, p, s in vm
                        if v > 1.10) or 'none'))


if __name__ == '__main__':
    main(sys.argv[1:])
