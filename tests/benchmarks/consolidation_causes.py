"""Where a profile's overload moves and CPU overload come from (issue 19).

Runs the default configuration on one synthetic profile's seeds with the
simulator's ``observer`` (:func:`memmut.simulator.engine.simulate`) and
counts, over all seeds:

* the migrations by kind and resource, the overload detections and how
  many VMs each moved;
* for each CPU overload detection, whether the host's VMs, left where
  they were, would have gone above the host's CPU within the next hour
  (12 samples of 300 s) or at the next sample; and whether the host had
  received an overload move within the 4 hours before;
* the host-steps above capacity (the VMs' CPU at the sample, copies not
  charged) and how many of them had a migration away from the host
  planned (waiting or copying);
* how long overload moves waited before their copy started and what
  they waited for: another VM leaving the same host, or one arriving at
  the same destination (one migration per host at a time);
* for each memory overload detection, whether the host's VMs, left
  where they were, would have used more than the host's memory (their
  working sets in the trace) within the next two hours, or more than
  the placement's ``ram_threshold`` of it; and the planner's view of
  the host (its VMs' packed memory) when it decided.

``--warm-days`` and ``--burn-in-days`` run the profile as the sweep's
options of the same names do (a warm start; plans before the accounted
start are not counted).

Run::

    python -m tests.benchmarks.consolidation_causes --profile bursty \\
        --seeds 8

It writes ``results/consolidation/causes_<profile>.json`` and ``.md``.
Counts, not intervals: the figures are there to explain the sweep's
means (:mod:`tests.benchmarks.consolidation_sweep`), not to judge goals.
"""

import argparse
import collections
import dataclasses
import json
import os
import shlex
import sys

import numpy as np

from memmut.simulator import engine
from tests import common
from tests.benchmarks import consolidation_sweep as sweep
from tests.benchmarks import discipline

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'results',
                   'consolidation')
HOUR = 12            # samples of 300 s
RECENT = 48          # 4 hours


