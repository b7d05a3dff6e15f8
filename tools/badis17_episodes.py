"""Swap-in episodes of the pattern suite's Badis runs: why a run loses
(issue 13, session 7).

    python tools/badis17_episodes.py [--runs] SLOT [SLOT...]

Each SLOT is a directory written by ``badis15/slot.sh`` (one
sub-directory per configuration with its ``patterns.jsonl``). An episode
is a stretch of polls with swap-ins (the cumulative ``swap_in`` of the
balloon statistics rising), ended by 2 s without any. Each is classed
by what came before it:

- ``after shrink``: the balloon shrank within the 3 s before the first
  swap-in (the benchmark's ``shrink_swapin_window``), i.e. Badis took
  memory the guest then read back;
- ``rise``: otherwise, i.e. the working set grew at a steady allocation
  (a phase change, the load at boot).

Per run: episodes of each class and the swap-ins (MiB) they read back;
and the stretches during which the balloon was below the true working
set (``truth_kb``; none for Zipf and redis, which have no single size),
in seconds from the first poll below it to the first poll at or above
it: how long a rise took to be followed. ``--runs`` prints every
episode.
"""
import json
import os
import sys

MIB = 1024
QUIET_S = 2.0
WINDOW_S = 3.0


def episodes(rows):
    """[{cls, t0 (s into the run), t1, kb read back, bal0, truth}]."""
    out, cur = [], None
    t_start = rows[0]['t']
    last_shrink = None
    prev_bal = prev_si = None
    for r in rows:
        bal, si = r['balloon_kb'], r.get('swap_in')
        if prev_bal is not None and bal < prev_bal:
            last_shrink = r['t']
        d = (si - prev_si) if (si is not None and prev_si is not None) \
            else 0
        if si is not None:
            prev_si = si
        prev_bal = bal
        if d > 0:
            if cur is None or r['t'] - cur['t1'] > QUIET_S:
                if cur is not None:
                    out.append(cur)
                shrunk = (last_shrink is not None and
                          r['t'] - last_shrink <= WINDOW_S)
                cur = {'cls': 'after shrink' if shrunk else 'rise',
                       't0': r['t'] - t_start, 't1': r['t'], 'kb': 0,
                       'bal0': bal, 'truth': r.get('truth_kb')}
            cur['t1'] = r['t']
            cur['kb'] += d
    if cur is not None:
        out.append(cur)
    return out


def below(rows):
    """Seconds of each stretch with the balloon under truth_kb."""
    out, t0 = [], None
    for r in rows:
        truth = r.get('truth_kb')
        if not truth or r['balloon_kb'] >= truth:
            if t0 is not None:
                out.append(r['t'] - t0)
            t0 = None
        elif t0 is None:
            t0 = r['t']
    if t0 is not None:
        out.append(rows[-1]['t'] - t0)
    return out


def main(argv):
    show = '--runs' in argv
    slots = [a for a in argv if not a.startswith('--')]
    print('| slot | config | pattern, start | after-shrink episodes '
          '(MiB read back) | rise episodes (MiB) | s below the working '
          'set, per stretch |')
    print('|---|---|---|---|---|---|')
    for slot in slots:
        for name in sorted(os.listdir(slot)):
            path = os.path.join(slot, name, 'patterns.jsonl')
            if not os.path.exists(path):
                continue
            with open(path) as f:
                runs = [json.loads(line) for line in f if line.strip()]
            for r in runs:
                if r['estimator'] == 'none' or not r.get('rows'):
                    continue
                eps = episodes(r['rows'])
                shr = [e for e in eps if e['cls'] == 'after shrink']
                ris = [e for e in eps if e['cls'] == 'rise']
                reach = ['%.1f' % x for x in below(r['rows'])]
                print('| %s | %s | %s, %s | %d (%.0f) | %d (%.0f) | %s |' % (
                    os.path.basename(slot.rstrip('/')), name, r['pattern'],
                    r['start'], len(shr), sum(e['kb'] for e in shr) / MIB,
                    len(ris), sum(e['kb'] for e in ris) / MIB,
                    ', '.join(reach) or '-'))
                if show:
                    for e in eps:
                        print('|  |  | %s at %.1f s, balloon %d MiB, '
                              'truth %s, %.0f MiB |  |  |  |' % (
                                  e['cls'], e['t0'], e['bal0'] // MIB,
                                  '%d MiB' % (e['truth'] // MIB)
                                  if e['truth'] else 'n/a', e['kb'] / MIB))


if __name__ == '__main__':
    main(sys.argv[1:])
