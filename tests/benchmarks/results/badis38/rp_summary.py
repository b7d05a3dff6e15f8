"""Per run of queue3.sh (rp/*): memory saved, and whether a calibration
probe was answered by swap-ins and what the probes did after it.

Run from tests/benchmarks/results/badis38: ``python3 rp_summary.py``.
"""

import glob
import json
import os


def main():
    rows = []
    for d in sorted(glob.glob('rp/*/'), key=lambda p: (p[3], int(p[4:-1]))):
        with open(os.path.join(d, 'patterns.json')) as f:
            runs = json.load(f)['runs']
        mine = [r for r in runs if r['estimator'] == 'rp']
        if not mine:
            continue
        with open(os.path.join(d, 'rp.log')) as f:
            log = f.read().splitlines()
        answered = [x for x in log if 'ended by swap-ins' in x]
        lowered = [x for x in log if 'lowered by a balloon probe' in x]
        rows.append((d, mine[0]['saved_pct'], len(answered), len(lowered)))
    print('| run | saved % | probes answered by swap-ins | probes that '
          'lowered the correction |')
    print('|---|---|---|---|')
    for d, saved, a, low in rows:
        print('| %s | %.1f | %d | %d |' % (d.strip('/'), saved, a, low))


if __name__ == '__main__':
    main()
