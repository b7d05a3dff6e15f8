"""Configurations compared over repeated, alternated lock slots (issue 13,
session 5).

    python tools/badis15_compare.py --patterns [--json OUT] SLOT [SLOT...]
    python tools/badis15_compare.py --w1w5 [--json OUT] [--reference NAME]
        SLOT [SLOT...]
    python tools/badis15_compare.py --estimators [--json OUT]
        [--reference NAME] SLOT [SLOT...]

Each SLOT is a directory written by
``tests/benchmarks/results/badis15/slot.sh``: one sub-directory per
configuration (``main`` and the variant), each with that slot's jsonl;
both hold the slot's ``none`` runs. The two configurations ran in both
orders over the slots.

vm_over is taken against the mean of the ``none`` runs of that case over
every slot (one ``none`` run is as noisy as the runs it judges; the
``none`` spread is shown). Per case: mean with its 95 % interval over the
slots (tests/benchmarks/discipline.py, n >= 2) or the one value. Per
configuration: over every run; and the paired difference to main (same
case, same slot) with its 95 % interval.

Patterns, per run: the guest's swap-in rate (KiB/s, from the balloon
statistics' cumulative swap_in over the run; the bound of [badis]
swapin_bound_kb_s is 1024), memory saved (% of booked) beside the
one-poll-late oracle's, one-poll-allowance S_more / S_less (% of booked;
n/a for Zipf) and vm_over.
With --estimators, a SLOT is one directory whose ``patterns.jsonl`` holds
the runs of several estimators (``bench_patterns --estimators
none,badis,zballoond,selfballoon``): each estimator is a configuration,
Badis (or the ``--reference`` configuration) is the reference of the
paired differences, and the table of
operations/s shows each estimator's throughput beside ``none``'s (full
memory; for redis, GETs/s).
W1-W5, per run: mean |error| per poll, allowance S_more / S_less (% of
booked) and vm_over (passes of ``none`` / this run's); paired to ``main``,
or to the ``--reference`` configuration.
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import badis13_ablation  # noqa: E402  tools/, the script's own directory
# the swap-in rate and the slot layout are badis14's, unchanged
from badis14_compare import _configs, swapin_kb_s  # noqa: E402,F401

from tests.benchmarks import discipline  # noqa: E402

BOUND_KB_S = 1024
_jsonl = badis13_ablation.load_jsonl


def _summ(xs):
    xs = [x for x in xs if x is not None]
    return discipline.summarize(xs) if xs else None


def _cell(xs, spec='.1f'):
    s = _summ(xs)
    if s is None:
        return 'n/a'
    if s['n'] == 1:
        return format(s['mean'], spec)
    return '%s ± %s' % (format(s['mean'], spec),
                        format(s['half_width'], spec))


def _range(xs, spec='.3f'):
    xs = [x for x in xs if x is not None]
    if not xs:
        return 'n/a'
    if len(xs) == 1:
        return format(xs[0], spec)
    return '%s [%s-%s]' % (format(statistics.mean(xs), spec),
                           format(min(xs), spec), format(max(xs), spec))


def _median(xs):
    return statistics.median(xs) if xs else None


def _num(x, spec):
    return 'n/a' if x is None else format(x, spec)


def _k(ops_s):
    """Operations/s in thousands (redis's GETs/s are a few thousand)."""
    return '%.0f' % (ops_s / 1000) if ops_s >= 10000 else \
        '%.2f' % (ops_s / 1000)


def _fmt(s, spec):
    return discipline.fmt(s, spec) if s else 'n/a'


# -- patterns ----------------------------------------------------------------

def pattern_slot(slot, names):
    """{name: {(pattern, start): run}}, {pattern: [none ops/s]}."""
    runs, none = {}, {}
    for n in names:
        path = os.path.join(slot, n, 'patterns.jsonl')
        if not os.path.exists(path):
            continue
        for r in _jsonl(path):
            if not r.get('ops'):
                continue
            if r['estimator'] == 'none':
                none[r['pattern']] = r['ops'] / r['seconds']
            elif r['estimator'] == 'badis':
                runs.setdefault(n, {})[(r['pattern'], r['start'])] = \
                    _pattern_run(r)
    return runs, none


def _pattern_run(r):
    allow = (r.get('errors') or {}).get('allowance') or {}
    return {'ops_s': r['ops'] / r['seconds'],
            # bench_patterns --twin: a none run beside this one
            'twin_ops_s': (r['twin_ops'] / r['seconds']
                           if r.get('twin_ops') else None),
            'saved': r.get('saved_pct'),
            'oracle': r.get('oracle_saved_pct'),
            'S_more': allow.get('S_more'),
            'S_less': allow.get('S_less'),
            'swapin': swapin_kb_s(r.get('rows') or [])}


# the estimators of tests/harness/badis_run.py, reference first
ESTIMATORS = ('badis', 'zballoond', 'selfballoon')


def estimator_slot(slot, names=None):
    """{estimator: {(pattern, start): run}}, {pattern: [none ops/s]} of
    one slot whose patterns.jsonl holds every estimator's runs (failed
    runs, without operations, are left out and listed by
    failed_runs)."""
    runs, none = {}, {}
    for r in _jsonl(os.path.join(slot, 'patterns.jsonl')):
        if not r.get('ops'):
            continue
        if r['estimator'] == 'none':
            none[r['pattern']] = r['ops'] / r['seconds']
        elif names is None or r['estimator'] in names:
            runs.setdefault(r['estimator'], {})[
                (r['pattern'], r['start'])] = _pattern_run(r)
    return runs, none


def failed_runs(slots):
    out = []
    for s in slots:
        for r in _jsonl(os.path.join(s, 'patterns.jsonl')):
            if r.get('failed') or not r.get('ops'):
                out.append('%s: %s,%s,%s: %s' % (
                    os.path.basename(s.rstrip('/')), r['pattern'],
                    r['start'], r['estimator'],
                    r.get('failed') or 'no operations'))
    return out


def estimator_names(slots):
    found = set()
    for s in slots:
        found.update(estimator_slot(s)[0])
    return ([n for n in ESTIMATORS if n in found] +
            sorted(found - set(ESTIMATORS)))


def _reference_first(names, reference, slots):
    """``names`` with ``reference`` (when given) first: the configuration
    the paired differences are taken against."""
    if reference is None:
        return names
    if reference not in names:
        sys.exit('no runs of %s in %s' % (reference, slots))
    return [reference] + [n for n in names if n != reference]


def patterns(slots, by_estimator=False, reference=None):
    if by_estimator:
        names = _reference_first(estimator_names(slots), reference, slots)
        per_slot = [estimator_slot(s, names) for s in slots]
    else:
        names = _configs(slots)
        per_slot = [pattern_slot(s, names) for s in slots]
    none = {}
    for _, nn in per_slot:
        for p, v in nn.items():
            none.setdefault(p, []).append(v)
    ref = {p: statistics.mean(v) for p, v in none.items()}
    data = {n: [] for n in names}       # [(slot index, case, run)]
    for i, (runs, _) in enumerate(per_slot):
        for n in names:
            for key, r in runs.get(n, {}).items():
                base = r.get('twin_ops_s') or ref.get(key[0])
                r = dict(r, vm_over=(base / r['ops_s'] if base else None))
                data[n].append((i, key, r))
    cases = sorted({k for n in names for _, k, _ in data[n]})
    out = []
    if by_estimator:
        out += _ops_table(data, names, none, cases)
    out.append('`none` references, memwork operations/s (thousands) per '
               'slot, and their spread:')
    out.append('')
    out.append('| pattern | ' + ' | '.join(
        'slot %d' % (i + 1) for i in range(len(slots))) +
        ' | mean | max/min |')
    out.append('|---|' + '---|' * (len(slots) + 2))
    for p in sorted(none):
        v = none[p]
        # a slot may hold part of the suite: '-' where it has no run
        out.append('| %s | %s | %s | %.3f |' % (
            p, ' | '.join(_k(nn[p]) if p in nn else '-'
                          for _, nn in per_slot),
            _k(statistics.mean(v)), max(v) / min(v)))
    out.append('')
    out.append('Per case: swap-in KiB/s / saved %% (oracle) / allowance '
               'S_more, S_less %% / vm_over mean [min-max]; mean ± 95 %% '
               'half-width over %d slots.' % len(slots))
    out.append('')
    out.append('| pattern, start | ' + ' | '.join(names) + ' |')
    out.append('|---|' + '---|' * len(names))
    for key in cases:
        cells = []
        for n in names:
            rs = [r for _, k, r in data[n] if k == key]
            cells.append('%s / %s (%s) / %s, %s / %s' % (
                _cell([r['swapin'] for r in rs], '.0f'),
                _cell([r['saved'] for r in rs]),
                _cell([r['oracle'] for r in rs]),
                _cell([r['S_more'] for r in rs]),
                _cell([r['S_less'] for r in rs]),
                _range([r['vm_over'] for r in rs])) if rs else '')
        out.append('| %s, %s | ' % key + ' | '.join(cells) + ' |')
    summary = {}
    out.append('')
    out.append('| over every run | ' + ' | '.join(names) + ' |')
    out.append('|---|' + '---|' * len(names))
    rows = {}
    for n in names:
        rs = [r for _, _, r in data[n]]
        sw = sorted(r['swapin'] for r in rs if r['swapin'] is not None)
        ov = sorted(r['vm_over'] for r in rs if r['vm_over'])
        summary[n] = {
            'runs': len(rs),
            'over_bound': sum(1 for x in sw if x > BOUND_KB_S),
            'swapin': _summ(sw), 'swapin_median': _median(sw),
            'saved': _summ([r['saved'] for r in rs]),
            'oracle': _summ([r['oracle'] for r in rs]),
            'S_more': _summ([r['S_more'] for r in rs]),
            'S_less': _summ([r['S_less'] for r in rs]),
            'vm_over': _summ(ov), 'vm_over_median': _median(ov)}
        s = summary[n]
        rows.setdefault('runs over the swap-in bound', []).append(
            '%d of %d' % (s['over_bound'], s['runs']))
        rows.setdefault('swap-in KiB/s: median / worst / mean', []).append(
            '%s / %s / %s' % (_num(s['swapin_median'], '.0f'),
                              _num(sw[-1] if sw else None, '.0f'),
                              _fmt(s["swapin"], ".0f")))
        rows.setdefault('saved % of booked (oracle)', []).append(
            '%s (%s)' % (_fmt(s['saved'], '.2f'),
                         _fmt(s['oracle'], '.2f')))
        rows.setdefault('allowance S_more %', []).append(
            _fmt(s['S_more'], '.2f'))
        rows.setdefault('allowance S_less %', []).append(
            _fmt(s['S_less'], '.2f'))
        rows.setdefault('vm_over: median / worst / mean', []).append(
            '%s / %s / %s' % (_num(s['vm_over_median'], '.3f'),
                              _num(ov[-1] if ov else None, '.3f'),
                              _fmt(s['vm_over'], '.3f')))
    for k, v in rows.items():
        out.append('| %s | %s |' % (k, ' | '.join(v)))
    if by_estimator:
        out += [''] + ['- failed: ' + f for f in failed_runs(slots)]
    out += _paired(data, names, [('swapin', '.0f', 'swap-in KiB/s'),
                                 ('saved', '.2f', 'saved %'),
                                 ('S_more', '.2f', 'S_more %'),
                                 ('S_less', '.2f', 'S_less %'),
                                 ('vm_over', '.3f', 'vm_over')], summary)
    return out, {'none_ops_s': none, 'configs': summary,
                 'runs': {n: [[i, list(k), r] for i, k, r in data[n]]
                          for n in names}}


def _ops_table(data, names, none, cases):
    """Operations/s per case: none's (full memory) and each estimator's,
    mean over the slots."""
    out = ['Operations/s per case (memwork page touches; redis: GETs), '
           'mean over the slots: `none` (full memory) and each estimator '
           '(its allocation):', '',
           '| pattern, start | none | ' + ' | '.join(names) + ' |',
           '|---|---|' + '---|' * len(names)]
    for key in cases:
        cells = []
        for n in names:
            rs = [r['ops_s'] for _, k, r in data[n] if k == key]
            cells.append('%.0f' % statistics.mean(rs) if rs else 'n/a')
        ref = none.get(key[0])
        out.append('| %s, %s | %s | %s |' % (
            key[0], key[1], '%.0f' % statistics.mean(ref) if ref else 'n/a',
            ' | '.join(cells)))
    return out + ['']


def _paired(data, names, metrics, summary):
    out = ['', 'Paired difference to %s (same case, same slot), mean ± '
           '95 %% half-width (n pairs):' % names[0], '',
           '| metric | ' + ' | '.join(
               '%s - %s' % (n, names[0]) for n in names[1:]) + ' |',
           '|---|' + '---|' * (len(names) - 1)]
    base = {(i, k): r for i, k, r in data[names[0]]}
    for key, spec, label in metrics:
        cells = []
        for n in names[1:]:
            d = [r[key] - base[(i, k)][key] for i, k, r in data[n]
                 if (i, k) in base and r[key] is not None and
                 base[(i, k)][key] is not None]
            s = _summ(d)
            summary[n].setdefault('paired', {})[key] = s
            cells.append(discipline.fmt(s, spec) if s else 'n/a')
        out.append('| %s | %s |' % (label, ' | '.join(cells)))
    return out


# -- W1-W5 -------------------------------------------------------------------

def w1w5_slot(slot, names):
    runs, none = {}, {}
    for n in names:
        d = os.path.join(slot, n)
        if not os.path.exists(os.path.join(d, 'badis.jsonl')):
            continue
        for r in badis13_ablation.load(d):
            key = (r['shape'], r['alloc'])
            if r['estimator'] == 'none' and r.get('passes'):
                none[key] = r['passes']
            elif r['estimator'] == 'badis' and r.get('rows'):
                e = r['errors']['badis']
                runs.setdefault(n, {})[key] = {
                    'err': e['all'], 'S_more': e['allowance']['S_more'],
                    'S_less': e['allowance']['S_less'],
                    'passes': r.get('passes')}
    return runs, none


def w1w5(slots, reference=None):
    names = _configs(slots)
    if reference is not None:
        # the phantom `main` of _configs goes when another is the reference
        names = _reference_first(
            [n for n in names if n != 'main' or any(
                os.path.isdir(os.path.join(s, n)) for s in slots)],
            reference, slots)
    per_slot = [w1w5_slot(s, names) for s in slots]
    none = {}
    for _, nn in per_slot:
        for k, v in nn.items():
            none.setdefault(k, []).append(v)
    ref = {k: statistics.mean(v) for k, v in none.items()}
    if not ref:
        # no `none` runs (W1-W5 of badis only): vm_over is taken against
        # the passes of the reference configuration
        mains = {}
        for runs, _ in per_slot:
            for k, r in runs.get(names[0], {}).items():
                if r['passes']:
                    mains.setdefault(k, []).append(r['passes'])
        ref = {k: statistics.mean(v) for k, v in mains.items()}
    data = {n: [] for n in names}
    for i, (runs, _) in enumerate(per_slot):
        for n in names:
            for key, r in runs.get(n, {}).items():
                r = dict(r, vm_over=(ref[key] / r['passes']
                                     if key in ref and r['passes']
                                     else None))
                data[n].append((i, key, r))
    cases = sorted({k for n in names for _, k, _ in data[n]})
    head = ('No `none` runs: vm_over is the passes of `%s` over this '
            'run\'s (relative to the reference configuration).' % names[0])
    if none:
        head = '`none` passes per slot: ' + '; '.join(
            '%s,%s: %s' % (k[0], k[1], ', '.join(str(x) for x in v))
            for k, v in sorted(none.items()))
    out = [
        head, '',
        'Per case: mean abs error / allowance S_more / S_less (% of booked) '
        '/ vm_over mean [min-max]; mean ± 95 % half-width over the slots.',
        '', '| case | ' + ' | '.join(names) + ' |',
        '|---|' + '---|' * len(names)]
    for key in cases:
        cells = []
        for n in names:
            rs = [r for _, k, r in data[n] if k == key]
            cells.append('%s / %s / %s / %s' % (
                _cell([r['err'] for r in rs], '.2f'),
                _cell([r['S_more'] for r in rs], '.2f'),
                _cell([r['S_less'] for r in rs], '.2f'),
                _range([r['vm_over'] for r in rs])) if rs else '')
        out.append('| %s,%s | ' % key + ' | '.join(cells) + ' |')
    summary = {}
    out += ['', '| over every run | ' + ' | '.join(names) + ' |',
            '|---|' + '---|' * len(names)]
    rows = {}
    for n in names:
        rs = [r for _, _, r in data[n]]
        ov = sorted(r['vm_over'] for r in rs if r['vm_over'])
        summary[n] = {'runs': len(rs),
                      'err': _summ([r['err'] for r in rs]),
                      'S_more': _summ([r['S_more'] for r in rs]),
                      'S_less': _summ([r['S_less'] for r in rs]),
                      'vm_over': _summ(ov),
                      'vm_over_median': (statistics.median(ov) if ov
                                         else None)}
        s = summary[n]
        rows.setdefault('runs', []).append(str(len(rs)))
        for k, label in (('err', 'mean abs error %'), ('S_more', 'S_more %'),
                         ('S_less', 'S_less %')):
            rows.setdefault(label, []).append(
                discipline.fmt(s[k], '.2f') if s[k] else 'n/a')
        rows.setdefault('vm_over: median / worst / mean', []).append(
            '%.3f / %.3f / %s' % (s['vm_over_median'], ov[-1],
                                  discipline.fmt(s['vm_over'], '.3f'))
            if ov else 'n/a')
    for k, v in rows.items():
        out.append('| %s | %s |' % (k, ' | '.join(v)))
    out += _paired(data, names, [('err', '.2f', 'mean abs error %'),
                                 ('S_more', '.2f', 'S_more %'),
                                 ('S_less', '.2f', 'S_less %'),
                                 ('vm_over', '.3f', 'vm_over')], summary)
    return out, {'none_passes': {'%s,%s' % k: v for k, v in none.items()},
                 'configs': summary,
                 'runs': {n: [[i, list(k), r] for i, k, r in data[n]]
                          for n in names}}


def slot_loads(slots):
    """Per slot, (time, load average over 1 min) at each configuration's
    start and at the end, from slot.sh's load.txt."""
    out = {}
    for s in slots:
        path = os.path.join(s, 'load.txt')
        if not os.path.exists(path):
            continue
        pts, when = [], None
        with open(path) as f:
            for line in f:
                if line.startswith('== '):
                    when = line.split()[1]
                elif 'load average:' in line and when:
                    pts.append((when, float(
                        line.split('load average:')[1].split(',')[0])))
                    when = None
        out[s] = pts
    return out


def main(argv):
    if not argv or argv[0] not in ('--patterns', '--w1w5', '--estimators'):
        sys.exit(__doc__)
    kind, argv = argv[0], argv[1:]
    out_json = None
    if argv[:1] == ['--json']:
        out_json, argv = argv[1], argv[2:]
    reference = None
    if argv[:1] == ['--reference']:
        reference, argv = argv[1], argv[2:]
    if kind == '--w1w5':
        lines, data = w1w5(argv, reference=reference)
    else:
        lines, data = patterns(argv, by_estimator=kind == '--estimators',
                               reference=reference)
    loads = slot_loads(argv)
    data['loads'] = loads
    lines += ['', 'Machine load (1-minute load average on 2 cores) at each '
              'configuration\'s start and at the end of its slot:', '']
    lines += ['- %s: %s' % (os.path.basename(s.rstrip('/')), ', '.join(
        '%s %.2f' % (t[11:16], x) for t, x in pts))
        for s, pts in loads.items()]
    print('\n'.join(lines))
    if out_json:
        with open(out_json, 'w') as f:
            json.dump({'slots': argv, **data}, f, indent=1, default=str)


if __name__ == '__main__':
    main(sys.argv[1:])
