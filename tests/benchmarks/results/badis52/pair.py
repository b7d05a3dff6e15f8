"""Paired per-case differences between two configurations of a
bench_model model.jsonl (vm_over = the `none` run's operations / the
run's, keyed by pattern, allocation and seed): per case the means before
and after, the paired difference with a 95 % normal half-width, the
saved share. Usage: python pair.py model.jsonl REF NEW"""
import collections
import json
import statistics as st
import sys


def half_width(xs):
    if len(xs) < 2:
        return 0.0
    return 1.96 * st.stdev(xs) / len(xs) ** 0.5


def main(path, a, b):
    rows = [json.loads(line) for line in open(path)]
    ref = {(r['pattern'], r['alloc'], r['seed']): r['ops']
           for r in rows if r['label'] == 'none'}
    by = collections.defaultdict(dict)
    for r in rows:
        if r['label'] in (a, b):
            key = (r['pattern'], r['start'], r['alloc'], r['seed'])
            vm_over = ref[(key[0], key[2], key[3])] / r['ops']
            by[key][r['label']] = (vm_over, r['saved_pct'])
    cases = collections.defaultdict(list)
    for key, v in by.items():
        if a in v and b in v:
            cases[key[:3]].append((v[a], v[b]))
    every = []
    for case, pairs in sorted(cases.items()):
        d = [y[0] - x[0] for x, y in pairs]
        every += d
        print('%-10s %-7s %s %d %.3f -> %.3f (worst %.3f -> %.3f) '
              'd=%+.4f±%.4f saved %.1f -> %.1f' % (
                  case[0], case[1], case[2], len(pairs),
                  st.mean(x[0] for x, _ in pairs),
                  st.mean(y[0] for _, y in pairs),
                  max(x[0] for x, _ in pairs), max(y[0] for _, y in pairs),
                  st.mean(d), half_width(d),
                  st.mean(x[1] for x, _ in pairs),
                  st.mean(y[1] for _, y in pairs)))
    print('all d=%+.4f±%.4f n=%d' % (st.mean(every), half_width(every),
                                     len(every)))


if __name__ == '__main__':
    main(*sys.argv[1:4])
