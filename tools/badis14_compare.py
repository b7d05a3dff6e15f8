"""Configurations compared over repeated lock slots (issue 13, session 4).

    python tools/badis14_compare.py --patterns SLOT [SLOT...]
    python tools/badis14_compare.py --w1w5 SLOT [SLOT...]

Each SLOT is a directory written by
``tests/benchmarks/results/badis14/slot.sh``: one sub-directory per
configuration (``main``, then the variants), each with the jsonl of that
slot, whose ``none`` runs are the vm_over reference of its Badis runs. A
case's figures are given per slot (repeats) as mean [min-max].

Patterns: per pattern and start, vm_over (operations of ``none`` /
this run's), the throughput in memwork operations per second beside the
``none`` run's, memory saved (% of booked) and the one-poll-allowance
S_more (% of booked, n/a for Zipf). Per configuration, over every run of
every slot: vm_over median and worst, mean saved, mean allowance S_more
and S_less.

W1-W5: per case, mean |error| per poll, allowance S_more / S_less (% of
booked) and vm_over; per configuration the means, vm_over median and
worst.
"""
import os
import statistics
import sys

import badis13_ablation  # tools/, the script's own directory

_mean = badis13_ablation.mean_of_known
_jsonl = badis13_ablation.load_jsonl


def _spread(xs, fmt='%.2f'):
    xs = [x for x in xs if x is not None]
    if not xs:
        return 'n/a'
    if len(xs) == 1:
        return fmt % xs[0]
    return (fmt + ' [' + fmt + '-' + fmt + ']') % (
        statistics.mean(xs), min(xs), max(xs))


def _configs(slots):
    names = []
    for s in slots:
        for n in sorted(os.listdir(s)):
            if os.path.isdir(os.path.join(s, n)) and n not in names:
                names.append(n)
    return ['main'] + [n for n in names if n != 'main']


def swapin_kb_s(rows):
    """The guest's swap-in rate over a run (KiB/s, from the balloon
    statistics' cumulative swap_in of the polls)."""
    pts = [(r['t'], r['swap_in']) for r in rows
           if r.get('swap_in') is not None]
    if len(pts) < 2 or pts[-1][0] <= pts[0][0]:
        return None
    return max(0, pts[-1][1] - pts[0][1]) / (pts[-1][0] - pts[0][0])


def pattern_runs(slot, name):
    path = os.path.join(slot, name, 'patterns.jsonl')
    if not os.path.exists(path):
        return {}
    runs = _jsonl(path)
    ref = {r['pattern']: r for r in runs if r['estimator'] == 'none'
           and r.get('ops')}
    out = {}
    for r in runs:
        if r['estimator'] != 'badis' or not r.get('ops'):
            continue
        base = ref.get(r['pattern'])
        allow = (r.get('errors') or {}).get('allowance') or {}
        out[(r['pattern'], r['start'])] = {
            'vm_over': base['ops'] / r['ops'] if base else None,
            'ops_s': r['ops'] / r['seconds'],
            'none_ops_s': base['ops'] / base['seconds'] if base else None,
            'saved': r.get('saved_pct'),
            'oracle': r.get('oracle_saved_pct'),
            'S_more': allow.get('S_more'), 'S_less': allow.get('S_less'),
            'bad': r.get('bad_shrinks'),
            'swapin': swapin_kb_s(r.get('rows') or [])}
    return out


