"""Trace-driven consolidation on simulated hosts.

One run replays a :class:`memmut.simulator.trace.Trace` through the same
consolidation code as the controller (:func:`memmut.consolidation.planner.
plan_round` with the algorithms of :mod:`memmut.consolidation.loader`) in
one of two modes:

``booked``
    VMs are packed on, and their memory load is, their booked memory
    (Neat's behaviour: no memory overcommitment).
``wss``
    VMs are packed on WSS^max_avg (moving average of the last ``n``
    samples of ``Memory usage``, its maximum over the last time slice)
    plus headroom, capped at the booking; the memory load in detection is
    the sum of the VMs' WSS^max_avg. A VM is counted at its booking during
    its first time slice, before Badis has an estimate (it boots with its
    full booking).

Every step (the trace's 300 s): VMs that left are removed; VMs that
arrived are placed by the placement algorithm (a VM that fits no host,
even an empty one, gets an empty host of its own and is reported as
oversize); one consolidation round is planned from the histories up to
this step and its migrations are applied at once. The interval up to the
next sample is then accounted with that next sample, which the round did
not know: active hosts (those running VMs; the others are suspended),
memory overload (a host whose VMs' actual ``Memory usage`` sums to more
than its memory: an SLA violation), CPU overload (their CPU use beyond its
capacity) and energy with Neat's linear power model
``P(u) = P_idle + (P_max - P_idle) u`` of the CPU utilization ``u``
(capped at 1; suspended hosts draw nothing).

The run starts once one time slice of samples exists (step ``w - 1``).
Migrations are instantaneous; their count, reasons and the time spent
planning are reported.
"""

import dataclasses
import time

import numpy as np

from memmut.consolidation import loader
from memmut.consolidation import planner
from memmut.consolidation import wss as wss_mod
from memmut import sizing

MODES = ('booked', 'wss')


@dataclasses.dataclass(frozen=True)
class HostModel:
    """The simulated hosts, all alike. ``count`` 0: one per VM."""
    cpu_mhz: float = 83200.0
    memory_mb: float = 262144.0
    count: int = 0
    idle_watts: float = 175.0
    max_watts: float = 250.0

    def __post_init__(self):
        if self.cpu_mhz <= 0 or self.memory_mb <= 0:
            raise ValueError('host capacities must be positive')
        if self.count < 0:
            raise ValueError('host count must not be negative')
        if not 0 <= self.idle_watts <= self.max_watts:
            raise ValueError('need 0 <= idle power <= max power')


@dataclasses.dataclass(frozen=True)
class Settings:
    hosts: HostModel = HostModel()
    spec: loader.AlgorithmSpec = loader.AlgorithmSpec()
    plan: planner.PlanParams = planner.PlanParams()
    history_length: int = 100
    wss_average_window: int = 5
    wss_time_slice: float = 3600.0
    headroom_mb: float = 32.0
    headroom_fraction: float = 0.05
    bandwidth_mb_s: float = 10.0
    duration_steps: int = 0


def memory_series(trace, mode, settings):
    """(packing memory, memory load) arrays (VMs, steps) in MiB."""
    alive = trace.alive()
    booked = np.broadcast_to(trace.booked[:, None], trace.mem.shape)
    if mode == 'booked':
        d = np.where(alive, booked, 0.0)
        return d, d
    if mode != 'wss':
        raise ValueError('unknown mode %r (known: %s)'
                         % (mode, ', '.join(MODES)))
    w = wss_mod.slice_samples(settings.wss_time_slice, trace.step)
    ma = wss_mod.max_avg_series(trace.mem, settings.wss_average_window, w,
                                valid=alive)
    ma = np.minimum(ma, booked)
    age = np.arange(trace.n_steps)[None, :] - trace.first[:, None]
    warm = age >= w - 1
    dem = sizing.demand(ma, booked, settings.headroom_mb,
                        settings.headroom_fraction)
    d = np.where(alive, np.where(warm, dem, booked), 0.0)
    m = np.where(alive, np.where(warm, ma, booked), 0.0)
    return d, m


class _Pool:
    """Where VMs run, with the helpers the step loop needs."""

    def __init__(self, trace, model):
        self.trace = trace
        self.model = model
        n = model.count or trace.n_vms
        self.names = ['host-%05d' % i for i in range(n)]
        self.index = {h: i for i, h in enumerate(self.names)}
        self.hosts = [planner.PlannerHost(h, model.cpu_mhz, model.memory_mb,
                                          active=False) for h in self.names]
        self.where = np.full(trace.n_vms, -1, dtype=int)

    def usage(self, vms, values):
        return np.bincount(self.where[vms], weights=values[vms],
                           minlength=len(self.names))


