"""This directory's twin pairs, per case and configuration (``badis``:
this tree; ``badis_budget``: with calibration_probe_warm_budget on;
``badis_old``: its three changes off), and each minus the old set by
set (tcg_new_X with tcg_old_X): vm_over (the twin's
operations over the run's), % of the booking saved, MiB read back from
swap; for the sqlite programs the swap-in-bound reference of
../badis89_sqlite/summary.py, the table's size taken from that
directory's observe runs.

    ../../../../.tox/py3/bin/python summary.py tcg_*"""

import collections
import glob
import importlib.util
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', '..', '..'))

from tests.benchmarks import discipline         # noqa: E402

_spec = importlib.util.spec_from_file_location(
    'badis89_summary', os.path.join(HERE, '..', 'badis89_sqlite',
                                    'summary.py'))
sqlite_summary = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sqlite_summary)
MIB = 1024


records = sqlite_summary.twin_records


def table_kb():
    """sqlite3's memory once loaded, median over stop 89's observe runs
    (the balloon at the booking: all of it resident)."""
    sizes = []
    for d in glob.glob(os.path.join(HERE, '..', 'badis89_sqlite',
                                    'tcg_observe*')):
        sizes += [r.get('program_used_kb') or r.get('program_rss_kb')
                  for r in records(d)]
    sizes = [x for x in sizes if x]
    return statistics.median(sizes) if sizes else None


# runs recorded as "badis" while calibration_probe_warm_budget was on by
# default (tcg_v1_r1 also without probe_owns_readback in VG and before
# the probe's debt, the first version)
DIR_LABEL = {'tcg_v1_r1': 'badis_v1', 'tcg_v2_r1': 'badis_budget',
             'tcg_new_r2': 'badis_budget'}


def main(dirs):
    cases = collections.defaultdict(list)
    for d in dirs:
        name = os.path.basename(d.rstrip('/'))
        for r in records(d):
            est = DIR_LABEL.get(name, r['estimator'])
            cases[r['pattern'], r['start'], est].append({
                'set': name.split('_', 2)[-1], 'dir': name, 'record': r,
                'vm_over': r['twin_ops'] / r['ops'],
                'saved': r['saved_pct'],
                'swap_in': sqlite_summary.swapped_in_mib(r['rows']),
                # a batch's mean service time over the twin's
                'served': (r['batch_s_mean'] / r['twin_batch_s_mean']
                           if r.get('batch_s_mean') and
                           r.get('twin_batch_s_mean') else None)})
    table = table_kb()
    print('| program | start | estimator | pairs | vm_over each | median '
          '| saved % each | reference saved % | read back MiB each '
          '| service time / twin\'s |')
    print('|---|---|---|---|---|---|---|---|---|---|')
    for (prog, start, est), runs in sorted(cases.items()):
        ref = [sqlite_summary.reference_saved(x['record'], table)[0]
               for x in runs if table and prog in sqlite_summary.SKEW]
        print('| %s | %s | %s | %d | %s | %.3f | %s | %s | %s | %s |' % (
            prog, start, est, len(runs),
            ', '.join('%.3f' % x['vm_over'] for x in runs),
            statistics.median(x['vm_over'] for x in runs),
            ', '.join('%.1f' % x['saved'] for x in runs),
            '%.1f-%.1f' % (min(ref), max(ref)) if ref else 'n/a',
            ', '.join('%.0f' % x['swap_in'] for x in runs
                      if x['swap_in'] is not None),
            ', '.join('%.2f' % x['served'] for x in runs if x['served'])
            or 'n/a'))
    print()
    print('this tree minus the old, same set and case (mean [95 % '
          'interval], n):')
    print()
    print('| program | estimator | vm_over | saved points '
          '| service time ratio |')
    print('|---|---|---|---|---|')
    by_prog = collections.defaultdict(lambda: ([], [], []))
    for (prog, start, est), runs in cases.items():
        if est == 'badis_old':
            continue
        old = {x['set']: x for x in cases.get((prog, start, 'badis_old'), [])}
        for x in runs:
            o = old.get(x['set'])
            if o:
                by_prog[prog, est][0].append(x['vm_over'] - o['vm_over'])
                by_prog[prog, est][1].append(x['saved'] - o['saved'])
                if x['served'] and o['served']:
                    by_prog[prog, est][2].append(x['served'] - o['served'])
    for (prog, est), (dv, ds, dt) in sorted(by_prog.items()):
        cells = []
        for values, spec in ((dv, '%+.3f'), (ds, '%+.1f'), (dt, '%+.2f')):
            if not values:
                cells.append('n/a')
                continue
            s = discipline.summarize(values)
            if s['n'] > 1:
                cells.append((spec + ' [' + spec + ', ' + spec + '], %d') % (
                    s['mean'], s['low'], s['high'], s['n']))
            else:
                cells.append((spec + ', 1') % s['mean'])
        print('| %s | %s | %s | %s | %s |' % (prog, est, *cells))


if __name__ == '__main__':
    main(sys.argv[1:])
