"""Every twin pair of this directory's runs, per case: vm_over (the twin's
lookups over the run's), memory saved, what the guest read back from swap,
the balloon's mean over the second half, and what the swap-in-bound
reference would save: the guest's base plus the part of the table that
must stay in for the guest to read back at most 1 MiB/s at the twin's
lookup rate (tests/harness/sqlite.py evictable_fraction), plus the
bench's headroom. ../../../../.tox/py3/bin/python summary.py tcg_*"""

import collections
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', '..', '..'))

from memmut import sizing                       # noqa: E402
from tests.benchmarks import discipline         # noqa: E402
from tests.harness import badis_run             # noqa: E402
from tests.harness import sqlite                # noqa: E402

MIB = 1024
SKEW = {'sqlite': 4, 'sqlite16': 16, 'sqlite16_paced': 16}
BOUND_PAGES_S = badis_run.AGENT_OPTIONS['badis']['swap_in_threshold_kb'] / (
    4 * badis_run.AGENT_OPTIONS['badis']['round_interval'])


def reference_saved(run, table_kb):
    """% of the booking the swap-in-bound reference would leave free."""
    rate = run['twin_ops'] / run['seconds']
    f = sqlite.evictable_fraction(rate, BOUND_PAGES_S, SKEW[run['pattern']])
    demand = run['base_kb'] + table_kb * (1 - f)
    t = badis_run.AGENT_OPTIONS['badis']
    target = min(run['booked_kb'], demand + sizing.headroom(
        demand, t['headroom_kb'], t['headroom_fraction']))
    return 100.0 * (run['booked_kb'] - target) / run['booked_kb'], f


def swapped_in_mib(rows):
    got = [x['swap_in'] for x in rows if x.get('swap_in') is not None]
    return (got[-1] - got[0]) / MIB if got else None


def twin_records(d):
    """The runs of directory ``d`` that completed beside their twin (a
    line on stdout for each that did not)."""
    with open(os.path.join(d, 'patterns.jsonl')) as f:
        for line in f:
            r = json.loads(line)
            if r.get('failed') or not r.get('twin_ops'):
                print('%s: %s %s %s failed or no twin' % (
                    d, r['pattern'], r['start'], r['estimator']))
                continue
            yield r


def main(dirs):
    cases = collections.defaultdict(list)
    records = []
    for d in dirs:
        for r in twin_records(d):
            records.append(r)
            rows = r['rows']
            late = [x['balloon_kb'] for x in rows[len(rows) // 2:]]
            cases[r['pattern'], r['start'], r['estimator']].append({
                'dir': os.path.basename(d.rstrip('/')),
                'vm_over': r['twin_ops'] / r['ops'],
                'saved': r['saved_pct'],
                'swap_in': swapped_in_mib(rows),
                'balloon': statistics.mean(late) / MIB,
                'base': r['base_kb'] / MIB, 'record': r,
                # a batch's service time over the twin's
                'served': (r['batch_s_mean'] / r['twin_batch_s_mean']
                           if r.get('batch_s_mean')
                           and r.get('twin_batch_s_mean') else None)})
    # the table's size is the same in every run: sqlite3's memory once
    # loaded in the runs whose balloon stayed at the booking (observe;
    # resident then, whether the line said rss_kb or, later, used_kb)
    sizes = [r.get('program_used_kb') or r.get('program_rss_kb')
             for r in records if r['estimator'] == 'observe']
    sizes = [x for x in sizes if x]
    rss_kb = statistics.median(sizes) if sizes else None
    print('| program | start | estimator | pairs | vm_over each | median '
          '| saved % each | reference saved % | read back MiB each '
          '| balloon 2nd half MiB | service time / twin\'s |')
    print('|---|---|---|---|---|---|---|---|---|---|---|')
    for (prog, start, est), runs in sorted(cases.items()):
        ref = [reference_saved(x['record'], rss_kb) for x in runs
               if rss_kb and x['record']['pattern'] in SKEW]
        print('| %s | %s | %s | %d | %s | %.3f | %s | %s | %s | %s | %s |' % (
            prog, start, est, len(runs),
            ', '.join('%.3f' % x['vm_over'] for x in runs),
            statistics.median(x['vm_over'] for x in runs),
            ', '.join('%.1f' % x['saved'] for x in runs),
            '%.1f-%.1f (%.1f-%.1f %% of the table out)' % (
                min(r for r, _ in ref), max(r for r, _ in ref),
                100 * min(f for _, f in ref), 100 * max(f for _, f in ref))
            if ref else 'n/a',
            ', '.join('%.0f' % x['swap_in'] for x in runs
                      if x['swap_in'] is not None),
            ', '.join('%.0f' % x['balloon'] for x in runs),
            ', '.join('%.2f' % x['served'] for x in runs if x['served'])
            or 'n/a'))
    # Badis against sampling alone, set by set (tcg_badis with
    # tcg_observe, _r2 with _r2, ...): what the balloon's moves cost
    # beyond the sampling both do
    diffs = []
    for (prog, start, est), runs in cases.items():
        if est != 'badis':
            continue
        obs = {x['dir'].replace('observe', ''): x
               for x in cases.get((prog, start, 'observe'), [])}
        for x in runs:
            o = obs.get(x['dir'].replace('badis', ''))
            if o:
                diffs.append(x['vm_over'] - o['vm_over'])
    if len(diffs) > 1:
        d = discipline.summarize(diffs)
        print('\nbadis minus observe, same set and case: %+.3f [%+.3f, '
              '%+.3f] over %d pairs of pairs (sd %.3f)' % (
                  d['mean'], d['low'], d['high'], d['n'], d['sd']))
    base = [x['base'] for runs in cases.values() for x in runs]
    if sizes:
        print('\nthe table (sqlite3 once loaded, balloon at the booking): '
              '%.1f-%.1f MiB over %d runs; guest base %.1f-%.1f MiB' % (
                  min(sizes) / MIB, max(sizes) / MIB, len(sizes),
                  min(base), max(base)))


if __name__ == '__main__':
    main(sys.argv[1:])