def simulate(trace, mode, settings=None, progress=None):
    """Run one mode; returns ``(metrics dict, time series dict)``.

    ``progress(done, total, snapshot)`` is called after every step.
    """
    settings = settings or Settings()
    model = settings.hosts
    wall0 = time.perf_counter()
    d_mem, m_mem = memory_series(trace, mode, settings)
    alive = trace.alive()
    w = wss_mod.slice_samples(settings.wss_time_slice, trace.step)
    s0 = min(w - 1, max(0, trace.n_steps - 2))
    end = trace.n_steps - 1
    if settings.duration_steps:
        end = min(end, s0 + settings.duration_steps)
    here = alive[:, s0]
    mt = loader.migration_time(d_mem[here, s0] if here.any()
                               else trace.booked, settings.bandwidth_mb_s)
    algos = loader.build_all(settings.spec, trace.step, mt)
    pool = _Pool(trace, model)
    vm_index = {n: i for i, n in enumerate(trace.names)}
    cpu, mem = trace.cpu, trace.mem
    big_l = settings.history_length

    n_int = end - s0
    series = {k: np.zeros(n_int) for k in (
        'active_hosts', 'migrations', 'memory_migrations',
        'memory_violations', 'cpu_overloads', 'power_w', 'used_memory_mb',
        'allocated_memory_mb')}
    causes = {}
    failed = {'overload': 0, 'underload': 0}
    oversize = set()
    plan_time, plan_max, moves_total = 0.0, 0.0, 0

    def place_new(new, t, lo):
        placed = np.flatnonzero(pool.where >= 0)
        c_use = pool.usage(placed, cpu[:, t])
        r_use = pool.usage(placed, d_mem[:, t])
        act = np.bincount(pool.where[placed], minlength=len(pool.names)) > 0

        def attempt(vms):
            on = np.flatnonzero(act)
            off = np.flatnonzero(~act)
            mapping, _ = algos.placement(
                {pool.names[h]: c_use[h] for h in on},
                {pool.names[h]: model.cpu_mhz for h in on},
                {pool.names[h]: r_use[h] for h in on},
                {pool.names[h]: model.memory_mb for h in on},
                {pool.names[h]: model.cpu_mhz for h in off},
                {pool.names[h]: model.memory_mb for h in off},
                {trace.names[v]: cpu[v, lo:t + 1] for v in vms},
                {trace.names[v]: d_mem[v, t] for v in vms})
            return mapping

        def commit(v, h):
            pool.where[v] = h
            act[h] = True
            c_use[h] += cpu[v, t]
            r_use[h] += d_mem[v, t]

        mapping = attempt(new)
        if mapping:
            for name, host in mapping.items():
                commit(vm_index[name], pool.index[host])
            return
        for v in sorted(new, key=lambda v: -cpu[v, t]):
            mapping = attempt([v])
            if mapping:
                commit(v, pool.index[mapping[trace.names[v]]])
                continue
            free = np.flatnonzero(~act)
            if not len(free):
                raise RuntimeError('no free host left for VM %s: raise '
                                   'the host count' % trace.names[v])
            oversize.add(trace.names[v])
            commit(v, int(free[0]))

    for k, t in enumerate(range(s0, end)):
        lo = max(0, t - big_l + 1)
        gone = (pool.where >= 0) & (trace.last < t)
        pool.where[gone] = -1
        new = np.flatnonzero((pool.where < 0) & alive[:, t])
        if len(new):
            place_new(new, t, lo)
        placed = np.flatnonzero(pool.where >= 0)
        has_vms = np.bincount(pool.where[placed],
                              minlength=len(pool.names)) > 0
        for i, h in enumerate(pool.hosts):
            h.active = bool(has_vms[i])
            if not h.active:
                h.state = None
        vms = [planner.PlannerVM(trace.names[v], pool.names[pool.where[v]],
                                 cpu[v, lo:t + 1], float(d_mem[v, t]),
                                 m_mem[v, lo:t + 1]) for v in placed]
        p0 = time.perf_counter()
        plan = planner.plan_round(pool.hosts, vms, algos, settings.plan)
        dt = time.perf_counter() - p0
        plan_time += dt
        plan_max = max(plan_max, dt)
        for name, st in plan.states.items():
            pool.hosts[pool.index[name]].state = st
        mem_moves = 0
        for m in plan.migrations:
            pool.where[vm_index[m.vm]] = pool.index[m.destination]
            key = '%s %s' % (m.kind, m.resource)
            causes[key] = causes.get(key, 0) + 1
            mem_moves += m.memory_caused
        for _, kind in plan.failed:
            failed[kind] += 1
        moves_total += len(plan.migrations)

        # Account for the interval up to the next sample.
        t1 = t + 1
        live = np.flatnonzero((pool.where >= 0) & alive[:, t1])
        hv = pool.where[live]
        n_h = len(pool.names)
        used = np.bincount(hv, weights=mem[live, t1], minlength=n_h)
        cpu_h = np.bincount(hv, weights=cpu[live, t1], minlength=n_h)
        act = np.bincount(hv, minlength=n_h) > 0
        u = np.minimum(1.0, cpu_h[act] / model.cpu_mhz)
        series['active_hosts'][k] = act.sum()
        series['migrations'][k] = len(plan.migrations)
        series['memory_migrations'][k] = mem_moves
        series['memory_violations'][k] = np.count_nonzero(
            used[act] > model.memory_mb)
        series['cpu_overloads'][k] = np.count_nonzero(
            cpu_h[act] > model.cpu_mhz)
        series['power_w'][k] = (model.idle_watts * len(u) + (
            model.max_watts - model.idle_watts) * u.sum())
        series['used_memory_mb'][k] = used.sum()
        series['allocated_memory_mb'][k] = d_mem[live, t1].sum()
        if progress:
            progress(k + 1, n_int, {
                'active_hosts': int(series['active_hosts'][k]),
                'migrations': moves_total,
                'memory_migrations': int(series['memory_migrations'][:k + 1]
                                         .sum())})

    host_time = series['active_hosts'].sum()
    memory_caused = int(series['memory_migrations'].sum())
    memory_only = sum(n for c, n in causes.items()
                      if c.endswith(' ' + planner.MEMORY))
    rounds = max(1, n_int)
    metrics = {
        'mode': mode,
        'intervals': int(n_int),
        'hours': round(n_int * trace.step / 3600.0, 3),
        'avg_active_hosts': float(series['active_hosts'].mean())
        if n_int else 0.0,
        'max_active_hosts': int(series['active_hosts'].max())
        if n_int else 0,
        'migrations': int(moves_total),
        'migrations_by_cause': dict(sorted(causes.items())),
        'memory_caused_migrations': memory_caused,
        'memory_only_migrations': int(memory_only),
        'memory_caused_share': (memory_caused / moves_total
                                if moves_total else 0.0),
        'memory_overload_host_time_fraction': (
            float(series['memory_violations'].sum() / host_time)
            if host_time else 0.0),
        'memory_overload_any_host_time_fraction': (
            float(np.mean(series['memory_violations'] > 0))
            if n_int else 0.0),
        'cpu_overload_host_time_fraction': (
            float(series['cpu_overloads'].sum() / host_time)
            if host_time else 0.0),
        'energy_kwh': float(series['power_w'].sum() * trace.step / 3.6e6),
        'mean_used_memory_gib': float(series['used_memory_mb'].mean()
                                      / 1024) if n_int else 0.0,
        'mean_allocated_memory_gib': float(
            series['allocated_memory_mb'].mean() / 1024) if n_int else 0.0,
        'failed_placements': failed,
        'oversize_vms': sorted(oversize),
        'migration_time_s': round(mt, 3),
        'mean_round_ms': 1000.0 * plan_time / rounds,
        'max_round_ms': 1000.0 * plan_max,
        'wall_seconds': time.perf_counter() - wall0,
    }
    series['time_h'] = (np.arange(s0, end) + 1 - s0) * trace.step / 3600.0
    return metrics, series


