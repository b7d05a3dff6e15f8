"""Per run of bench_patterns' patterns.jsonl: vm_over, memory saved, the
MiB read back from swap, and for each rise of the true working set the
seconds until the balloon covered it (python3 rise.py DIR [DIR ...])."""
import json
import os
import sys

MIB = 1024


def rises(rows):
    """(t, seconds until the balloon reached the new truth, None if
    never) of every rise of the truth, t from the first row."""
    t0 = rows[0]['t']
    out = []
    last = None
    for i, r in enumerate(rows):
        truth = r.get('truth_kb')
        if truth and last and truth > last + 8 * MIB:
            covered = next((q['t'] - r['t'] for q in rows[i:]
                            if q['balloon_kb'] >= truth), None)
            out.append((r['t'] - t0, covered))
        last = truth or last
    return out


def main(dirs):
    print('| pattern | start | estimator | vm_over | saved | read back '
          '| rises covered after (s) |')
    print('|---|---|---|---|---|---|---|')
    for d in dirs:
        with open(os.path.join(d, 'patterns.jsonl')) as f:
            for line in f:
                r = json.loads(line)
                rows = r['rows']
                back = ((rows[-1].get('swap_in') or 0) -
                        (rows[0].get('swap_in') or 0)) / MIB
                cover = ', '.join('%.0f: %s' % (t, 'never' if s is None
                                                else '%.1f' % s)
                                  for t, s in rises(rows))
                print('| %s | %s | %s | %.3f | %.1f %% | %.0f MiB | %s |' % (
                    r['pattern'], r['start'], r['estimator'],
                    r['twin_ops'] / r['ops'], r['saved_pct'], back,
                    cover or '-'))


if __name__ == '__main__':
    main(sys.argv[1:])
