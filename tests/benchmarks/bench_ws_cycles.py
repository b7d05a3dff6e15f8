"""The working-set curve's cycles with and without the running-cycle rule,
on synthetic page-reference streams (issue 13). No guest: a simulation.

    python -m tests.benchmarks.bench_ws_cycles [--repeats 5] [--rounds 8]
        [--fall-detect] [--out DIR]

The agent's read schedule (memmut.evaluation.ws_cycles: a clear every
``--rounds`` rounds of 1 s, reads at 0.25, 0.5 s and every round) runs
over each stream, and every round's allocation is judged by the fault rate
an LRU memory of that size has over the next 4 s (memmut.evaluation.
ref_streams). Compared:

* ``merged``: the running cycle extended by the previous cycle's longer
  windows (the curve before the rule);
* ``rule``: the same, except that once the running cycle is half a cycle
  old and its own curve meets the bound, it alone decides
  (memmut.agent.wss.ws_curve.choose_cycle); with ``--fall-detect``, also
  before half a cycle when the running cycle is significantly below the
  previous one at the same age (ws_curve.fell, ``[badis]
  ws_curve_fall_detect``).

Streams: stationary ones (a sweep, uniform random, Zipf 0.8 and 1.2, a
moving hot set, load-then-idle) and two whose working set falls from
6000 to 1500 pages (a sweep, uniform random) at a time drawn at random
within a cycle. Per stream: the allocation (mean over the rounds after the
first cycle, % of memory), its LRU fault rate (x the bound; <= 1 meets it)
and, for the falling ones, the lag: seconds from the fall to the first
round from which the allocation stays within 1.25 x the smallest LRU
memory that meets the bound. Means with 95 % intervals over
``--repeats`` streams (tests/benchmarks/discipline.py). Results:
tests/benchmarks/results/ws_curve_cycles_rR[_fall].{json,md}.
"""

import argparse
import json
import os
import random
import shlex
import sys

from memmut.evaluation import ref_streams
from memmut.evaluation import ws_cycles
from tests.benchmarks import discipline

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, 'results')
PAGES = 8000            # guest memory, 4 KiB pages
RATE = 4000             # references per second
ROUND = 1.0
TAU = 0.25
BOUND = 40              # swap-ins per second: 1 % of references
KB = 4
MIN_SECONDS = 56.0      # judged rounds: up to seconds(rounds) - WINDOW
WINDOW = 4.0
BEFORE, AFTER = 6000, 1500
KINDS = ['sweep', 'uniform', 'zipf0.8', 'zipf1.2', 'moving hot set',
         'load_idle', 'sweep falls', 'uniform falls']


def seconds(rounds):
    """The stream's length: a fall in the second or third cycle is
    followed by the end of the fifth at the latest."""
    return max(MIN_SECONDS, 5 * rounds * ROUND + WINDOW + 1)


def stream(kind, rounds, seed):
    """(pages, the time of the fall or None)."""
    rng = random.Random(seed)
    n = int((seconds(rounds) + 2) * RATE)
    if kind.endswith('falls'):
        # a time within the second or third cycle, drawn
        at = rounds * ROUND * (1 + 2 * rng.random())
        if kind.startswith('sweep'):
            before, after = (ref_streams.sweep(BEFORE, n),
                             ref_streams.sweep(AFTER, n))
        else:
            before, after = (ref_streams.uniform(BEFORE, n, rng),
                             ref_streams.uniform(AFTER, n, rng))
        return (list(ref_streams.preloaded(
            PAGES, ref_streams.shrinking(before, after, at, RATE))),
            at + PAGES / RATE)
    refs = {
        'sweep': lambda: ref_streams.sweep(BEFORE, n),
        'uniform': lambda: ref_streams.uniform(3000, n, rng),
        'zipf0.8': lambda: ref_streams.zipf(PAGES, 0.8, n, rng),
        'zipf1.2': lambda: ref_streams.zipf(PAGES, 1.2, n, rng),
        'moving hot set': lambda: ref_streams.moving_hot(1000, 2.0, n, RATE,
                                                         PAGES),
    }
    if kind == 'load_idle':
        return list(ref_streams.load_then_idle(2000, n, PAGES)), None
    return list(ref_streams.preloaded(PAGES, refs[kind]())), None


