"""The consolidation trade-off curve (issue 19, items 1 and 3).

Run through ``bench_consolidation --sweep``. Every configuration (a
packing and an algorithm set) runs on every input:

* the Bitbrains month in windows of ``--window-days`` (warm starts, as in
  the main benchmark) when the trace is present, else left out;
* synthetic traces of different character (:mod:`memmut.simulator.
  synthetic` profiles: ``default``, ``bursty``, ``memory_spikes``,
  ``dense`` with four times the VMs, ``diurnal``), ``--sweep-seeds``
  seeds each; ``--sweep-profiles held-out`` runs instead the profiles no
  default was chosen on (``churn``, ``heavy_tail``, ``memory_growth``).

Configurations: the pre-issue-19 defaults (Neat's detection and placement,
memmut's selection, 100 samples of history) in both packings, the
migration-aware defaults in both packings, the first migration-aware
defaults ("v1": 4 and 8 hour forecasts on 100 samples, before the
day-long underload forecast), and one-at-a-time variations of the main
knobs around the defaults (placement CPU threshold in both packings; in
WSS packing the underload forecast's peak threshold and window, the
placement's CPU and memory windows, the selection's CPU target, the dense
margin and the minimum dwell time). ``--sweep-configs`` picks some: all
of them take over an hour on the shared machine.

Per input group (Bitbrains windows, or one synthetic profile's seeds)
every figure is a mean with its 95 % interval over the repeats
(:mod:`tests.benchmarks.discipline`). Distance from the lower bound:
``active hosts / lower bound - 1``, the lower bound being, per step,
``max over resources of ceil(sum of demands / host capacity)`` (CPU, and
memory as the packing counts it: booked, or WSS^max_avg plus headroom),
averaged over the steps (:func:`memmut.simulator.quality.lower_bound`).
Beside it, as references and not goals, the distance from the same bound
with hosts filled only to the placement's thresholds
(:func:`memmut.simulator.quality.target_lower_bound`) and from that
bound held over one-hour blocks
(:func:`memmut.simulator.quality.held_lower_bound`).

The ESV goal is judged twice: on the two means' intervals, and on the
paired per-input ratios (:func:`esv_paired`).

Writes ``tradeoff.json``, ``tradeoff.csv`` (one row per run),
``tradeoff.md`` and ``tradeoff_{migrations,slav}.png`` into
``tests/benchmarks/results/consolidation/``.
"""

import csv
import dataclasses
import json
import os
import sys
import time

import numpy as np

from memmut.consolidation import algorithm
from memmut.consolidation import loader
from memmut.consolidation import move_order
from memmut.consolidation import planner
from memmut.consolidation import young
from memmut.simulator import engine
from memmut.simulator import synthetic
from tests.benchmarks import discipline

SYNTHETIC = (('default', 300), ('bursty', 300), ('memory_spikes', 300),
             ('dense', 1200), ('diurnal', 300))
# Profiles no default was chosen on (``--sweep-profiles held-out``):
# ``churn``'s 300 are slots, each re-occupied as its VM leaves.
HELD_OUT = (('churn', 300), ('heavy_tail', 300), ('memory_growth', 300))
SYNTHETIC_DAYS = 3.0
SYNTHETIC_STEP = 300.0


def _usual_counts():
    """profile -> the VM count the sweep runs it with."""
    return dict(list(SYNTHETIC) + list(HELD_OUT))


def synthetic_set(names=''):
    """The ``(profile, n_vms)`` of ``--sweep-profiles``: comma-separated
    profile names, each with its sweep's VM count or ``NAME:VMS`` for
    another, ``tuned`` (the five the defaults were chosen on, the
    default) or ``held-out``. Raises ValueError on an unknown name or a
    bad count."""
    known = _usual_counts()
    out = []
    for word in [w.strip() for w in (names or 'tuned').split(',')]:
        name, _, count = word.partition(':')
        if word == 'tuned':
            chosen = SYNTHETIC
        elif word == 'held-out':
            chosen = HELD_OUT
        elif name in known:
            try:
                n_vms = int(count) if count else known[name]
            except ValueError:
                n_vms = 0
            if n_vms < 1:
                raise ValueError('bad VM count in %r (want NAME:VMS, VMS '
                                 'a positive integer)' % word)
            chosen = ((name, n_vms),)
        else:
            raise ValueError('unknown synthetic profile %r (known: tuned, '
                             'held-out, %s)' % (word, ', '.join(known)))
        out.extend(c for c in chosen if c not in out)
    return tuple(out)


GOALS = {
    'migrations_per_vm_day': ('<=', 0.15, 1, ''),
    'cpu_overload': ('<=', 0.003, 100, ' %'),
    'over_lower_bound': ('<=', 0.15, 100, ' %'),
    'memory_caused_share': ('<=', 0.03, 100, ' %'),
    'memory_overload': ('<=', 0.002, 100, ' %'),
}

# The order of the goals in the Markdown (a JSON written with sorted
# keys and read back keeps no order).
_GOAL_ORDER = list(GOALS) + ['esv_below_neat', 'esv_paired_ratio']

