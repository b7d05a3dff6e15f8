"""The working-set function against one interval's count, on synthetic
page-reference streams (issue 13, item 3). No guest: a simulation.

    python -m tests.benchmarks.bench_ws_curve [--repeats 5] [--horizon S]
        [--out DIR]

Each stream (a sweep slower than the round, uniform random, Zipf 0.8 and
1.2, a moving hot set, load-then-idle) starts by touching every page once
(the data loaded: a later first reference is a swap-in, not a fresh
page) and runs for a warm-up, then one cycle
is read through the simulated stream sampler: the accessed state cleared
once, read at tau, 2 tau, ... up to the horizon. Compared, as a fraction
of the guest's memory, and by the fault rate an LRU memory of that size
has on the stream (in multiples of the swap-in bound):

* ``interval``: the pages touched in one round (what Badis's sampled
  estimate is without the curve);
* ``curve``: W(w*) under the bound (every page read, as smaps);
* ``curve n=100``: the same from 100 sampled pages (page_idle, kmod),
  with the Wilson upper bound of the slope;
* ``LRU min``: the smallest LRU memory whose fault rate is within the
  bound (the definition's reference).

Repeats draw new streams (seeds); the figures are means with 95 %
intervals (tests/benchmarks/discipline.py). Results:
tests/benchmarks/results/ws_curve_streams.{json,md} (``_hH`` for another
horizon).
"""

import argparse
import json
import os
import random
import shlex
import sys

from memmut.agent.wss.sampling import simulated
from memmut.agent.wss import ws_curve
from memmut.evaluation import ref_streams
from tests.benchmarks import discipline

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, 'results')
PAGES = 8000            # guest memory, 4 KiB pages
RATE = 4000             # references per second
ROUND = 1.0             # the round (one interval's count)
TAU = 0.25              # first read after the clear
HORIZON = 16.0
WARM = 20.0
BOUND = 40              # swap-ins per second allowed: 1 % of references
SAMPLED = 100
KB = 4


class _VM:
    uuid = 'vm'


def stream(kind, seed):
    return list(ref_streams.preloaded(PAGES, _refs(kind, seed)))


def _refs(kind, seed):
    rng = random.Random(seed)
    count = int((WARM + HORIZON + 1) * RATE) - PAGES
    if kind == 'sweep (1.5 s)':
        return ref_streams.sweep(6000, count)
    if kind == 'uniform':
        return ref_streams.uniform(3000, count, rng)
    if kind == 'zipf0.8':
        return ref_streams.zipf(PAGES, 0.8, count, rng)
    if kind == 'zipf1.2':
        return ref_streams.zipf(PAGES, 1.2, count, rng)
    if kind == 'moving hot set':
        return ref_streams.moving_hot(1000, 2.0, count, RATE, PAGES)
    if kind == 'load_idle':
        return (i % 2000 for i in range(count))    # after the load
    raise ValueError(kind)


KINDS = ['sweep (1.5 s)', 'uniform', 'zipf0.8', 'zipf1.2', 'moving hot set',
         'load_idle']


def reads(pages, sampled, seed):
    g = simulated.ReferenceStream(ref_streams.timed(pages, RATE), PAGES)
    # the sampler's own generator: not the stream's (a shared seed would
    # pick the pages the Zipf shuffle put last)
    s = simulated.StreamSampler({'vm': g}, pages=sampled,
                                rng=random.Random(seed + 7919))
    g.advance(WARM)
    s.begin(_VM, None)
    out = []
    ages = []
    age = TAU
    while age <= HORIZON + 1e-9:
        ages.append(age)
        age *= 2
    for a in sorted(set(ages + [ROUND])):
        g.advance(WARM + a)
        out.append(ws_curve.read_of(s.peek(_VM, None)))
    return out