def patterns(slots):
    names = _configs(slots)
    data = {n: [pattern_runs(s, n) for s in slots] for n in names}
    cases = sorted({k for n in names for d in data[n] for k in d})
    print('Cells: vm_over / ops/s (k) of this run, `none` / saved %% '
          '(oracle) / allow. S_more %% / swap-in KiB/s; mean [min-max] '
          'over %d slots.' % len(slots))
    print()
    print('| pattern, start | ' + ' | '.join(names) + ' |')
    print('|---|' + '---|' * len(names))
    for key in cases:
        cells = []
        for n in names:
            rs = [d[key] for d in data[n] if key in d]
            if not rs:
                cells.append('')
                continue
            cells.append('%s / %s, %s / %s (%s) / %s / %s' % (
                _spread([r['vm_over'] for r in rs], '%.3f'),
                _spread([r['ops_s'] / 1000 for r in rs], '%.0f'),
                _spread([r['none_ops_s'] and r['none_ops_s'] / 1000
                         for r in rs], '%.0f'),
                _spread([r['saved'] for r in rs], '%.1f'),
                _spread([r['oracle'] for r in rs], '%.1f'),
                _spread([r['S_more'] for r in rs]),
                _spread([r['swapin'] for r in rs], '%.0f')))
        print('| %s, %s | ' % key + ' | '.join(cells) + ' |')
    cells = []
    for n in names:
        rs = [r for d in data[n] for r in d.values()]
        overs = sorted(r['vm_over'] for r in rs if r['vm_over'])
        sw = sorted(r['swapin'] for r in rs if r['swapin'] is not None)
        cells.append('median **%.3f**, worst %.3f / saved %.2f / S_more '
                     '%.2f / S_less %s / swap-in median %.0f, worst %.0f '
                     'KiB/s (%d runs)' % (
                         statistics.median(overs), overs[-1],
                         _mean(r['saved'] for r in rs),
                         _mean(r['S_more'] for r in rs),
                         _spread([_mean(r['S_less'] for r in rs)]),
                         statistics.median(sw), sw[-1],
                         len(rs)) if overs else '')
    print('| all | ' + ' | '.join(cells) + ' |')


def w1w5_runs(slot, name):
    d = os.path.join(slot, name)
    if not os.path.exists(os.path.join(d, 'badis.jsonl')):
        return {}
    runs = badis13_ablation.load(d)
    ref = {(r['shape'], r['alloc']): r['passes'] for r in runs
           if r['estimator'] == 'none'}
    out = {}
    for r in runs:
        if r['estimator'] != 'badis' or not r.get('rows'):
            continue
        e = r['errors']['badis']
        key = (r['shape'], r['alloc'])
        out[key] = {'err': e['all'], 'S_more': e['allowance']['S_more'],
                    'S_less': e['allowance']['S_less'],
                    'vm_over': (ref[key] / r['passes']
                                if key in ref and r['passes'] else None)}
    return out


def w1w5(slots):
    names = _configs(slots)
    data = {n: [w1w5_runs(s, n) for s in slots] for n in names}
    cases = sorted({k for n in names for d in data[n] for k in d})
    print('Cells: error / allow. S_more / allow. S_less (%% of booked) / '
          'vm_over; mean [min-max] over %d slots.' % len(slots))
    print()
    print('| case | ' + ' | '.join(names) + ' |')
    print('|---|' + '---|' * len(names))
    for key in cases:
        cells = []
        for n in names:
            rs = [d[key] for d in data[n] if key in d]
            cells.append('' if not rs else '%s / %s / %s / %s' % (
                _spread([r['err'] for r in rs]),
                _spread([r['S_more'] for r in rs]),
                _spread([r['S_less'] for r in rs]),
                _spread([r['vm_over'] for r in rs], '%.3f')))
        print('| %s,%s | ' % key + ' | '.join(cells) + ' |')
    cells = []
    for n in names:
        rs = [r for d in data[n] for r in d.values()]
        overs = sorted(r['vm_over'] for r in rs if r['vm_over'])
        cells.append('**%.2f** / %.2f / %.2f / median **%.3f**, worst %.3f '
                     '(%d runs)' % (
                         _mean(r['err'] for r in rs),
                         _mean(r['S_more'] for r in rs),
                         _mean(r['S_less'] for r in rs),
                         statistics.median(overs), overs[-1], len(rs))
                     if overs else '')
    print('| all | ' + ' | '.join(cells) + ' |')


if __name__ == '__main__':
    if sys.argv[1:2] == ['--patterns']:
        patterns(sys.argv[2:])
    elif sys.argv[1:2] == ['--w1w5']:
        w1w5(sys.argv[2:])
    else:
        sys.exit(__doc__)