class Causes:
    """An ``observer`` for :func:`engine.simulate` that counts."""

    def __init__(self, cpu_mhz, threshold=0.85, memory_mb=262144.0,
                 ram_threshold=0.95, start=0, memory_load=None,
                 memory_threshold=0.95):
        self.cpu_mhz = float(cpu_mhz)
        self.threshold = threshold
        self.memory_mb = float(memory_mb)
        self.ram_threshold = ram_threshold
        self.start = start              # first accounted step
        # The planner's memory load (engine.memory_series: WSS^max_avg)
        # and its memory overload threshold, to judge its detections in
        # its own units as well as in what the VMs used.
        self.memory_load = memory_load
        self.memory_threshold = memory_threshold
        self.c = collections.Counter()
        self.per_detection = collections.Counter()
        self.trace = None
        self.kind = {}                  # id(InFlightMigration) -> kind
        self.moves = []                 # (kind, InFlightMigration)
        self.received = {}              # host name -> step of last

    def __call__(self, event, **d):
        getattr(self, '_' + event)(**d)

    def _start(self, trace):
        self.trace = trace
        self.index = {n: i for i, n in enumerate(trace.names)}

    def _plan(self, t, plan, hosts, vms, migrations):
        if t < self.start:
            return
        cpu = self.trace.cpu
        for m, f in zip(plan.migrations, migrations):
            self.c['migrations %s %s' % (m.kind, m.resource)] += 1
            self.kind[id(f)] = m.kind
            self.moves.append((m.kind, f))
        moved = collections.Counter(m.source for m in plan.migrations
                                    if m.kind == 'overload')
        on = collections.defaultdict(list)
        for v in vms:
            on[v.host].append(self.index[v.uuid])
        for h, res in plan.overloaded.items():
            self.c['overload detections'] += 1
            self.per_detection[moved.get(h, 0)] += 1
            if 'memory' in res:
                self._memory_detection(t, h, on[h], vms)
            if 'cpu' not in res:
                continue
            self.c['CPU overload detections'] += 1
            ids = on[h]
            future = cpu[ids, t + 1:t + 1 + HOUR].sum(axis=0)
            self.c['... host over capacity within the hour if nothing '
                   'moved'] += bool((future > self.cpu_mhz).any())
            self.c['... host over capacity at the next sample if nothing '
                   'moved'] += bool(len(future) and
                                    future[0] > self.cpu_mhz)
            last = self.received.get(h)
            self.c['... host received an overload move within 4 h'] += (
                last is not None and t - last <= RECENT)
        for m in plan.migrations:
            if m.kind == 'overload':
                self.received[m.destination] = t

    def _memory_detection(self, t, host, ids, vms):
        self.c['memory overload detections'] += 1
        future = self.trace.mem[ids, t + 1:t + 1 + 2 * HOUR].sum(axis=0)
        peak = float(future.max()) if len(future) else 0.0
        self.c['... VMs in use over the host\'s memory within 2 h if '
               'nothing moved'] += peak > self.memory_mb
        self.c['... VMs in use over ram_threshold of it within 2 h if '
               'nothing moved'] += peak > self.ram_threshold * self.memory_mb
        packed = sum(v.ram for v in vms if v.host == host)
        self.c['... planner\'s packed memory of the host, sum of '
               'fractions'] += packed / self.memory_mb
        self.c['... VMs in use within 2 h at most, sum of '
               'fractions'] += peak / self.memory_mb
        if self.memory_load is None:
            return
        load = self.memory_load[ids, t:t + 1 + 2 * HOUR].sum(axis=0)
        self.c['... planner\'s memory load over its threshold within 2 h '
               'if nothing moved'] += bool(
                   (load[1:] > self.memory_threshold * self.memory_mb).any())
        self.c['... planner\'s memory load then, sum of fractions'] += \
            load[0] / self.memory_mb
        self.c['... planner\'s memory load within 2 h at most, sum of '
               'fractions'] += load[1:].max(initial=0.0) / self.memory_mb

    def _interval(self, t, where, waiting, running, host_names):
        # (the engine reports accounted intervals only, never a burn-in's)
        cpu = self.trace.cpu
        live = np.flatnonzero((where >= 0) & self.trace.alive()[:, t])
        load = np.bincount(where[live], weights=cpu[live, t],
                           minlength=len(host_names))
        before = np.bincount(where[live], weights=cpu[live, t - 1],
                             minlength=len(host_names))
        leaving = {m.source for m in waiting + running}
        over = set(np.flatnonzero(load > self.cpu_mhz).tolist())
        for h in over:
            self.c['host-steps over capacity'] += 1
            if h in leaving:
                self.c['... with a move away planned (waiting or '
                       'copying)'] += 1
            elif before[h] < self.threshold * self.cpu_mhz:
                self.c['... none planned, below the threshold the '
                       'sample before'] += 1

    def finish(self):
        """Waits of the overload moves, from the finished migrations."""
        done = [f for _, f in self.moves if f.end is not None]
        ends = collections.defaultdict(list)
        for f in done:
            ends[round(f.end, 3)].append(f)
        for kind, f in self.moves:
            if kind != 'overload' or f.start is None:
                continue
            self.c['overload moves started'] += 1
            self.c['overload moves: seconds waiting'] += f.start - f.planned
            self.c['overload moves: seconds copying'] += f.duration
            if f.start - f.planned < 1:
                continue
            self.c['overload moves that waited'] += 1
            freed = [g for g in ends.get(round(f.start, 3), ())
                     if g is not f]
            self.c['... behind a VM leaving the same host'] += any(
                g.source == f.source for g in freed)
            self.c['... behind a VM arriving at the same destination'] += \
                any(g.destination == f.destination for g in freed)


