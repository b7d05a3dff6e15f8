"""Paired vm_over and memory saved per pattern between two configs of
bench_model's model.jsonl (python3 pair.py A.jsonl LABEL_A [B.jsonl]
LABEL_B: B defaults to A, the same file). vm_over is the seed's `none`
run's operations over the run's; pairs are the same pattern, start and
seed."""
import collections
import json
import statistics as st
import sys


def load(path, label):
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    none = {(r['pattern'], r['seed']): r['ops'] for r in rows
            if r['label'] == 'none'}
    return {(r['pattern'], r['start'], r['seed']):
            (none[(r['pattern'], r['seed'])] / r['ops'], r['saved_pct'])
            for r in rows if r['label'] == label}


def main(argv):
    if len(argv) == 3:
        argv = [argv[0], argv[1], argv[0], argv[2]]
    a, b = load(argv[0], argv[1]), load(argv[2], argv[3])
    per = collections.defaultdict(list)
    for k in a:
        if k in b:
            per[k[0]].append(a[k] + b[k])
    dv, ds = [], []
    for p, pairs in per.items():
        va, sa, vb, sb = (st.mean(x[i] for x in pairs) for i in range(4))
        print('%-16s vm_over %.3f -> %.3f (%+.3f)  saved %5.1f -> %5.1f '
              '(%+.1f)' % (p, va, vb, vb - va, sa, sb, sb - sa))
        dv += [x[2] - x[0] for x in pairs]
        ds += [x[3] - x[1] for x in pairs]
    half = (lambda v: 1.96 * st.stdev(v) / len(v) ** 0.5)
    print('all: vm_over %+.4f +- %.4f, saved %+.2f +- %.2f points (n=%d)'
          % (st.mean(dv), half(dv), st.mean(ds), half(ds), len(dv)))


if __name__ == '__main__':
    main(sys.argv[1:])
