"""Badis configurations on the paged guest model (issue 13): the pattern
suite in virtual time, many seeds, paired to a reference configuration.

The TCG pattern suite (bench_patterns.py) is the judge; this screens.
Every case runs the agent's own pipeline, Badis and balloon actuator
against :mod:`memmut.evaluation.guest_model` (tests/harness/model_run.py);
a seed fixes the guest's accesses for every configuration, so a paired
difference has no machine noise, only the seeds' and cases' spread.

    .tox/py3/bin/python -m tests.benchmarks.bench_model \\
        --config badis --config 'np calibration_probe=false' \\
        --seeds 0-4 --out tests/benchmarks/results/model/NAME
    # 10 cases x 5 seeds x (2 configurations + none): about 3 minutes on
    # one core; --workers 2 uses both (not beside a TCG slot)

A configuration's ``sampler=pages`` reads the model through the
page-sampling back-ends' statistics instead of smaps's every page
(:class:`tests.harness.model_run.ModelPageSampler`).

Writes OUT/model.jsonl (one line per run), OUT/model.json (the summary)
and OUT/model.md. ``--costs kvm`` prices swap traffic as on a KVM host.
"""

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import time

from tests.benchmarks import discipline
from tests.harness import model_run

PATTERNS = ('load_idle', 'hotset', 'phases', 'zipf0.8', 'zipf1.2')
STARTS = ('boot', 'loaded')


def parse_config(text):
    """``'NAME [KEY=VALUE ...]'`` -> (name, options); ``oracle`` is the
    one-poll-late oracle."""
    words = text.split()
    if not words:
        raise ValueError('empty configuration')
    name, opts = words[0], tuple(words[1:])
    for o in opts:
        if '=' not in o:
            raise ValueError('bad option %r in configuration %r (want '
                             'KEY=VALUE)' % (o, text))
    return name, opts


def parse_seeds(text):
    """``'0-4'`` or ``'1,3,7'`` -> list of ints."""
    out = []
    for part in text.split(','):
        lo, _, hi = part.partition('-')
        out.extend(range(int(lo), int(hi or lo) + 1))
    if not out:
        raise ValueError('no seeds')
    return out


def cases(configs, patterns, starts, seeds, seconds, costs, shapes=(),
          allocs=('s',), booked_mib=256, data_mib=model_run.DATA_MIB,
          reclaim='lru', writeback_surplus=0.0, timing='bench',
          balloon='instant'):
    """Every run: the ``none`` reference once per pattern (shape and
    allocation) and seed, then each configuration on each case (W1-W5
    from boot only, as the TCG bench runs them)."""
    out = []
    todo = [(p, 's', starts) for p in patterns] + [
        (w, a, ('boot',)) for w in shapes for a in allocs]
    for p, alloc, sts in todo:
        for s in seeds:
            out.append(model_run.Case(p, 'boot', 'none', s, seconds, costs,
                                      label='none', alloc=alloc,
                                      booked_mib=booked_mib,
                                      data_mib=data_mib, reclaim=reclaim,
                                      writeback_surplus=writeback_surplus,
                                      timing=timing, balloon=balloon))
            for st in sts:
                for name, opts in configs:
                    est = 'oracle' if name == 'oracle' else 'badis'
                    out.append(model_run.Case(p, st, est, s, seconds, costs,
                                              opts, label=name, alloc=alloc,
                                              booked_mib=booked_mib,
                                              data_mib=data_mib,
                                              reclaim=reclaim,
                                              writeback_surplus=(
                                                  writeback_surplus),
                                              timing=timing,
                                              balloon=balloon))
    return out


def _run(case):
    return model_run.run_case(case)


