"""One line per run of bench_patterns results (patterns.jsonl): vm_over
against the twin, % of the booking saved, what the guest read back from
swap (MiB), bad shrinks. Usage: python summary.py DIR/patterns.jsonl ..."""
import json
import sys

for path in sys.argv[1:]:
    for line in open(path):
        r = json.loads(line)
        if r['estimator'] in ('none', 'oracle'):
            continue
        back = (r['rows'][-1].get('swap_in') or 0) / 1024
        print('%-9s %-6s %-8s vm_over %.3f saved %5.1f %% read back '
              '%5.1f MiB bad %d  (%s)' % (
                  r['pattern'], r['start'], r['estimator'],
                  r['twin_ops'] / r['ops'], r['saved_pct'], back,
                  r['bad_shrinks'], path.split('/')[-2]))