FIGURES = (
    # key, metric, label, format, scale, unit
    ('hosts', 'avg_active_hosts', 'active hosts', '.2f', 1, ''),
    ('lower_bound', 'lower_bound_hosts', 'lower bound', '.2f', 1, ''),
    ('over_lower_bound', None, 'above the lower bound', '.1f', 100, ' %'),
    ('target_bound', 'lower_bound_target_hosts', 'target bound', '.2f', 1,
     ''),
    ('over_target_bound', None, 'above the target bound', '.1f', 100,
     ' %'),
    ('held_bound', 'lower_bound_held_hosts', 'held target bound', '.2f', 1,
     ''),
    ('over_held_bound', None, 'above the held target bound', '.1f', 100,
     ' %'),
    ('migrations_per_vm_day', 'migrations_per_vm_day',
     'migrations per VM-day', '.3f', 1, ''),
    ('cpu_overload', 'cpu_overload_host_time_fraction',
     'CPU overload (host time)', '.3f', 100, ' %'),
    ('otf', 'otf', 'OTF (per host)', '.3f', 100, ' %'),
    ('pdm', 'pdm', 'PDM', '.4f', 100, ' %'),
    ('slav', 'slav', 'SLAV', '.3g', 1, ''),
    ('energy_kwh', 'energy_kwh', 'energy (kWh)', '.1f', 1, ''),
    ('esv', 'esv', 'ESV (kWh)', '.3g', 1, ''),
    ('memory_caused_share', 'memory_caused_share',
     'migrations caused by memory', '.2f', 100, ' %'),
    # the same moves per VM-day (the share of few moves can be most of
    # them: derived, :func:`derive`)
    ('memory_moves_per_vm_day', None,
     'memory-caused migrations per VM-day', '.4f', 1, ''),
    ('memory_overload', 'memory_overload_host_time_fraction',
     'memory overload (host time)', '.3f', 100, ' %'),
    # With remote memory (remote_memory_fraction): memory overload the
    # lenders did not serve, and what they served.
    ('memory_unserved', 'memory_unserved_host_time_fraction',
     'memory overload not served remotely (host time)', '.3f', 100, ' %'),
    ('remote_time', 'remote_memory_host_time_fraction',
     'served remotely (host time)', '.3f', 100, ' %'),
    ('remote_gib_hours', 'remote_memory_gib_hours',
     'remote memory (GiB-h)', '.1f', 1, ''),
)
REMOTE_FIGURES = ('memory_unserved', 'remote_time', 'remote_gib_hours')