def summarize(runs, reference):
    """Per configuration: vm_over (none's ops / its ops) over every case
    and seed, memory saved, swap-in; paired differences to
    ``reference``."""
    none = {(r['pattern'], r['alloc'], r['seed']): r['ops'] for r in runs
            if r['label'] == 'none'}
    by = {}
    for r in runs:
        if r['label'] == 'none':
            continue
        r['vm_over'] = none[(r['pattern'], r['alloc'], r['seed'])] / r['ops']
        by.setdefault(r['label'], {})[
            (_case(r), r['seed'])] = r
    out = {'configs': {}, 'cases': {}, 'paired': {}}
    for name, rs in by.items():
        vo = [r['vm_over'] for r in rs.values()]
        out['configs'][name] = {
            'runs': len(vo), 'vm_over_median': statistics.median(vo),
            'vm_over_worst': max(vo),
            'vm_over': discipline.summarize(vo),
            'saved_pct': discipline.summarize(
                [r['saved_pct'] for r in rs.values()]),
            'swap_in_mib': discipline.summarize(
                [r['swap_in_mib'] for r in rs.values()])}
        errs = [r['error_pct'] for r in rs.values()
                if r.get('error_pct') is not None and _is_shape(r)]
        if errs:
            out['configs'][name]['w1w5_error_pct'] = discipline.summarize(
                errs)
        for (case, _), r in rs.items():
            c = out['cases'].setdefault(case, {}).setdefault(
                name, {'vm_over': [], 'saved_pct': [], 'error_pct': []})
            c['vm_over'].append(r['vm_over'])
            c['saved_pct'].append(r['saved_pct'])
            if r.get('error_pct') is not None:
                c['error_pct'].append(r['error_pct'])
            for k in PACKING + ERRORS:
                if r.get(k) is not None:
                    c.setdefault(k, []).append(r[k])
    ref = by.get(reference, {})
    for name, rs in by.items():
        if name == reference:
            continue
        keys = sorted(set(rs) & set(ref))
        if len(keys) < 2:
            continue
        out['paired'][name] = {
            m: discipline.summarize([rs[k][m] - ref[k][m] for k in keys])
            for m in ('vm_over', 'saved_pct', 'swap_in_mib')}
        shape_keys = [k for k in keys if _is_shape(rs[k]) and
                      rs[k].get('error_pct') is not None and
                      ref[k].get('error_pct') is not None]
        if len(shape_keys) > 1:
            out['paired'][name]['w1w5_error_pct'] = discipline.summarize(
                [rs[k]['error_pct'] - ref[k]['error_pct']
                 for k in shape_keys])
    return out


# what model_run records of the figure the controller packs on
PACKING = ('pack_max_avg_short', 'pack_max_avg_over', 'pack_floor_short',
           'pack_floor_over')


# the goal's estimate errors (% of booked, one poll of allowance)
ERRORS = ('allow_S_more', 'allow_S_less')


def error_lines(summary):
    """Per case and configuration, over the seeds: S_more and S_less
    with one poll of allowance (the issue's figures; % of booked), mean
    and worst; no lines where no run has a defined truth."""
    rows = []
    for case, per in summary['cases'].items():
        for name, c in per.items():
            if c.get('allow_S_more') or c.get('allow_S_less'):
                cells = []
                for k in ERRORS:
                    v = c.get(k) or [0.0]
                    cells.append('%.2f / %.2f' % (statistics.mean(v),
                                                  max(v)))
                rows.append('| %s | %s | %s |' % (case, name,
                                                  ' | '.join(cells)))
    if not rows:
        return []
    return ['', 'Estimate errors with one poll of allowance (% of booked; '
            'a run without a poll of that kind counts 0), mean / worst '
            'over the seeds:', '',
            '| case | configuration | S_more | S_less |', '|---|---|---|---|'
            ] + rows


def packing_lines(summary):
    """Per case and configuration, mean over the seeds: the packing
    figure's shortfall / excess against the truth (% of booked),
    WSS^max_avg alone -> with the shrink floor; no lines without it."""
    rows = []
    for case, per in summary['cases'].items():
        for name, c in per.items():
            if all(c.get(k) for k in PACKING):
                m = [statistics.mean(c[k]) for k in PACKING]
                rows.append('| %s | %s | %.2f / %.2f | %.2f / %.2f |'
                            % (case, name, *m))
    if not rows:
        return []
    return ['', 'The figure the controller packs on against the truth, '
            'mean over the seeds: shortfall / excess, % of booked, one '
            'poll of allowance (`wss_accuracy.packing`); WSS^max_avg '
            'alone, and with the shrink floor (`[consolidation] '
            'pack_on_shrink_floor`):', '',
            '| case | configuration | WSS^max_avg | with floor |',
            '|---|---|---|---|'] + rows