def one(kind, seed):
    pages = stream(kind, seed)
    dists = ref_streams.stack_distances(pages)
    start = int(WARM * RATE)
    exact = reads(pages, None, seed)
    sampled = reads(pages, SAMPLED, seed)
    curve = ws_curve.choose(exact, BOUND * KB)
    curve_n = ws_curve.choose(sampled, BOUND * KB, span_kb=PAGES * KB)
    sizes = {
        'interval': (next(r.kb for r in exact if r.age_s == ROUND) // KB,
                     None),
        'curve': (curve.kb // KB, curve.bounded),
        'curve n=100': (curve_n.kb // KB, curve_n.bounded),
        'LRU min': (ref_streams.smallest_frames(dists, start, BOUND, RATE,
                                                PAGES), None),
    }
    return {name: {'fraction': frames / PAGES,
                   'faults_per_bound': ref_streams.lru_rate(
                       dists, start, min(frames, PAGES), RATE) / BOUND,
                   'bounded': bounded}
            for name, (frames, bounded) in sizes.items()}


def main(argv=None):
    global HORIZON
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--repeats', type=int, default=5)
    p.add_argument('--seed', type=int, default=1)
    p.add_argument('--horizon', type=float, default=HORIZON,
                   help='the longest window (s)')
    p.add_argument('--out', default=RESULTS)
    args = p.parse_args(argv)
    HORIZON = args.horizon
    rec = discipline.Record(seed=args.seed, repeats=args.repeats)
    values = {}
    for kind, rep in rec.order(KINDS):
        res = one(kind, args.seed * 1000 + rep)
        for name, v in res.items():
            for k, x in v.items():
                if x is None:
                    continue
                x = float(x)
                values.setdefault(kind, {}).setdefault(name, {}).setdefault(
                    k, []).append(x)
    rec.finish()
    summary = {kind: {name: {k: discipline.summarize(xs)
                             for k, xs in v.items()}
                      for name, v in by.items()}
               for kind, by in values.items()}
    names = ['interval', 'curve', 'curve n=100', 'LRU min']
    rows = []
    for kind in KINDS:
        cells = [kind]
        for name in names:
            s = summary[kind][name]
            met = s.get('bounded')
            cells.append('%s / %s%s' % (
                discipline.fmt(s['fraction'], '.1f', 100, ' %'),
                discipline.fmt(s['faults_per_bound'], '.2f'),
                '' if met is None else ' (met %d/%d)' % (
                    round(met['mean'] * met['n']), met['n'])))
        rows.append(cells)
    md = ['# The working-set function on synthetic streams (issue 13)', '',
          'Generated by `python -m tests.benchmarks.bench_ws_curve %s`. '
          'Guest of %d pages, %d references/s, round %g s, reads at %g s x '
          '2^k up to %g s, swap-in bound %d pages/s (1 %% of references). '
          'Cells: allocation (%% of guest memory) / fault rate of an LRU '
          'memory of that size (x the bound; <= 1 meets it); mean +- 95 %% '
          'interval over %d streams of each kind.' % (
              shlex.join(argv if argv is not None else sys.argv[1:]), PAGES,
              RATE, ROUND, TAU, HORIZON, BOUND, args.repeats), '',
          discipline.markdown_table(['stream'] + names, rows), '',
          '- interval: pages touched in one round (Badis without the '
          'curve); curve: W(w*) reading every page; curve n=100: from 100 '
          'sampled pages with the Wilson upper bound of the slope; LRU '
          'min: the smallest LRU memory within the bound.',
          '- (met k/n): in k of the n streams a window within the '
          'horizon had a slope under the bound; otherwise the curve gives '
          'the largest W read, and the allocation may be short of the '
          'bound (the horizon is too short for the tail: Zipf).',
          '- The moving hot set drifts at 500 pages/s, above the bound: '
          'no window meets it and the curve takes all the horizon touched '
          '(the LRU reference then needs all the memory the set visits).',
          '']
    os.makedirs(args.out, exist_ok=True)
    name = 'ws_curve_streams%s' % (
        '' if args.horizon == 16.0 else '_h%g' % args.horizon)
    with open(os.path.join(args.out, name + '.json'), 'w') as f:
        json.dump({'summary': summary, 'discipline': rec.as_dict(),
                   'setup': {'pages': PAGES, 'rate': RATE, 'round': ROUND,
                             'tau': TAU, 'horizon': HORIZON,
                             'bound': BOUND, 'sampled': SAMPLED}},
                  f, indent=1)
    with open(os.path.join(args.out, name + '.md'), 'w') as f:
        f.write('\n'.join(md))
    print('\n'.join(md))


if __name__ == '__main__':
    main()