def configurations():
    """name -> (mode, AlgorithmSpec, PlanParams, what it changes[,
    Settings fields to replace])."""
    neat = loader.AlgorithmSpec.neat()
    aware = loader.AlgorithmSpec()
    p_neat = planner.PlanParams(spec=neat, min_dwell_rounds=0,
                                migration_budget=0)
    p_aware = planner.PlanParams(spec=aware)
    place = loader.parameters('placement', aware.placement,
                              aware.placement_parameters)
    under = loader.parameters('underload', aware.underload,
                              aware.underload_parameters)
    # Neat's data_collector_data_length and memmut's before the day-long
    # forecasts: the sets that predate them keep it.
    short = {'history_length': 100}

    def vary(spec_field, key, value, base):
        params = dict(base)
        params[key] = value
        spec = dataclasses.replace(aware, **{spec_field: params})
        return spec, dataclasses.replace(p_aware, spec=spec)

    def vary_underload(key, value):
        params = dict(under)
        params[key] = value
        spec = dataclasses.replace(aware, underload_parameters=params,
                                   memory_underload_parameters=params)
        return spec, dataclasses.replace(p_aware, spec=spec)

    out = {
        'booked pre-19 (Neat)': ('booked', neat, p_neat, 'baseline',
                                 short),
        'wss pre-19': ('wss', neat, p_neat, 'baseline', short),
        'booked default': ('booked', aware, p_aware, 'default'),
        'wss default': ('wss', aware, p_aware, 'default'),
    }
    # The defaults before stop 41: memory overload on the last value
    # alone, no day-long memory window in the placement.
    pre41 = dataclasses.replace(
        aware, memory_overload='threshold',
        memory_overload_parameters={'threshold': 0.95},
        placement_parameters=dict(place, memory_window=0))
    out['wss pre-41'] = ('wss', pre41, dataclasses.replace(
        p_aware, spec=pre41), 'defaults before stop 41')
    # The first migration-aware defaults (4 and 8 hour forecasts on 100
    # samples of history, no memory forecast in the placement).
    params = dict(under, window=96)
    v1 = dataclasses.replace(
        aware, underload_parameters=params,
        memory_underload_parameters=params, overload_parameters={},
        placement_parameters=dict(place, memory_window=0))
    for mode in ('booked', 'wss'):
        out['%s v1 (4-8 h forecasts)' % mode] = (
            mode, v1, dataclasses.replace(p_aware, spec=v1,
                                          migration_budget=0),
            'previous default', short)
    # The defaults of issue 19's part 5 (no migration budget, CPU
    # overload at the threshold algorithm's 0.9), and each of part 6's
    # two changes alone.
    p5 = dataclasses.replace(aware, overload_parameters={})
    out['wss part-5 default'] = (
        'wss', p5, dataclasses.replace(p_aware, spec=p5,
                                       migration_budget=0),
        'previous default')
    out['wss budget=0'] = ('wss', aware, dataclasses.replace(
        p_aware, migration_budget=0), 'migration_budget')
    out['wss overload=0.9'] = ('wss', p5, dataclasses.replace(
        p_aware, spec=p5), 'overload threshold')
    for b in (0.05, 0.2):
        out['wss budget=%g' % b] = ('wss', aware, dataclasses.replace(
            p_aware, migration_budget=b), 'migration_budget')
    for mode in ('booked', 'wss'):
        for c in (0.7, 0.9):
            if c == place['cpu_threshold']:
                continue
            spec, p = vary('placement_parameters', 'cpu_threshold', c,
                           place)
            out['%s cpu_threshold=%g' % (mode, c)] = (
                mode, spec, p, 'placement cpu_threshold')
    for v in (0.4, 0.6):
        if v != under['peak_threshold']:
            spec, p = vary_underload('peak_threshold', v)
            out['wss peak_threshold=%g' % v] = (
                'wss', spec, p, 'underload peak_threshold')
    sel = loader.parameters('vm_selection', aware.vm_selection,
                            aware.vm_selection_parameters)
    spec, p = vary('vm_selection_parameters', 'cpu_target', 0.7, sel)
    out['wss cpu_target=0.7'] = ('wss', spec, p, 'selection cpu_target')
    spec, p = vary('placement_parameters', 'dense_cpu_margin', 0.2, place)
    out['wss dense_margin=0.2'] = ('wss', spec, p,
                                   'placement dense_cpu_margin')
    # Memory headroom at placement (stop 39, for memory_spikes: a host
    # filled to 0.95 of its memory on working sets overflows when its
    # VMs' working sets rise together).
    for r in (0.85, 0.9):
        if r != place['ram_threshold']:
            spec, p = vary('placement_parameters', 'ram_threshold', r,
                           place)
            out['wss ram_threshold=%g' % r] = ('wss', spec, p,
                                               'placement ram_threshold')

    # The forecast windows (samples of 300 s; a window longer than the
    # history, history_length samples, is the history). The defaults may
    # be durations: compared in samples.
    def in_samples(params, key):
        return algorithm.samples(params, key, SYNTHETIC_STEP)

    for w in (96, 288):
        if w != in_samples(place, 'window'):
            spec, p = vary('placement_parameters', 'window', w, place)
            out['wss place_window=%d' % w] = ('wss', spec, p,
                                              'placement window')
    for w in (96, 144):
        if w != in_samples(under, 'window'):
            spec, p = vary_underload('window', w)
            out['wss under_window=%d' % w] = (
                'wss', spec, p, 'underload forecast window')
    # A shorter underload forecast (more hosts emptied: after a burn-in
    # the only knob that moved Bitbrains' hosts, at the cost of its CPU
    # overload) with the evacuated VMs placed more cautiously (stop 64):
    # on their CPU peak over a day, or below 0.7 of the host's CPU.
    for w in (96, 144):
        for name, key, value in (('place_window=288', 'window', 288),
                                 ('cpu_threshold=0.7', 'cpu_threshold',
                                  0.7)):
            spec, _ = vary_underload('window', w)
            spec = dataclasses.replace(
                spec, placement_parameters=dict(place, **{key: value}))
            out['wss under_window=%d %s' % (w, name)] = (
                'wss', spec, dataclasses.replace(p_aware, spec=spec),
                'underload forecast window + placement ' + key)
    for w in (0, 288):
        if w != in_samples(place, 'memory_window'):
            spec, p = vary('placement_parameters', 'memory_window', w,
                           place)
            out['wss memory_window=%d' % w] = (
                'wss', spec, p, 'placement memory_window')
    # What VMs with little history are packed on (issue 19, part 5); the
    # spike prior also with the placement's day-long memory window (the
    # VMs' recurring spikes).
    for name in ('booked', 'prior', 'spike_prior'):
        out['wss young=%s' % name] = ('wss', aware, p_aware,
                                      'young_vm_policy',
                                      {'young': young.YoungPolicy(name)})
    spec, p = vary('placement_parameters', 'memory_window', 288, place)
    out['wss young=spike_prior memory_window=288'] = (
        'wss', spec, p, 'young_vm_policy + memory_window',
        {'young': young.YoungPolicy('spike_prior')})

    # A same-time-yesterday part in the overload forecasts (issue 19,
    # part 7: overload.seasonal_rise, and seasonal_peak in
    # tradeoff_seasonal_level): on memory (the recurring spikes of
    # groups of VMs), on CPU (the shared day), alone and with the
    # placement's day-long memory window and the spike prior for young
    # VMs, which keep the moved VMs apart.
    def seasonal(field, threshold, lead=12, kind='rise'):
        return {field: 'forecast_threshold',
                field + '_parameters': {'threshold': threshold,
                                        'period': 288, 'lead': lead,
                                        'seasonal': kind}}
    mem_s = seasonal('memory_overload', 0.95)
    cpu_s = seasonal('overload', 0.85)
    spike = {'young': young.YoungPolicy('spike_prior')}
    window = {'placement_parameters': dict(place, memory_window=288)}
    for name, fields, extra in (
            ('mem_seasonal', mem_s, {}),
            ('mem_seasonal lead=24', seasonal('memory_overload', 0.95, 24),
             {}),
            ('mem_seasonal memory_window=288', dict(mem_s, **window), {}),
            ('mem_seasonal young=spike_prior', mem_s, spike),
            ('mem_seasonal memory_window=288 young=spike_prior',
             dict(mem_s, **window), spike),
            ('cpu_seasonal', cpu_s, {}),
            ('seasonal memory_window=288 young=spike_prior',
             dict(mem_s, **cpu_s, **window), spike)):
        spec = dataclasses.replace(aware, **fields)
        out['wss ' + name] = ('wss', spec, dataclasses.replace(
            p_aware, spec=spec), 'seasonal overload forecast', extra)
    # A CPU overload that must last two samples (the mean of the last
    # two above 0.85): a burst that ends before its VMs could be copied
    # moves nothing (issue 19, part 7, for bursty's migrations).
    spec = dataclasses.replace(aware, overload='forecast_threshold',
                               overload_parameters={'threshold': 0.85,
                                                    'n': 2})
    out['wss overload n=2'] = ('wss', spec, dataclasses.replace(
        p_aware, spec=spec), 'overload persistence')
    # A CPU overload seen coming: Neat's local regression over the last
    # ``length`` samples predicts the host above the threshold ``horizon``
    # steps after a migration started now would end (diurnal's shared
    # afternoon rise keeps filling a host while its relief waits and
    # copies, 13 minutes on average: causes_diurnal.md).
    for length, horizon in ((12, 1), (12, 3), (6, 1)):
        spec = dataclasses.replace(
            aware, overload='forecast_threshold',
            overload_parameters={'threshold': 0.85, 'n': 1,
                                 'length': length, 'horizon': horizon})
        out['wss overload trend length=%d horizon=%d' % (
            length, horizon)] = ('wss', spec, dataclasses.replace(
                p_aware, spec=spec), 'overload trend forecast')
    # The memory-load history of a VM's first time slice counted at its
    # booking, as before [consolidation] prewarm_history's default became
    # first_estimate (the first estimate once the VM has one: part 7's
    # tradeoff_prewarm compared the two the other way round).
    out['wss prewarm=booked'] = (
        'wss', aware, p_aware, 'prewarm_history',
        {'prewarm_history': 'booked'})
    # The VMs taken off an overloaded host sent to the active host with
    # the most CPU left instead of the best fit (issue 19, part 8, for
    # bursty: its CPU overload is mostly time spent waiting for the
    # moves of hosts that received a VM and overflowed in turn).
    if place.get('overload_fit') != 'worst':
        spec, p = vary('placement_parameters', 'overload_fit', 'worst',
                       place)
        out['wss overload_fit=worst'] = ('wss', spec, p,
                                         'placement overload_fit')
    # The VMs of a host emptied for underload spread the same way (stop
    # 36, for bursty: hosts filled to the CPU threshold by evacuations
    # overflow at the next burst).
    spec, p = vary('placement_parameters', 'underload_fit', 'worst', place)
    out['wss underload_fit=worst'] = ('wss', spec, p,
                                      'placement underload_fit')
    spec, p = vary('placement_parameters', 'underload_fit', 'worst',
                   dict(place, overload_fit='worst'))
    out['wss fit=worst'] = ('wss', spec, p,
                            'placement overload_fit + underload_fit')
    # The same VMs packed, still by best fit, on their CPU peak over a
    # longer window (their bursts of the last day).
    for w in (144, 288):
        if place.get('overload_window') != w:
            spec, p = vary('placement_parameters', 'overload_window', w,
                           place)
            out['wss overload_window=%d' % w] = (
                'wss', spec, p, 'placement overload_window')
    # Not planner settings but references for what the defaults' CPU
    # overload is made of (issue 19, part 8): the same plans executed
    # with 4 migrations per host at a time instead of nova's 1, and
    # with migrations that take no time (bursty's overload is mostly
    # hosts waiting for their moves to copy).
    out['wss reference: 4 migrations per host'] = (
        'wss', aware, p_aware, 'reference (execution)',
        {'migration_concurrency': 4})
    # memmut's own executor hands a round's moves to nova [nova]
    # max_parallel at a time (default 1): the defaults' plans executed
    # that way, cloud-wide, against the per-host limit alone.
    for n in (1, 4):
        out['wss reference: executor max_parallel=%d' % n] = (
            'wss', aware, p_aware, 'reference (execution)',
            {'migration_parallel': n})
    # memmut's controller runs a round's moves to the end before it
    # waits an interval for the next round (memmut.globals.service);
    # the simulator plans a round every interval around the moves in
    # flight. The controller as configured by default:
    out['wss reference: controller pacing'] = (
        'wss', aware, p_aware, 'reference (execution)',
        {'round_pacing': engine.AFTER_EXECUTION, 'migration_parallel': 4})
    out['wss reference: instant migrations'] = (
        'wss', aware, p_aware, 'reference (execution)',
        {'migration_concurrency': 100, 'bandwidth_mb_s': 1e5})
    # The order the moves queue in (issue 19, part 9: bursty's overload
    # moves waited behind other moves leaving the same host).
    for order in move_order.ORDERS:
        if order != engine.Settings.move_order:
            out['wss move_order=%s' % order] = (
                'wss', aware, p_aware, 'move_order',
                {'move_order': order})
    # Memory overload left to remote memory up to a fraction of the
    # host's memory instead of moving VMs (remote_absorb; for
    # memory_spikes, whose moves are nearly all caused by memory).
    for f in (0.1, 0.2, 0.3):
        if f != p_aware.remote_memory_fraction:
            out['wss remote=%g' % f] = (
                'wss', aware, dataclasses.replace(
                    p_aware, remote_memory_fraction=f),
                'remote_memory_fraction')
    # The seasonal memory forecast compared with 0.95, the level the
    # current load is held to (the default until stop 79, now 1.0: on
    # the default and diurnal profiles its moves relieved hosts whose
    # WSS^max_avg sum was 0.89-0.92 and whose VMs' own memory never
    # came within 7 % of the host), or in between.
    mem = aware.memory_overload_parameters
    for th in (0.95, 0.98, 1.0):
        if th != mem.get('seasonal_threshold'):
            spec, p = vary('memory_overload_parameters',
                           'seasonal_threshold', th, mem)
            out['wss mem_seasonal_threshold=%g' % th] = (
                'wss', spec, p, 'memory overload seasonal_threshold')
    # The VMs an overload sends away chosen on the seasonal forecast as
    # well as the last hour (longest_relief's period; stop 79: on
    # memory_spikes a seasonal detection moved a dozen VMs that had not
    # risen, per round, and the host overflowed all the same).
    sel = aware.vm_selection_parameters
    if not sel.get('period'):
        spec, p = vary('vm_selection_parameters', 'period', '1d', sel)
        out['wss selection period=1d'] = ('wss', spec, p,
                                          'vm_selection period')
    for d in (0, 288):
        if d != p_aware.min_dwell_rounds:
            out['wss dwell=%d' % d] = (
                'wss', aware, dataclasses.replace(p_aware,
                                                  min_dwell_rounds=d),
                'min_dwell_rounds')
    return out


