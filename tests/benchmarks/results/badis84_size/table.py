"""One markdown row per run of bench_patterns' patterns.jsonl files:
python3 table.py DIR [DIR ...] (stop 84's READMEs)."""
import json
import os
import sys


def pct(v):
    return 'n/a' if v is None else '%.1f %%' % v


def main(dirs):
    print('| pattern | start | estimator | vm_over | saved | oracle saved '
          '| allow. S_more / S_less |')
    print('|---|---|---|---|---|---|---|')
    for d in dirs:
        with open(os.path.join(d, 'patterns.jsonl')) as f:
            for line in f:
                r = json.loads(line)
                allow = (r.get('errors') or {}).get('allowance') or {}
                print('| %s | %s | %s | %.3f | %s | %s | %s / %s |' % (
                    r['pattern'], r['start'], r['estimator'],
                    r['twin_ops'] / r['ops'], pct(r['saved_pct']),
                    pct(r.get('oracle_saved_pct')),
                    pct(allow.get('S_more')), pct(allow.get('S_less'))))


if __name__ == '__main__':
    main(sys.argv[1:])