def run(profile, seeds, config='wss default', base=None, warm_days=0.0,
        burn_in_days=0.0):
    """The counts over ``seeds`` seeds of ``profile`` (a dict)."""
    base = base or engine.settings_from_conf(common.private_conf(), 0.0,
                                             300.0)
    mode, spec, plan = sweep.configurations()[config][:3]
    extra = sweep.configurations()[config][4] \
        if len(sweep.configurations()[config]) > 4 else {}
    threshold = float(spec.effective()['overload'][1].get('threshold',
                                                          0.85))
    ram_threshold = engine.placement_targets(spec)[1]
    mem_threshold = float(spec.effective()['memory_overload'][1].get(
        'threshold', 0.95))
    burn = int(round(burn_in_days * 86400.0 / sweep.SYNTHETIC_STEP))
    total = collections.Counter()
    per_detection = collections.Counter()
    # the sweep's own inputs: the same traces, starts and durations
    for group, _, key, warm, days in sweep.inputs(None, 0, seeds, 0,
                                                  warm_days):
        if group != 'synthetic ' + profile:
            continue
        trace = sweep.synthetic_trace(key)
        s = dataclasses.replace(base, spec=spec, plan=plan,
                                start_steps=warm, duration_steps=days,
                                burn_in_steps=burn, **extra)
        load = engine.memory_series(trace, mode, s)[1] if mode == 'wss' \
            else None
        causes = Causes(base.hosts.cpu_mhz, threshold,
                        base.hosts.memory_mb, ram_threshold, warm, load,
                        mem_threshold)
        engine.simulate(trace, mode, s, observer=causes)
        causes.finish()
        total.update(causes.c)
        per_detection.update(causes.per_detection)
    started = total['overload moves started']
    return {
        'profile': profile, 'seeds': seeds, 'config': config,
        'warm_days': warm_days, 'burn_in_days': burn_in_days,
        'counts': {k: (round(v, 1) if isinstance(v, float) else int(v))
                   for k, v in sorted(total.items())},
        'vms_moved_per_overload_detection': {
            str(k): v for k, v in sorted(per_detection.items())},
        'overload_move_mean_wait_s': (total['overload moves: seconds '
                                            'waiting'] / started
                                      if started else 0.0),
        'overload_move_mean_copy_s': (total['overload moves: seconds '
                                            'copying'] / started
                                      if started else 0.0),
    }


def markdown(result, command):
    lines = ['# Where the overload moves and CPU overload come from: '
             '%s (issue 19)' % result['profile'], '',
             'Command: `%s`' % command, '',
             'Configuration "%s", %d seeds, counts summed over them (see '
             'tests/benchmarks/consolidation_causes.py).' % (
                 result['config'], result['seeds']), '',
             discipline.markdown_table(
                 ['count', 'value'],
                 [[k, v] for k, v in result['counts'].items()]), '',
             'VMs moved per overload detection: ' + ', '.join(
                 '%s: %d' % kv for kv in
                 result['vms_moved_per_overload_detection'].items()), '',
             'Overload moves: %.0f s waiting, then %.0f s copying, on '
             'average.' % (result['overload_move_mean_wait_s'],
                           result['overload_move_mean_copy_s']), '']
    return '\n'.join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--profile', default='bursty',
                    choices=[p for p, _ in sweep.SYNTHETIC])
    ap.add_argument('--seeds', type=int, default=8)
    ap.add_argument('--config', default='wss default')
    ap.add_argument('--warm-days', type=float, default=0.0,
                    help='start after that many days of the trace (a '
                    'warm start, as the sweep\'s --sweep-warm-days)')
    ap.add_argument('--burn-in-days', type=float, default=0.0,
                    help='simulate that long before the start without '
                    'counting it (as --sweep-burn-in-days)')
    ap.add_argument('--out', default=OUT)
    args = ap.parse_args(argv)
    result = run(args.profile, args.seeds, args.config,
                 warm_days=args.warm_days, burn_in_days=args.burn_in_days)
    command = ('python -m tests.benchmarks.consolidation_causes '
               + shlex.join(argv if argv is not None else sys.argv[1:]))
    result['command'] = command
    os.makedirs(args.out, exist_ok=True)
    name = 'causes_%s' % args.profile
    if args.warm_days or args.burn_in_days:
        name += '_warm%g_burn%g' % (args.warm_days, args.burn_in_days)
    with open(os.path.join(args.out, name + '.json'), 'w') as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write('\n')
    with open(os.path.join(args.out, name + '.md'), 'w') as f:
        f.write(markdown(result, command))
    print(markdown(result, command))
    return 0


if __name__ == '__main__':
    sys.exit(main())