def _is_shape(r):
    return r['pattern'] in model_run.workloads.SHAPES


def _case(r):
    if _is_shape(r):
        return '%s,%s' % (r['pattern'], r['alloc'])
    return '%s, %s' % (r['pattern'], r['start'])


def markdown(summary, args, reference, wall_s):
    lines = ['# Badis on the paged guest model', '',
             'Generated by `tests/benchmarks/bench_model.py` (`%s`, %.0f s). '
             'Costs: %s; timing: %s. A screen, not the judge: the TCG '
             'pattern suite is (doc/source/badis.rst, "The paged guest '
             'model").' % (' '.join(args), wall_s,
                           summary.get('costs', 'tcg'),
                           summary.get('timing', 'bench')), '',
             '| configuration | runs | vm_over median / worst | vm_over '
             'mean | saved % of booked | swap-in MiB | W1-W5 error % |',
             '|---|---|---|---|---|---|---|']
    for name, c in summary['configs'].items():
        w = c.get('w1w5_error_pct')
        lines.append('| %s | %d | %.3f / %.3f | %s | %s | %s | %s |' % (
            name, c['runs'], c['vm_over_median'], c['vm_over_worst'],
            discipline.fmt(c['vm_over'], '.3f'),
            discipline.fmt(c['saved_pct'], '.1f'),
            discipline.fmt(c['swap_in_mib'], '.0f'),
            discipline.fmt(w, '.2f') if w else 'n/a'))
    if summary['paired']:
        lines += ['', 'Paired to `%s` (same case and seed), mean ± 95 %% '
                  'half-width:' % reference, '',
                  '| configuration | vm_over | saved (points) | swap-in '
                  'MiB | W1-W5 error (points) |', '|---|---|---|---|---|']
        for name, p in summary['paired'].items():
            w = p.get('w1w5_error_pct')
            lines.append('| %s | %s | %s | %s | %s |' % (
                name, discipline.fmt(p['vm_over'], '+.3f'),
                discipline.fmt(p['saved_pct'], '+.1f'),
                discipline.fmt(p['swap_in_mib'], '+.0f'),
                discipline.fmt(w, '+.2f') if w else 'n/a'))
    names = list(summary['configs'])
    lines += ['', 'Per case, mean over the seeds: vm_over / saved % '
              '(/ error % of booked where the truth is defined):', '',
              '| case | ' + ' | '.join(names) + ' |',
              '|---|' + '---|' * len(names)]
    for case, per in summary['cases'].items():
        cells = []
        for n in names:
            c = per.get(n)
            cell = 'n/a'
            if c:
                cell = '%.3f / %.1f' % (statistics.mean(c['vm_over']),
                                        statistics.mean(c['saved_pct']))
                if c['error_pct']:
                    cell += ' / %.2f' % statistics.mean(c['error_pct'])
            cells.append(cell)
        lines.append('| %s | %s |' % (case, ' | '.join(cells)))
    lines += error_lines(summary)
    lines += packing_lines(summary)
    return '\n'.join(lines) + '\n'


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--config', action='append', default=[],
                    help="'NAME [KEY=VALUE ...]' of [badis] options, and "
                         "sampler=smaps (every page, the default) or "
                         "sampler=pages ([badis] sample_pages random "
                         "pages, as page_idle and kmod on KVM); the "
                         "first is the reference (default: badis)")
    ap.add_argument('--patterns', default=','.join(PATTERNS))
    ap.add_argument('--starts', default=','.join(STARTS))
    ap.add_argument('--shapes', default='',
                    help='W1-W5 shapes to run as well (e.g. W1,W2,W3,W4,W5)')
    ap.add_argument('--allocs', default='s,d',
                    help="the shapes' allocations: s and/or d")
    ap.add_argument('--seeds', default='0-4')
    ap.add_argument('--seconds', type=float, default=120.0)
    ap.add_argument('--costs', default='tcg',
                    choices=sorted(model_run.guest_model.COSTS))
    ap.add_argument('--booked-mib', type=int, default=256,
                    help="the guest's memory (MiB)")
    ap.add_argument('--data-mib', type=int, default=model_run.DATA_MIB,
                    help="the patterns' data and W1-W5's peak (MiB)")
    ap.add_argument('--reclaim', default='lru',
                    choices=model_run.guest_model.RECLAIM_RULES,
                    help="the guest's reclaim: lru (ideal, the default) or "
                         "clock (the kernel's second chance on accessed "
                         "bits: a load's pages all look touched)")
    ap.add_argument('--writeback-surplus', type=float, default=0.0,
                    help="pages a balloon shrink makes the guest write to "
                         "swap and leave resident in its swap cache, per "
                         "page it frees (0, the default: no swap cache; "
                         "TCG's first probes wrote about 2)")
    ap.add_argument('--timing', default='bench',
                    choices=model_run.TIMINGS,
                    help="the agent's clock: bench (the TCG bench's 0.5 s "
                         "polls, 1 s rounds, 4 s slice, the default) or "
                         "production (the agent's defaults: 5 s polls, "
                         "60 s rounds, 1 h slice; give --seconds in "
                         "production's time, e.g. 7200 for the bench's "
                         "120 s at 60 times)")
    ap.add_argument('--balloon', default='instant',
                    choices=model_run.guest_model.BALLOON_RULES,
                    help="how the guest meets a balloon shrink: instant "
                         "(any size at once, the default) or reclaim (free "
                         "memory at once, then at the costs' balloon rate "
                         "only pages untouched for a second: a balloon "
                         "asked below what the program touches stops "
                         "short, as on the TCG guests)")
    ap.add_argument('--workers', type=int, default=1)
    ap.add_argument('--out', required=True)
    args = ap.parse_args(argv)
    why = model_run.workloads.size_error(args.booked_mib, args.data_mib)
    if why:
        ap.error(why)
    try:
        configs = [parse_config(c) for c in (args.config or ['badis'])]
        seeds = parse_seeds(args.seeds)
    except ValueError as e:
        ap.error(str(e))
    names = [n for n, _ in configs]
    if len(set(names)) != len(names) or 'none' in names:
        ap.error('configuration names must be unique and not "none"')
    patterns = [p for p in args.patterns.split(',') if p]
    known = model_run.pattern_names()
    bad = [p for p in patterns if p not in known]
    if bad:
        ap.error('unknown pattern(s) %s (known: %s)'
                 % (', '.join(bad), ', '.join(known)))
    starts = args.starts.split(',')
    if set(starts) - set(STARTS):
        ap.error('starts are boot and/or loaded')
    shapes = [w for w in args.shapes.split(',') if w]
    bad = [w for w in shapes if w not in model_run.workloads.SHAPES]
    allocs = args.allocs.split(',')
    if bad or set(allocs) - {'s', 'd'}:
        ap.error('shapes are W1-W5 and allocations s and/or d')
    top = model_run.guest_model.MAX_WRITEBACK_SURPLUS
    if not 0 <= args.writeback_surplus <= top:
        ap.error('--writeback-surplus must be within 0-%d' % top)
    todo = cases(configs, patterns, starts, seeds, args.seconds, args.costs,
                 shapes, allocs, args.booked_mib, args.data_mib,
                 args.reclaim, args.writeback_surplus, args.timing,
                 args.balloon)
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    runs = []
    with open(os.path.join(args.out, 'model.jsonl'), 'w') as f:
        if args.workers > 1:
            with multiprocessing.Pool(args.workers) as pool:
                it = pool.imap(_run, todo)
                for r in it:
                    runs.append(r)
                    f.write(json.dumps(r) + '\n')
                    f.flush()
        else:
            for c in todo:
                r = _run(c)
                runs.append(r)
                f.write(json.dumps(r) + '\n')
                f.flush()
    summary = summarize(runs, names[0])
    summary['costs'] = args.costs
    summary['timing'] = args.timing
    with open(os.path.join(args.out, 'model.json'), 'w') as f:
        json.dump(summary, f, indent=1, sort_keys=True)
    text = markdown(summary, argv, names[0], time.time() - t0)
    with open(os.path.join(args.out, 'model.md'), 'w') as f:
        f.write(text)
    print(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