def one(kind, rounds, seed, fall_detect=False, short_rounds=0,
        short_pages=200, sampled=None):
    pages, fall = stream(kind, rounds, seed)
    dists = ref_streams.stack_distances(pages)
    smallest = None
    if fall is not None:
        smallest = ref_streams.smallest_frames(
            dists, int((fall + 1) * RATE), BOUND, RATE, PAGES)
    out = {}
    configs = [('merged', False, 0), ('rule', True, 0)]
    if short_rounds:
        configs.append(('short', True, short_rounds))
    for name, rule, short in configs:
        falls = []
        ch = ws_cycles.round_choices(pages, RATE, PAGES, ROUND, rounds,
                                     BOUND * KB, TAU,
                                     seconds(rounds) - WINDOW,
                                     running_rule=rule,
                                     fall_detect=rule and fall_detect,
                                     short_rounds=short,
                                     short_pages=short_pages, seed=seed,
                                     sampled=sampled,
                                     events=falls)
        judged = [(t, c) for t, c in ch if t > rounds * ROUND]
        rates = [ref_streams.lru_rate(dists, int(t * RATE), c.kb // KB,
                                      RATE, int((t + WINDOW) * RATE))
                 for t, c in judged]
        res = {'fraction': sum(c.kb // KB for _, c in judged) /
               len(judged) / PAGES,
               'faults_per_bound': sum(rates) / len(rates) / BOUND,
               'worst_faults_per_bound': max(rates) / BOUND,
               'short_falls': len(falls)}
        if fall is not None:
            ok = [c.kb // KB <= smallest * 1.25 + 8 for t, c in ch]
            times = [t for t, _ in ch]
            lag = None
            for i in range(len(ch)):
                if times[i] >= fall and all(ok[i:]):
                    lag = times[i] - fall
                    break
            res['lag_s'] = lag
            if short:
                after = [t for t in falls if t >= fall]
                res['call_lag_s'] = after[0] - fall if after else None
        out[name] = res
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--repeats', type=int, default=5)
    p.add_argument('--seed', type=int, default=1)
    p.add_argument('--rounds', type=int, default=8,
                   help='rounds of 1 s per cycle (ws_curve_rounds)')
    p.add_argument('--fall-detect', action='store_true',
                   help='the rule with the fall detector (ws_curve.fell)')
    p.add_argument('--short-rounds', type=int, default=0,
                   help='add the rule with the short-cycle set cleared '
                        'every this many rounds (short_set, [badis] '
                        'ws_curve_short_rounds)')
    p.add_argument('--short-pages', type=int, default=200,
                   help='pages of the short-cycle set')
    p.add_argument('--sampled', type=int, default=None,
                   help='the curve samples this many pages (page_idle, '
                        'kmod) instead of reading every page (smaps)')
    p.add_argument('--out', default=RESULTS)
    args = p.parse_args(argv)
    rec = discipline.Record(seed=args.seed, repeats=args.repeats)
    values = {}
    for kind, rep in rec.order(KINDS):
        res = one(kind, args.rounds, args.seed * 1000 + rep,
                  args.fall_detect, args.short_rounds, args.short_pages,
                  args.sampled)
        for name, v in res.items():
            for k, x in v.items():
                values.setdefault(kind, {}).setdefault(name, {}).setdefault(
                    k, []).append(x)
    rec.finish()
    summary = {kind: {name: {k: (discipline.summarize(xs)
                                 if any(x is not None for x in xs)
                                 else None)
                             for k, xs in v.items()}
                      for name, v in by.items()}
               for kind, by in values.items()}
    names = ['merged', 'rule'] + (['short'] if args.short_rounds else [])
    rows = []
    for kind in KINDS:
        cells = [kind]
        for name in names:
            s = summary[kind][name]
            cell = '%s / %s (worst %s)' % (
                discipline.fmt(s['fraction'], '.1f', 100, ' %'),
                discipline.fmt(s['faults_per_bound'], '.2f'),
                format(s['worst_faults_per_bound']['max'], '.2f'))
            if 'lag_s' in s:
                lags = values[kind][name]['lag_s']
                never = sum(1 for x in lags if x is None)
                cell += ' / lag %s%s' % (
                    'n/a' if s['lag_s'] is None
                    else discipline.fmt(s['lag_s'], '.1f', 1, ' s'),
                    ' (not followed in %d of %d)' % (never, len(lags))
                    if never else '')
            if name == 'short':
                falls = values[kind][name]['short_falls']
                cell += ' / falls called %d' % sum(falls)
                if 'call_lag_s' in s:
                    calls = values[kind][name]['call_lag_s']
                    missed = sum(1 for x in calls if x is None)
                    cell += ' / fall called %s after it%s' % (
                        'never' if s['call_lag_s'] is None else
                        discipline.fmt(s['call_lag_s'], '.1f', 1, ' s'),
                        ' (not in %d of %d)' % (missed, len(calls))
                        if missed else '')
            cells.append(cell)
        rows.append(cells)
    md = ['# The working-set curve\'s cycles: the running-cycle rule '
          '(issue 13)', '',
          'Generated by `python -m tests.benchmarks.bench_ws_cycles %s`. '
          'Guest of %d pages, %d references/s, rounds of %g s, a clear '
          'every %d rounds, swap-in bound %d pages/s (1 %% of references). '
          'Cells: allocation (mean over the rounds after the first cycle, '
          '%% of memory) / mean fault rate of an LRU memory of that size '
          'over the next %g s (x the bound; <= 1 meets it) (worst round) / '
          'for a falling set, the lag from the fall until the allocation '
          'stays within 1.25 x the smallest LRU memory meeting the bound. '
          'Mean +- 95 %% interval over %d streams of each kind.' % (
              shlex.join(argv if argv is not None else sys.argv[1:]), PAGES,
              RATE, ROUND, args.rounds, BOUND, WINDOW, args.repeats), '',
          discipline.markdown_table(
              ['stream', 'merged (before the rule)',
               'running-cycle rule' + (' + fall detector'
                                       if args.fall_detect else '')] +
              (['rule + short-cycle set of %d pages, cleared every %d '
                'rounds' % (args.short_pages, args.short_rounds)]
               if args.short_rounds else []), rows), '',
          '- The curve reads %s.' % (
              'every page (smaps)' if args.sampled is None else
              '%d random pages (page_idle, kmod): its levels are upper '
              'confidence limits' % args.sampled),
          '- The falling sets go from %d to %d pages at a time drawn within '
          'the second or third cycle; the rule cannot follow a fall before '
          'the first clear after it (the running cycle that saw the old '
          'set keeps it), so its lag is that wait plus half a cycle%s.' % (
              BEFORE, AFTER,
              ' (with the fall detector, plus three rounds when the '
              'running curve has been flat for half its age by then; the '
              'reads are cumulative since the clear, so no detector on '
              'them sees a fall earlier)' if args.fall_detect else ''),
          '- A pattern whose tail the horizon cannot show (Zipf at short '
          'cycles) is not met by either: the rule only applies when the '
          'running curve meets the bound.'] + ([
              '- With the short-cycle set (memmut.agent.wss.short_set): a '
              'fall shows at the end of the first short window that starts '
              'after it (%d to %d rounds), when the set it fell to is flat '
              'within the window; "falls called" counts the rounds at '
              'which it capped the allocation and started a new cycle, '
              'and "fall called ... after it" is the time from the fall '
              'to the first such round. '
              'Every stream begins by touching every page (2 s of load): '
              'the fall from that load to the stream is one call per '
              'stream, and it is right (without the short set the second '
              'cycle still holds the whole memory, which is where the '
              'rule\'s lower fault rate on the moving hot set comes from; '
              'from the third cycle on both give the same allocation).' % (
                  args.short_rounds, 2 * args.short_rounds)]
              if args.short_rounds else []) + ['']
    os.makedirs(args.out, exist_ok=True)
    name = 'ws_curve_cycles_r%d%s%s%s' % (
        args.rounds, '_fall' if args.fall_detect else '',
        '_short%d' % args.short_rounds if args.short_rounds else '',
        '_n%d' % args.sampled if args.sampled else '')
    with open(os.path.join(args.out, name + '.json'), 'w') as f:
        json.dump({'summary': summary, 'discipline': rec.as_dict(),
                   'setup': {'pages': PAGES, 'rate': RATE, 'round': ROUND,
                             'rounds': args.rounds, 'tau': TAU,
                             'fall_detect': args.fall_detect,
                             'short_rounds': args.short_rounds,
                             'short_pages': args.short_pages,
                             'sampled': args.sampled,
                             'bound': BOUND, 'window': WINDOW,
                             'seconds': seconds(args.rounds)}}, f,
                  indent=1)
    with open(os.path.join(args.out, name + '.md'), 'w') as f:
        f.write('\n'.join(md))
    print('\n'.join(md))


if __name__ == '__main__':
    main()