def inputs(real, window_days, seeds, first_seed=0, warm_days=0.0,
           profiles=None):
    """(group, label, trace, start_steps, duration_steps); the synthetic
    ``profiles`` (``(profile, n_vms)``, :func:`synthetic_set`; None:
    :data:`SYNTHETIC`) with
    ``seeds`` seeds from ``first_seed`` on, as
    ``(profile, n_vms, seed, days, warm_days)`` for
    :func:`synthetic_trace`. ``warm_days``: each synthetic trace is
    that much longer and the run starts after it, its VMs then having
    that much history (a warm start, like the Bitbrains windows after
    the first; 0: every VM new at the start)."""
    out = []
    if real is not None:
        n = int(round(window_days * 86400.0 / real.step))
        for k in range(real.n_steps // n):
            out.append(('bitbrains', 'days %g-%g' % (k * window_days,
                                                     (k + 1) * window_days),
                        real, k * n, n))
    warm = int(round(warm_days * 86400.0 / SYNTHETIC_STEP))
    days = int(round(SYNTHETIC_DAYS * 86400.0 / SYNTHETIC_STEP))
    usual = _usual_counts()
    for profile, n_vms in SYNTHETIC if profiles is None else profiles:
        group = 'synthetic ' + profile
        if n_vms != usual.get(profile):
            group += ' (%d VMs)' % n_vms
        for seed in range(first_seed, first_seed + seeds):
            out.append((group, 'seed %d' % seed,
                        (profile, n_vms, seed, SYNTHETIC_DAYS, warm_days),
                        warm, days if warm else 0))
    return out


def synthetic_trace(key):
    """The synthetic trace of an input's ``(profile, n_vms, seed, days,
    warm_days)``."""
    profile, n_vms, seed, days, warm_days = key
    return synthetic.generate(n_vms, days + warm_days, seed,
                              profile=profile, step=SYNTHETIC_STEP)


def describe(key):
    """An input's synthetic trace in words (the JSON's ``inputs``)."""
    profile, n_vms, seed, days, warm_days = key
    return ('synthetic(profile=%s, vms=%d, days=%g, seed=%d%s)'
            % (profile, n_vms, days, seed,
               ', after %g warm days' % warm_days if warm_days else ''))


def esv_paired(rows, group, wss='wss default',
               neat='booked pre-19 (Neat)'):
    """The ESV goal on paired inputs: per input of ``group`` the ratio of
    ``wss``'s ESV to ``neat``'s (the same trace and window), their
    geometric mean and 95 % interval (:func:`discipline.paired_ratio`).
    The inputs differ far more than the two packings do on one input
    (Bitbrains' windows: Neat's ESV from 2e-4 to 5e-3 kWh), so the
    unpaired intervals of the two means overlap where every input says
    the same. Met when the whole interval is below 1. Undefined (None)
    when an ESV is 0: a packing with no CPU overload has none."""
    by = {}
    for r in rows:
        if r['group'] == group and r['config'] in (wss, neat):
            by.setdefault(r['input'], {})[r['config']] = r['esv']
    pairs = [(d[wss], d[neat]) for _, d in sorted(by.items())
             if wss in d and neat in d]
    out = {'goal': 'paired WSS / Neat ESV < 1'}
    if len(pairs) < 2 or any(a <= 0 or b <= 0 for a, b in pairs):
        zero = sum(1 for a, b in pairs if b <= 0)
        out.update(value='undefined (Neat\'s ESV 0 on %d of %d inputs)'
                   % (zero, len(pairs)), met=False,
                   mean_met=bool(pairs) and all(a < b for a, b in pairs))
        return out
    ratio = discipline.paired_ratio([a for a, _ in pairs],
                                    [b for _, b in pairs])
    out.update(value='%.3g [%.3g, %.3g] (n=%d)' % (
        ratio['mean'], ratio['low'], ratio['high'], ratio['n']),
        met=ratio['high'] < 1.0, mean_met=ratio['mean'] < 1.0)
    return out


PAIRED = (('hosts', '.2f', 1, ''),
          ('migrations_per_vm_day', '.3f', 1, ''),
          ('cpu_overload', '.3f', 100, ' %'),
          ('memory_overload', '.3f', 100, ' %'),
          ('memory_caused_share', '.1f', 100, ' %'))


def paired_differences(rows, ref='wss default',
                       skip=('booked pre-19 (Neat)',),
                       keys=tuple(k for k, *_ in PAIRED)):
    """config -> group -> figure -> discipline summary of the per-input
    differences ``config - ref`` (the same trace, window or seed on
    both sides): the inputs of a group differ far more than two
    configurations on one input, so a change shows in the paired
    difference long before the two means' intervals part."""
    by = {}
    for r in rows:
        by.setdefault((r['group'], r['input']), {})[r['config']] = r
    out = {}
    for (group, _), d in sorted(by.items()):
        if ref not in d:
            continue
        for cname, r in d.items():
            if cname == ref or cname in skip:
                continue
            per = out.setdefault(cname, {}).setdefault(group, {})
            for k in keys:
                if k in r and k in d[ref]:
                    per.setdefault(k, []).append(r[k] - d[ref][k])
    return {c: {g: {k: discipline.summarize(v) for k, v in figs.items()}
                for g, figs in per.items()}
            for c, per in out.items()}


def paired_markdown(paired, ref='wss default'):
    """The paired differences as Markdown lines (a section per group;
    ``*``: the 95 % interval excludes 0)."""
    if not paired:
        return []
    label = {k: lab for k, _, lab, *_ in FIGURES}
    lines = ['## Paired differences to "%s"' % ref, '',
             'Per input (the same Bitbrains window or synthetic seed), '
             'the configuration\'s figure minus the default\'s; mean ± '
             'half-width of the 95 % interval over the inputs. *: the '
             'interval excludes 0.', '']
    groups = sorted({g for per in paired.values() for g in per})
    for group in groups:
        rows = []
        for cname in sorted(paired):
            figs = paired[cname].get(group)
            if not figs:
                continue
            row = [cname]
            for k, fmt, scale, unit in PAIRED:
                s = figs.get(k)
                if s is None:
                    row.append('-')
                    continue
                star = (' *' if s['half_width'] is not None and
                        (s['low'] > 0 or s['high'] < 0) else '')
                hw = ('?' if s['half_width'] is None else
                      format(s['half_width'] * scale, fmt))
                row.append('%s ± %s%s (n=%d)%s' % (
                    format(s['mean'] * scale, '+' + fmt), hw, unit,
                    s['n'], star))
            rows.append(row)
        lines += ['### %s' % group, '',
                  discipline.markdown_table(
                      ['configuration'] + ['Δ ' + label[k]
                                           for k, *_ in PAIRED], rows), '']
    return lines


def figures_of(m):
    out = {}
    for key, metric, *_ in FIGURES:
        if metric:
            out[key] = float(m.get(metric) or 0.0)
    for over, bound in (('over_lower_bound', 'lower_bound'),
                        ('over_target_bound', 'target_bound'),
                        ('over_held_bound', 'held_bound')):
        lb = out[bound]
        out[over] = out['hosts'] / lb - 1.0 if lb else 0.0
    return derive(out)


def derive(figures):
    """``figures`` with what is derived from the others filled in where
    missing (a CSV written before it existed): the memory-caused
    migrations per VM-day, share times rate."""
    if 'memory_moves_per_vm_day' not in figures and \
            'memory_caused_share' in figures and \
            'migrations_per_vm_day' in figures:
        figures['memory_moves_per_vm_day'] = (
            figures['memory_caused_share']
            * figures['migrations_per_vm_day'])
    return figures


def summarize_rows(rows, configs):
    """config -> group -> figure -> discipline summary."""
    summary = {}
    for cname in configs:
        for group in sorted({r['group'] for r in rows}):
            sel = [r for r in rows if r['config'] == cname
                   and r['group'] == group]
            if not sel:
                continue
            # (a CSV written before a figure existed lacks its column)
            summary.setdefault(cname, {})[group] = {
                key: discipline.summarize([r[key] for r in sel])
                for key, *_ in FIGURES if key in sel[0]}
    return summary


def _sig(obj):
    """Floats to 6 significant digits, large ones too (the sweep's
    files are compared across runs digit by digit; SLAV and ESV are
    ~1e-7)."""
    if isinstance(obj, dict):
        return {k: _sig(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_sig(v) for v in obj]
    if isinstance(obj, float):
        return float('%.6g' % obj)
    return obj


def write_json(path, data):
    with open(path, 'w') as f:
        json.dump(_sig(data), f, indent=1, sort_keys=True)
        f.write('\n')


def read_csv(path):
    with open(path, newline='') as f:
        out = []
        for r in csv.DictReader(f):
            out.append(derive({
                k: (v if k in ('config', 'mode', 'group', 'input')
                    else float(v)) for k, v in r.items()}))
        return out


def selected(configs, only):
    """The configurations whose names contain one of ``only`` (comma-
    separated; empty: all), with the two the goals compare always in."""
    if not only:
        return configs
    words = [w.strip() for w in only.split(',') if w.strip()]
    return {k: v for k, v in configs.items()
            if k in ('wss default', 'booked pre-19 (Neat)')
            or any(w in k for w in words)}


def spread(summary, keys=('migrations_per_vm_day', 'cpu_overload',
                          'over_lower_bound', 'over_target_bound',
                          'over_held_bound', 'hosts',
                          'memory_caused_share', 'memory_overload')):
    """config -> figure -> {median, worst, worst_group} over the input
    groups' means (worst: the largest; for every figure here lower is
    better)."""
    out = {}
    for cname, per in summary.items():
        d = {}
        for k in keys:
            means = {g: s[k]['mean'] for g, s in per.items()
                     if k in s and s[k]['mean'] is not None}
            if not means:
                continue
            worst = max(means, key=means.get)
            d[k] = {'median': float(np.median(list(means.values()))),
                    'worst': means[worst], 'worst_group': worst}
        out[cname] = d
    return out


def run(real, base, window_days, seeds, seed, rec, log=sys.stderr,
        only='', first_seed=0, warm_days=0.0, burn_in_days=0.0,
        profiles=None):
    """Every configuration on every input; returns the result dict.
    ``burn_in_days``: every run simulated that long before its input's
    start and not accounted (the planner's own packing at the start, not
    a fresh one: :attr:`engine.Settings.burn_in_steps`; a run starting
    at the trace's beginning has none)."""
    configs = selected(configurations(), only)
    ins = inputs(real, window_days, seeds, first_seed, warm_days, profiles)
    cases = [[c, i] for c in sorted(configs) for i in range(len(ins))]
    order = rec.order(cases, repeats=1, name='sweep')
    traces = {}
    rows = []
    t_all = time.perf_counter()
    for done, ((cname, i), _) in enumerate(order):
        group, label, tr, start, steps = ins[i]
        mode, spec, plan, _ = configs[cname][:4]
        extra = configs[cname][4] if len(configs[cname]) > 4 else {}
        if isinstance(tr, tuple):
            if tr not in traces:
                traces[tr] = synthetic_trace(tr)
            tr = traces[tr]
        s = dataclasses.replace(base, spec=spec, plan=plan,
                                start_steps=start, duration_steps=steps,
                                burn_in_steps=int(round(
                                    burn_in_days * 86400.0 / tr.step)),
                                **extra)
        t0 = time.perf_counter()
        m, _ = engine.simulate(tr, mode, s)
        f = figures_of(m)
        rows.append(dict(config=cname, mode=mode, group=group, input=label,
                         seconds=time.perf_counter() - t0, **f))
        log.write('  [%3d/%d] %-28s %-24s %-10s hosts %.2f (lb %.2f) '
                  'mig/VM-day %.3f cpu-ovl %.3f %% slav %.2g  %.0f s\n'
                  % (done + 1, len(order), cname, group, label, f['hosts'],
                     f['lower_bound'], f['migrations_per_vm_day'],
                     100 * f['cpu_overload'], f['slav'],
                     time.perf_counter() - t0))
    summary = summarize_rows(rows, configs)
    goals = {}
    for group in sorted({r['group'] for r in rows}):
        d = summary['wss default'][group]
        g = {}
        for key, (op, limit, scale, unit) in GOALS.items():
            met = discipline.goal_met(d[key], high=limit)
            g[key] = {'value': discipline.fmt(d[key], '.3g', scale, unit),
                      'goal': '%s %g%s' % (op, limit * scale, unit),
                      'met': met, 'mean_met': d[key]['mean'] <= limit}
        esv_w = summary['wss default'][group]['esv']
        esv_b = summary['booked pre-19 (Neat)'][group]['esv']
        g['esv_below_neat'] = {
            'value': '%s vs %s' % (discipline.fmt(esv_w, '.3g'),
                                   discipline.fmt(esv_b, '.3g')),
            'goal': 'WSS default < booked Neat',
            'met': (esv_w['high'] is not None and esv_b['low'] is not None
                    and esv_w['high'] < esv_b['low']),
            'mean_met': esv_w['mean'] < esv_b['mean']}
        g['esv_paired_ratio'] = esv_paired(rows, group)
        goals[group] = g
    return {
        'configurations': {
            name: {'mode': mode, 'varies': what,
                   'algorithms': {k: {'name': n, 'parameters': p}
                                  for k, (n, p) in spec.effective().items()},
                   'min_dwell_rounds': plan.min_dwell_rounds,
                   'migration_budget': [plan.migration_budget,
                                        plan.migration_budget_window,
                                        plan.migration_budget_burst],
                   'underload_order': plan.underload_order,
                   'underload_grace_rounds': plan.underload_grace_rounds,
                   'history_length': (c[4] if len(c) > 4 else {}).get(
                       'history_length', base.history_length),
                   'young_vm_policy': dataclasses.asdict(
                       (c[4] if len(c) > 4 else {}).get('young',
                                                        base.young))}
            for name, c in configs.items()
            for mode, spec, plan, what in [c[:4]]},
        'inputs': [{'group': g, 'input': lab,
                    'trace': (t.source if not isinstance(t, tuple) else
                              describe(t)),
                    'start_steps': s0, 'steps': n}
                   for g, lab, t, s0, n in ins],
        'burn_in_days': burn_in_days,
        'summary': summary,
        'spread': spread(summary),
        'paired': paired_differences(rows),
        'goals': goals,
        'rows': rows,
        'sweep_wall_seconds': time.perf_counter() - t_all,
    }


def write_csv(path, rows):
    keys = ['config', 'mode', 'group', 'input'] + [k for k, *_ in FIGURES] \
        + ['seconds']
    with open(path, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(keys)
        for r in rows:
            w.writerow([('%.6g' % r[k]) if isinstance(r[k], float) else r[k]
                        for k in keys])


def markdown(result, command):
    lines = ['# Consolidation trade-off (issue 19)', '',
             'Command: `%s`' % command, '',
             'Mean ± half-width of the 95 % Student-t interval over the '
             'repeats of each input group (Bitbrains windows, or synthetic '
             'seeds). "above the lower bound": active hosts / per-step '
             'lower bound - 1 (the bound the issue\'s goal is stated '
             'against: every step packed anew at 100 % CPU, migrations '
             'free). Fairer references beside it, not goals: "above the '
             'target bound", the same bound with hosts filled only to the '
             'placement\'s cpu_threshold and ram_threshold; "above the '
             'held target bound", that bound held over one-hour blocks '
             '(a placement kept for an hour must fit the hour\'s largest '
             'demand). See doc/source/consolidation.rst.', '']
    if result.get('burn_in_days'):
        lines += ['Burn-in: every run was simulated %g day(s) before its '
                  'start and that time not accounted (warm-up deletion; '
                  'a run starting at its trace\'s beginning has none).'
                  % result['burn_in_days'], '']
    groups = sorted({r['group'] for r in result['rows']})
    cols = ('hosts', 'over_lower_bound', 'over_target_bound',
            'over_held_bound', 'migrations_per_vm_day',
            'cpu_overload', 'slav', 'esv', 'memory_caused_share',
            'memory_moves_per_vm_day', 'memory_overload')
    if any(g.get('remote_gib_hours', {}).get('mean')
           for c in result['summary'].values() for g in c.values()):
        cols += REMOTE_FIGURES
    spec = {k: (fmt, scale, unit) for k, _, _, fmt, scale, unit in FIGURES}
    label = {k: lab for k, _, lab, *_ in FIGURES}
    sp = result.get('spread')
    if sp:
        keys = (('migrations_per_vm_day', '.3f', 1, ''),
                ('cpu_overload', '.3f', 100, ' %'),
                ('over_lower_bound', '.1f', 100, ' %'),
                ('over_target_bound', '.1f', 100, ' %'),
                ('over_held_bound', '.1f', 100, ' %'),
                ('memory_caused_share', '.2f', 100, ' %'),
                ('memory_overload', '.3f', 100, ' %'))
        rows = []
        for cname in sorted(sp):
            row = [cname]
            for k, fmt, scale, unit in keys:
                d = sp[cname].get(k)
                row.append('-' if not d else '%s / %s (%s)' % (
                    format(d['median'] * scale, fmt) + unit,
                    format(d['worst'] * scale, fmt) + unit,
                    d['worst_group'].replace('synthetic ', '')))
            rows.append(row)
        lines += ['## Spread across inputs', '',
                  'Median / worst (and which) of the input groups\' means '
                  '(%d groups: the Bitbrains windows, and each synthetic '
                  'profile).' % len(groups), '',
                  discipline.markdown_table(
                      ['configuration'] + [label[k] for k, *_ in keys],
                      rows), '']
    for group in groups:
        lines += ['## %s' % group, '']
        rows = []
        for cname in sorted(result['summary']):
            s = result['summary'][cname].get(group)
            if not s:
                continue
            rows.append([cname] + [discipline.fmt(s[k], *spec[k])
                                   if k in s else '-' for k in cols])
        lines += [discipline.markdown_table(['configuration'] +
                                            [label[k] for k in cols], rows),
                  '']
        g = result['goals'][group]
        lines += ['Goals, WSS default (met: whole interval inside; mean: '
                  'the mean alone):', '']
        lines += [discipline.markdown_table(
            ['goal', 'value', 'target', 'met', 'mean inside'],
            [[k, v['value'], v['goal'], 'yes' if v['met'] else 'NO',
              'yes' if v['mean_met'] else 'no'] for k, v in sorted(
                g.items(), key=lambda kv: _GOAL_ORDER.index(kv[0])
                if kv[0] in _GOAL_ORDER else len(_GOAL_ORDER))]), '']
    lines += paired_markdown(result.get('paired'))
    return '\n'.join(lines)


def plot(result, out_dir, name_prefix='tradeoff'):
    """Two PNGs: hosts vs migrations per VM-day, hosts vs SLAV; one panel
    per input group, error bars = 95 % intervals (cut at 0)."""
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt
    groups = sorted({g for per in result['summary'].values() for g in per})
    files = []
    for xkey, xlabel, name in (
            ('migrations_per_vm_day', 'live migrations per VM per day',
             name_prefix + '_migrations.png'),
            ('slav', 'SLAV = OTF x PDM', name_prefix + '_slav.png')):
        cols = 3
        rows_n = int(np.ceil(len(groups) / float(cols)))
        size_in = (5 * cols, 3.8 * rows_n)
        fig, axes = plt.subplots(rows_n, cols, figsize=size_in,
                                 squeeze=False)
        floor = 1e-3 if xkey == 'migrations_per_vm_day' else 1e-9
        for ax, group in zip(axes.flat, groups):
            lbs = {}
            for cname, per in sorted(result['summary'].items()):
                s = per.get(group)
                if not s:
                    continue
                mode = result['configurations'][cname]['mode']
                varies = result['configurations'][cname]['varies']
                color = 'tab:red' if mode == 'booked' else 'tab:blue'
                marker = {'default': '*', 'baseline': 'X',
                          'previous default': 'P'}.get(varies, 'o')
                size = (16 if marker == '*' else 8 if marker in 'XP'
                        else 6)
                x, y = s[xkey], s['hosts']
                xm = max(x['mean'], floor)
                xhw = x['half_width'] or 0.0
                yhw = y['half_width'] or 0.0
                ax.errorbar(
                    xm, y['mean'],
                    xerr=[[min(xhw, xm - floor)], [xhw]],
                    yerr=[[min(yhw, y['mean'])], [yhw]], fmt=marker,
                    color=color, ms=size, alpha=0.9, lw=0.7,
                    markeredgecolor='black' if marker != 'o' else color,
                    zorder=3 if marker != 'o' else 2)
                if varies != 'default':
                    ax.annotate(cname.split(' ', 1)[1], (xm, y['mean']),
                                fontsize=6, alpha=0.7, xytext=(3, 3),
                                textcoords='offset points')
                lbs[mode] = s['lower_bound']['mean']
            for mode, lb in lbs.items():
                ax.axhline(lb, ls=':', lw=0.8, color='tab:red'
                           if mode == 'booked' else 'tab:blue')
            if xkey == 'migrations_per_vm_day':
                ax.axvline(0.15, ls='--', lw=0.6, color='grey')
            ax.set_xscale('log')
            ax.set_ylim(bottom=0)
            ax.set_title(group, fontsize=9)
            ax.set_xlabel(xlabel + ' (log)', fontsize=8)
            ax.set_ylabel('active hosts (mean)', fontsize=8)
            ax.tick_params(labelsize=7)
        for ax in list(axes.flat)[len(groups):]:
            ax.axis('off')
        fig.suptitle('Active hosts vs %s: booked (red, Neat) and WSS (blue, '
                     'memmut) packing; * defaults, X pre-issue-19 '
                     'defaults, P the first issue-19 defaults,\ndotted: '
                     'lower bounds; bars: 95 %% intervals' % xlabel,
                     fontsize=9)
        fig.tight_layout()
        path = os.path.join(out_dir, name)
        fig.savefig(path, dpi=90)
        plt.close(fig)
        files.append(path)
    return files


def replot(out_dir):
    """Summaries and plots again from ``tradeoff.csv`` and the
    configurations in ``tradeoff.json`` (no simulation)."""
    path = os.path.join(out_dir, 'tradeoff.json')
    with open(path) as f:
        result = json.load(f)
    rows = read_csv(os.path.join(out_dir, 'tradeoff.csv'))
    full = summarize_rows(rows, result['configurations'])
    keep = ('n', 'mean', 'half_width', 'low', 'high')
    result['summary'] = {
        c: {g: {k: {x: s[x] for x in keep} for k, s in figs.items()}
            for g, figs in per.items()}
        for c, per in full.items()}
    write_json(path, result)
    return plot(result, out_dir)


def remarkdown(out_dir, name):
    """``name.md`` again from ``name.json`` and ``name.csv`` (no
    simulation), with the paired differences (a sweep written before
    they existed gains them)."""
    path = os.path.join(out_dir, name + '.json')
    with open(path) as f:
        result = json.load(f)
    rows = read_csv(os.path.join(out_dir, name + '.csv'))
    result['rows'] = rows
    result['summary'] = summarize_rows(rows, result['configurations'])
    result['paired'] = paired_differences(rows)
    with open(os.path.join(out_dir, name + '.md'), 'w') as f:
        f.write(markdown(result, result['command']))
    keep = ('n', 'mean', 'half_width', 'low', 'high')
    small = {k: v for k, v in result.items() if k not in ('rows',
                                                          'summary',
                                                          'paired')}
    small['rows'] = name + '.csv'
    for key in ('summary', 'paired'):
        small[key] = {
            c: {g: {k: {x: s[x] for x in keep} for k, s in figs.items()}
                for g, figs in per.items()}
            for c, per in result[key].items()}
    write_json(path, small)
    return os.path.join(out_dir, name + '.md')


def main(real, base, args, rec, out_dir, command):
    os.makedirs(out_dir, exist_ok=True)
    name = getattr(args, 'sweep_name', None) or 'tradeoff'
    result = run(real, base, args.window_days, args.sweep_seeds, args.seed,
                 rec, only=getattr(args, 'sweep_configs', '') or '',
                 first_seed=getattr(args, 'sweep_first_seed', 0),
                 warm_days=getattr(args, 'sweep_warm_days', 0.0),
                 burn_in_days=getattr(args, 'sweep_burn_in_days', 0.0),
                 profiles=synthetic_set(getattr(args, 'sweep_profiles',
                                                '')))
    rec.finish()
    result['command'] = command
    result['discipline'] = rec.as_dict()
    result['files'] = [os.path.basename(f)
                       for f in plot(result, out_dir, name)]
    small = {k: v for k, v in result.items() if k not in ('rows',
                                                          'summary',
                                                          'paired')}
    small['rows'] = name + '.csv'       # one row per run, kept out here
    keep = ('n', 'mean', 'half_width', 'low', 'high')
    for key in ('summary', 'paired'):
        small[key] = {
            c: {g: {k: {x: s[x] for x in keep} for k, s in figs.items()}
                for g, figs in per.items()}
            for c, per in result[key].items()}
    write_json(os.path.join(out_dir, name + '.json'), small)
    write_csv(os.path.join(out_dir, name + '.csv'), result['rows'])
    with open(os.path.join(out_dir, name + '.md'), 'w') as f:
        f.write(markdown(result, command))
    for group, g in result['goals'].items():
        print('%s:' % group)
        for k, v in g.items():
            print('  %-24s %-34s %-22s %s' % (k, v['value'], v['goal'],
                                              'met' if v['met'] else
                                              'mean only' if v['mean_met']
                                              else 'NOT MET'))
    return 0