def compare(results):
    """Cross-mode figures from ``{mode: metrics}``."""
    out = {}
    b, w = results.get('booked'), results.get('wss')
    if b and w and w['avg_active_hosts']:
        out['active_host_ratio_booked_over_wss'] = (
            b['avg_active_hosts'] / w['avg_active_hosts'])
    if b and w and w['energy_kwh']:
        out['energy_ratio_booked_over_wss'] = (
            b['energy_kwh'] / w['energy_kwh'])
    return out


def settings_from_conf(conf, duration_hours=0.0, step=300.0):
    """:class:`Settings` from ``[consolidation]`` and ``[simulator]``."""
    c, s = conf.consolidation, conf.simulator
    return Settings(
        hosts=HostModel(cpu_mhz=s.host_cpu_mhz, memory_mb=s.host_memory_mb,
                        count=s.host_count, idle_watts=s.host_idle_watts,
                        max_watts=s.host_max_watts),
        spec=loader.AlgorithmSpec.from_conf(conf),
        plan=planner.PlanParams.from_conf(conf),
        history_length=c.history_length,
        wss_average_window=s.wss_average_window,
        wss_time_slice=s.wss_time_slice,
        headroom_mb=conf.badis.headroom_kb / 1024.0,
        headroom_fraction=conf.badis.headroom_fraction,
        bandwidth_mb_s=c.network_migration_bandwidth,
        duration_steps=int(round(duration_hours * 3600.0 / step)))
