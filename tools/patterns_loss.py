"""When the pattern suite's runs lost their throughput (issue 13).

    python tools/patterns_loss.py [--window S] PATTERNS.jsonl [...]

Reads the runs of ``tests/benchmarks/bench_patterns.py`` that carry
memwork's progress lines (``progress``: recorded since stop 44) and prints,
per run, the operations it made fewer than the same pattern's ``none``
run (full memory) in each window of S seconds (default 10), in
thousands. Beside ``tools/badis17_episodes.py`` (when it swapped), it
says what the swapping cost: a balloon probe, a rise, a dip. memwork
prints a progress line at most once a second, so one window can borrow a
line's worth (about a second of operations) from the next: read a
window's figure next to its neighbours'.
"""
import argparse
import json


def cumulative(progress):
    """[(t, operations since the run began)] from progress lines
    ``[t, step, operations so far in the step]``."""
    out, done, step, last = [], 0, None, 0
    for t, s, ops in progress:
        if s != step:
            done += last if step is not None else 0
            step, last = s, 0
        last = ops
        out.append((t, done + ops))
    return out


def ops_by(points, t):
    """Operations done by time ``t`` (the last line at or before it)."""
    done = 0
    for tt, ops in points:
        if tt > t:
            break
        done = ops
    return done


def lost_per_window(run, ref, window, length):
    """Operations the run made fewer than ``ref`` in each window."""
    p, q = cumulative(run['progress']), cumulative(ref['progress'])
    out = []
    t = 0.0
    while t < length:
        mine = ops_by(p, t + window) - ops_by(p, t)
        theirs = ops_by(q, t + window) - ops_by(q, t)
        out.append(theirs - mine)
        t += window
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--window', type=float, default=10.0)
    p.add_argument('files', nargs='+')
    args = p.parse_args(argv)
    runs = []
    for name in args.files:
        with open(name) as f:
            runs += [json.loads(x) for x in f if x.strip()]
    refs = {r['pattern']: r for r in runs
            if r['estimator'] == 'none' and r.get('progress')}
    shown = [r for r in runs if r['estimator'] != 'none' and
             r.get('progress') and r['pattern'] in refs]
    if not shown:
        print('no run with progress lines and a none run of its pattern')
        return 1
    length = max(r['seconds'] for r in shown)
    starts = []
    t = 0.0
    while t < length:
        starts.append(t)
        t += args.window
    print('Operations (thousands) short of the none run, per %g s window '
          'from the first progress line:' % args.window)
    print()
    print('| pattern | start | estimator | total | %s |'
          % ' | '.join('%g' % s for s in starts))
    print('|---|---|---|---|%s' % ('---|' * len(starts)))
    for r in sorted(shown, key=lambda r: (r['pattern'], r['start'],
                                          r['estimator'])):
        ref = refs[r['pattern']]
        lost = lost_per_window(r, ref, args.window, length)
        total = (ref.get('ops') or 0) - (r.get('ops') or 0)
        print('| %s | %s | %s | %.0f | %s |' % (
            r['pattern'], r['start'], r['estimator'], total / 1000.0,
            ' | '.join('%.0f' % (x / 1000.0) for x in lost)))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
