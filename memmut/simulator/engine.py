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
    full booking). An estimator's lag and error can be injected into the
    series it is computed from (:class:`memmut.simulator.quality.
    ErrorModel`).

Before the run, VMs larger than a host are rejected and missing memory
readings filled (:mod:`memmut.simulator.quality`).

Every trace step (the sampling step, 300 s for Bitbrains): VMs that left
are removed (cancelling their migrations); VMs that arrived are placed by
the placement algorithm (a VM that fits no empty host at the placement
thresholds gets an empty host of its own and is reported as oversize).
Every ``interval`` seconds (``[consolidation] interval``; the first round
at the first step) one consolidation round is planned from the histories
up to this step. Its migrations take time (:mod:`memmut.simulator.
migration`): a VM in flight is not re-planned; when the next rounds plan,
its memory and CPU are reserved on its destination (the planner is given
that host's capacities less the reservations, and both hosts' less the
CPU of running copies) and it counts as gone from its source. The
interval up to the next sample is then accounted with that next sample,
which the round did not know:

* active hosts: those running VMs or taking part in a copy (the others
  are suspended);
* host memory overload: a host whose VMs' actual ``Memory usage`` (a VM
  being copied counting on both hosts) sums to more than its memory;
* CPU overload: their CPU use (plus the copies' cost) beyond capacity;
* energy with the host power model of :func:`memmut.simulator.sla.power`
  (Neat's linear ``P(u) = P_idle + (P_max - P_idle) u`` of the CPU
  utilization ``u`` capped at 1 by default, or a SPECpower curve;
  suspended hosts draw nothing);
* Neat's SLA figures (:mod:`memmut.simulator.sla`): per host its steps on
  and CPU-overloaded (OTF), per VM the CPU it asked for and 10 % of its
  CPU while it is copied (PDM), then SLAV = OTF x PDM and ESV = energy x
  SLAV; and live migrations per VM-day;
* per-VM memory shortfall: by how much the VM's use at the next sample
  exceeds the memory it is ballooned to (what it is packed on now), i.e.
  what it would swap (independent of the placement);
* the lower bound on active hosts for the same step
  (:func:`memmut.simulator.quality.lower_bound`).

The run starts once one time slice of samples exists (step ``w - 1``),
or at ``start_steps`` if later: the VMs then present are placed afresh
by the placement algorithm, but their histories and WSS^max_avg include
the samples before (a warm start, used for repeats over start days).
"""

import dataclasses
import time

import numpy as np

from memmut.consolidation import algorithm
from memmut.consolidation import budget
from memmut.consolidation import history_sums
from memmut.consolidation import loader
from memmut.consolidation import move_order as move_order_mod
from memmut.consolidation import planner
from memmut.consolidation import wss as wss_mod
from memmut.consolidation import young as young_mod
from memmut import sizing
from memmut.simulator import migration
from memmut.simulator import quality
from memmut.simulator import remote_memory
from memmut.simulator import sla

MODES = ('booked', 'wss')


@dataclasses.dataclass(frozen=True)
class HostModel:
    """The simulated hosts, all alike. ``count`` 0: one per VM."""
    cpu_mhz: float = 83200.0
    memory_mb: float = 262144.0
    count: int = 0
    idle_watts: float = 175.0
    max_watts: float = 250.0
    power_model: str = 'linear'

    def __post_init__(self):
        if self.cpu_mhz <= 0 or self.memory_mb <= 0:
            raise ValueError('host capacities must be positive')
        if self.count < 0:
            raise ValueError('host count must not be negative')
        if not 0 <= self.idle_watts <= self.max_watts:
            raise ValueError('need 0 <= idle power <= max power')
        if self.power_model not in sla.POWER_MODELS:
            raise ValueError('unknown power model %r' % self.power_model)


# Round pacing. ``clock``: a round every ``interval`` seconds, planning
# around the moves still in flight (their VMs are not re-planned, their
# memory and CPU reserved). ``after_execution``: memmut's controller
# (memmut.globals.service): a round executes its moves to the end, and
# the next one starts ``interval`` seconds after the last has ended.
CLOCK = 'clock'
AFTER_EXECUTION = 'after_execution'
ROUND_PACINGS = (CLOCK, AFTER_EXECUTION)

# The planner's histories: a sample per round interval, as the controller
# builds them from the database (memmut.globals.rounds), or per trace
# step (finer than the controller has when the interval is longer).
INTERVAL = 'interval'
TRACE = 'trace'
HISTORY_RESOLUTIONS = (INTERVAL, TRACE)


@dataclasses.dataclass(frozen=True)
class Settings:
    hosts: HostModel = HostModel()
    spec: loader.AlgorithmSpec = loader.AlgorithmSpec()
    plan: planner.PlanParams = planner.PlanParams()
    history_length: int = 288
    wss_average_window: int = 5
    wss_time_slice: float = 3600.0
    headroom_mb: float = 32.0
    headroom_fraction: float = 0.05
    bandwidth_mb_s: float = 10.0
    duration_steps: int = 0
    # First step to simulate (0: once one time slice of samples exists);
    # the histories before it are used, so a later start is warm.
    start_steps: int = 0
    # Steps simulated before ``start_steps`` and not accounted (warm-up
    # deletion): the rounds run from there, so the accounted period
    # starts from the planner's own packing and its migrations, not
    # from the fresh packing every run begins with. Bounded by the
    # trace's first usable step.
    burn_in_steps: int = 0
    # Seconds between two consolidation rounds.
    interval: float = 300.0
    # Migrations leaving a host at a time (nova's
    # max_concurrent_live_migrations), and arriving (0: no limit).
    migration_concurrency: int = 1
    migration_incoming_concurrency: int = 0
    # Migrations copying at once in all (memmut's executor's [nova]
    # max_parallel; 0: no limit).
    migration_parallel: int = 0
    # MHz a copy costs on each of its two hosts.
    migration_cpu_mhz: float = 1300.0
    # Seconds a missing memory reading may repeat the last real one.
    missing_carry_seconds: float = 3600.0
    # Steps the held lower bound keeps a placement (12: one hour of
    # 300 s samples, the planner's underload grace).
    bound_hold_steps: int = 12
    wss_error: quality.ErrorModel = quality.ErrorModel()
    # What VMs with little history are packed on
    # (memmut.consolidation.young; ``[consolidation] young_vm_policy``).
    young: young_mod.YoungPolicy = young_mod.YoungPolicy()
    # What the planner's memory-load history holds for the samples
    # before a VM's first time slice ended, once the VM has an estimate,
    # as the controller's ``[consolidation] prewarm_history``: ``booked``
    # (what it was counted at then) or ``first_estimate`` (its first
    # WSS^max_avg: the booking was a placeholder, not a use the VM
    # selection should forecast from).
    prewarm_history: str = 'first_estimate'
    # The order the migrations queue in, as the controller's
    # ``[consolidation] move_order`` (memmut.consolidation.move_order).
    move_order: str = move_order_mod.PLAN
    # When rounds run (ROUND_PACINGS): every ``interval`` seconds while
    # earlier moves still copy, or, as memmut's controller does, only
    # ``interval`` seconds after the last round's moves have all ended.
    round_pacing: str = 'clock'
    # The histories the planner reads (HISTORY_RESOLUTIONS): one sample
    # per ``interval``, as memmut's controller bins its reports (CPU
    # averaged over the interval, WSS^max_avg at its end), or every
    # trace step whatever the interval (the behaviour before).
    history_resolution: str = 'interval'
    # How an interval's CPU becomes its one history sample, as the
    # controller's ``[consolidation] cpu_interval_statistic``: ``mean``
    # or ``peak`` (the highest trace step within it).
    cpu_interval_statistic: str = 'mean'

    def __post_init__(self):
        move_order_mod.check(self.move_order)
        if self.cpu_interval_statistic not in algorithm.CPU_STATISTICS:
            raise ValueError('cpu_interval_statistic must be one of %s, '
                             'not %r' % (', '.join(algorithm.CPU_STATISTICS),
                                         self.cpu_interval_statistic))
        if self.history_resolution not in HISTORY_RESOLUTIONS:
            raise ValueError('history_resolution must be one of %s, not %r'
                             % (', '.join(HISTORY_RESOLUTIONS),
                                self.history_resolution))
        if self.round_pacing not in ROUND_PACINGS:
            raise ValueError('round_pacing must be one of %s, not %r'
                             % (', '.join(ROUND_PACINGS),
                                self.round_pacing))
        if self.interval <= 0:
            raise ValueError('the round interval must be positive')
        if self.migration_concurrency < 1:
            raise ValueError('need at least one migration per host')
        if (self.migration_incoming_concurrency < 0 or
                self.migration_parallel < 0):
            raise ValueError('the incoming and parallel migration limits '
                             'must not be negative')
        if self.prewarm_history not in ('booked', 'first_estimate'):
            raise ValueError('prewarm_history must be "booked" or '
                             '"first_estimate"')
        if self.bound_hold_steps < 1:
            raise ValueError('the bound\'s hold must be at least 1 step')
        if self.migration_cpu_mhz < 0 or self.missing_carry_seconds < 0:
            raise ValueError('migration CPU cost and carry time must not '
                             'be negative')


def memory_series(trace, mode, settings, mem=None):
    """(packing memory, memory load) arrays (VMs, steps) in MiB.

    ``mem``: the working-set series (default ``trace.mem``); in ``wss``
    mode the settings' error model is applied to it first.
    """
    mem = trace.mem if mem is None else mem
    alive = trace.alive()
    booked = np.broadcast_to(trace.booked[:, None], mem.shape)
    if mode == 'booked':
        d = np.where(alive, booked, 0.0)
        return d, d
    if mode != 'wss':
        raise ValueError('unknown mode %r (known: %s)'
                         % (mode, ', '.join(MODES)))
    if settings.wss_error.active:
        mem = np.where(alive, settings.wss_error.apply(mem, trace.first),
                       0.0)
    w = wss_mod.slice_samples(settings.wss_time_slice, trace.step)
    ma = wss_mod.max_avg_series(mem, settings.wss_average_window, w,
                                valid=alive)
    ma = np.minimum(ma, booked)
    age = np.arange(trace.n_steps)[None, :] - trace.first[:, None]
    warm = age >= w - 1
    dem = sizing.demand(ma, booked, settings.headroom_mb,
                        settings.headroom_fraction)
    dem = young_mod.packing_series(
        settings.young, ma, dem, trace.booked, age, alive, trace.step,
        settings.headroom_mb, settings.headroom_fraction, w_first=w - 1)
    d = np.where(alive, np.where(warm, dem, booked), 0.0)
    m = np.where(alive, np.where(warm, ma, booked), 0.0)
    return d, m


def round_steps(s0, end, step, interval):
    """Steps in ``[s0, end)`` at which a round runs: the first, then the
    first step at or after every further ``interval`` seconds."""
    out, next_t = [], s0 * step
    for t in range(s0, end):
        if t * step >= next_t - 1e-6:
            out.append(t)
            while next_t <= t * step + 1e-6:
                next_t += interval
    return out


def history_steps(settings, step):
    """Trace steps per sample of the planner's histories: the round
    interval in steps (rounded, at least 1) under ``interval``
    resolution, 1 under ``trace``."""
    if settings.history_resolution == TRACE:
        return 1
    return max(1, int(round(settings.interval / step)))


def at_interval(x, k, reduce):
    """A window of trace steps ``x`` (its last the newest) as the
    controller's history at one sample per ``k`` steps: blocks of ``k``
    steps ending at the newest (the oldest partial when ``x`` starts
    inside it), each reduced to its mean (``reduce`` ``'mean'``: CPU,
    which the controller averages over an interval by default), its
    largest value (``'peak'``: CPU with ``cpu_interval_statistic =
    peak``) or its last value (``'last'``: WSS^max_avg, which it takes
    at the interval's end)."""
    if k == 1:
        return x
    rem = len(x) % k
    blocks = x[rem:].reshape(-1, k)
    if reduce == algorithm.CPU_MEAN:
        body = blocks.mean(axis=1)
        head = [x[:rem].mean()] if rem else []
    elif reduce == algorithm.CPU_PEAK:
        body = blocks.max(axis=1)
        head = [x[:rem].max()] if rem else []
    else:
        body = blocks[:, -1]
        head = [x[rem - 1]] if rem else []
    return np.concatenate([np.asarray(head, dtype=body.dtype), body])


def shortfall(alloc, use, ok):
    """Per-VM memory shortfall of the accounted intervals.

    ``alloc``: what each VM is ballooned to for the interval (VMs,
    intervals); ``use``: what it uses at the interval's end; ``ok``: the
    intervals that count. Returns the shortfall array (MiB, 0 where not
    counted).
    """
    return np.where(ok, np.maximum(0.0, use - alloc), 0.0)


class _Pacing:
    """When the next round may run, under ``after_execution``: not while
    the last round's moves wait or copy, then ``interval`` seconds after
    the last of them ended (or after the round, if it planned none)."""

    def __init__(self, mode, interval, first):
        self.mode = mode
        self.interval = interval
        self.next = first
        self.executing = []

    def due(self, now):
        return not self.executing and now >= self.next - 1e-6

    def planned(self, now, moves):
        self.executing = list(moves)
        if not moves:
            self.next = now + self.interval

    def advanced(self, sched, now):
        if not self.executing:
            return
        live = {id(m) for m in sched.waiting + sched.running}
        if any(id(m) in live for m in self.executing):
            return
        # All ended, completed or cancelled (a VM that left the trace:
        # it counts as ended now at the latest).
        ended = [m.end for m in self.executing
                 if m.end is not None and m.end <= now]
        self.next = max(ended, default=now) + self.interval
        self.executing = []


class _Pool:
    """Where VMs run, with the helpers the step loop needs."""

    def __init__(self, trace, model):
        self.trace = trace
        self.model = model
        n = model.count or trace.n_vms
        self.names = ['host-%05d' % i for i in range(n)]
        self.index = {h: i for i, h in enumerate(self.names)}
        self.where = np.full(trace.n_vms, -1, dtype=int)

    def usage(self, vms, values):
        return np.bincount(self.where[vms], weights=values[vms],
                           minlength=len(self.names))


def simulate(trace, mode, settings=None, progress=None, observer=None):
    """Run one mode; returns ``(metrics dict, time series dict)``.

    ``progress(done, total, snapshot)`` is called after every step.

    ``observer(event, **data)``, for instrumentation (what the rounds
    decided and how the migrations went; it must not change what it is
    given): ``'start'`` with ``trace`` (the trace simulated, oversize
    VMs left out: VM indices refer to it); ``'plan'`` after every
    round with ``t`` (the step),
    ``plan`` (:class:`memmut.consolidation.planner.Plan`), ``hosts``
    and ``vms`` (the planner's input) and ``migrations`` (the
    scheduler's :class:`memmut.simulator.migration.InFlightMigration`
    of each move, in the plan's order; their ``start`` and ``end`` are
    set when they run); ``'interval'`` after every accounted interval
    with ``t`` (the sample it is accounted with), ``where`` (each VM's
    host index, -1 for none), ``waiting`` and ``running`` (the
    migrations in flight) and ``host_names``. With a burn-in
    (``settings.burn_in_steps``) its rounds are observed too (``t``
    before ``settings.start_steps``); its intervals are not.
    """
    settings = settings or Settings()
    model = settings.hosts
    wall0 = time.perf_counter()
    if mode not in MODES:
        raise ValueError('unknown mode %r (known: %s)'
                         % (mode, ', '.join(MODES)))
    trace, rejected = quality.reject_oversize(trace, model.cpu_mhz,
                                              model.memory_mb)
    clean = quality.clean_memory(trace, settings.missing_carry_seconds)
    if observer:
        observer('start', trace=trace)
    mem = clean.mem
    d_mem, m_mem = memory_series(trace, mode, settings, mem)
    alive = trace.alive()
    step = trace.step
    w = wss_mod.slice_samples(settings.wss_time_slice, step)
    s0 = min(max(w - 1, settings.start_steps), max(0, trace.n_steps - 2))
    end = trace.n_steps - 1
    if settings.duration_steps:
        end = min(end, s0 + settings.duration_steps)
    # sb: where the simulation starts; s0: where its accounting starts.
    sb = max(min(s0, w - 1), s0 - max(0, settings.burn_in_steps))
    here = alive[:, sb]
    mt = loader.migration_time(d_mem[here, sb] if here.any()
                               else trace.booked, settings.bandwidth_mb_s)
    # The planner's histories have a sample every k trace steps, and
    # its algorithms convert their durations with that time step.
    hk = history_steps(settings, step)
    cpu_stat = settings.cpu_interval_statistic
    algos = loader.build_all(settings.spec, step * hk, mt)
    pool = _Pool(trace, model)
    n_h = len(pool.names)
    sched = migration.Scheduler(settings.bandwidth_mb_s,
                                settings.migration_concurrency,
                                settings.move_order,
                                settings.migration_incoming_concurrency,
                                settings.migration_parallel)
    vm_index = {n: i for i, n in enumerate(trace.names)}
    cpu = trace.cpu
    big_l = settings.history_length
    overhead = settings.migration_cpu_mhz
    rounds_at = set(round_steps(sb, end, step, settings.interval))
    pacing = _Pacing(settings.round_pacing, settings.interval, sb * step)
    first_estimate = (mode == 'wss' and
                      settings.prewarm_history == 'first_estimate')
    warm_at = trace.first + (w - 1)
    states = {}
    # The hosts' summed histories, moved on from round to round (the
    # trace's series only grow: a VM's sample t is the same every round).
    sums = history_sums.HistorySums()
    # The migrations planned per round, for the planner's migration
    # budget (memmut.consolidation.budget).
    ledger = budget.Ledger(settings.plan.migration_budget_window)

    n_int = end - s0
    series = {k: np.zeros(n_int) for k in (
        'active_hosts', 'migrations', 'memory_migrations',
        'memory_violations', 'cpu_overloads', 'power_w', 'used_memory_mb',
        'allocated_memory_mb', 'in_flight', 'copying', 'remote_memory_mb',
        'remote_hosts', 'memory_unserved', 'absorbed_hosts')}
    remote_fraction = settings.plan.remote_memory_fraction
    causes = {}
    failed = {'overload': 0, 'underload': 0}
    oversize = set()
    plan_time, plan_max, moves_total, n_rounds = 0.0, 0.0, 0, 0
    # Underload moves move_order priority_drop left out of their round.
    n_dropped = 0
    # Neat's SLA figures (:mod:`memmut.simulator.sla`): per host, steps
    # on and steps CPU-overloaded; per VM, CPU asked for and CPU lost to
    # its copies (MHz x s).
    host_on = np.zeros(n_h)
    # The round that last planned a VM's migration (-1: none yet).
    moved_in = np.full(trace.n_vms, -1, dtype=int)
    host_over = np.zeros(n_h)
    vm_requested = np.zeros(trace.n_vms)
    vm_degraded = np.zeros(trace.n_vms)
    vm_steps = 0

    def reservations(t):
        """Per host: memory and CPU the planner must leave aside for the
        migrations in flight: the VM on its destination, the copy's CPU
        on both hosts. On the source the VM counts as gone: the round
        that moved it has dealt with that host, and counting it again
        would make the next rounds select more VMs from it."""
        r_mem, r_cpu = np.zeros(n_h), np.zeros(n_h)
        for v, m in sched.in_flight.items():
            r_mem[m.destination] += d_mem[v, t]
            r_cpu[m.destination] += cpu[v, t]
        for m in sched.running:
            r_cpu[m.source] += overhead
            r_cpu[m.destination] += overhead
        return r_mem, r_cpu

    def place_new(new, t, lo):
        placed = np.flatnonzero(pool.where >= 0)
        c_use = pool.usage(placed, cpu[:, t])
        r_use = pool.usage(placed, d_mem[:, t])
        for v, m in sched.in_flight.items():
            c_use[m.destination] += cpu[v, t]
            r_use[m.destination] += d_mem[v, t]
        for m in sched.running:
            c_use[m.source] += overhead
            c_use[m.destination] += overhead
        act = np.bincount(pool.where[placed], minlength=n_h) > 0
        for m in sched.in_flight.values():
            act[m.destination] = True

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
                {trace.names[v]: at_interval(cpu[v, lo:t + 1], hk, cpu_stat)
                 for v in vms},
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

    def plan_at(t, lo):
        fly = sched.in_flight
        placed = np.flatnonzero(pool.where >= 0)
        r_mem, r_cpu = reservations(t)
        busy = np.bincount(pool.where[placed], minlength=n_h) > 0
        for m in fly.values():
            busy[m.destination] = True
        hosts = []
        for i, name in enumerate(pool.names):
            if not busy[i]:
                states.pop(name, None)
            hosts.append(planner.PlannerHost(
                name, max(0.01 * model.cpu_mhz, model.cpu_mhz - r_cpu[i]),
                max(0.01 * model.memory_mb, model.memory_mb - r_mem[i]),
                active=bool(busy[i]), state=states.get(name)))
        # A VM's histories start at its first step, as the controller's
        # hold only the samples since the VM exists: the planner's
        # overload forecasts must not read its arrival as a rise (the
        # zeros before it would be).
        begin = np.maximum(lo, trace.first)
        # Blocks of hk steps ending at t are numbered the same from round
        # to round when the rounds keep to the grid of hk steps from s0
        # (clock pacing); elsewhere they are not a growing series.
        end_id = (t - sb) // hk if (t - sb) % hk == 0 else None
        vms = []
        for v in placed:
            if v in fly:
                continue
            mem_h, end_v = m_mem[v, begin[v]:t + 1], end_id
            if first_estimate:
                k = warm_at[v] - begin[v]   # first warm sample in it
                if 0 < k and warm_at[v] <= t:
                    mem_h = mem_h.copy()
                    mem_h[:k] = mem_h[k]
                    # changed samples: not a window of a growing series
                    end_v = None
            vms.append(planner.PlannerVM(
                trace.names[v], pool.names[pool.where[v]],
                at_interval(cpu[v, begin[v]:t + 1], hk, cpu_stat),
                float(d_mem[v, t]), at_interval(mem_h, hk, 'last'),
                int(n_rounds - moved_in[v]) if moved_in[v] >= 0 else None,
                history_end=end_v))
        plan_inputs[:] = [hosts, vms]
        return planner.plan_round(hosts, vms, algos, settings.plan, sums,
                                  ledger.spent(t * step))

    def switch_over(m):
        pool.where[m.vm] = m.destination

    plan_inputs = [None, None]      # the last round's hosts and VMs

    rounds_before, cancelled_before = 0, 0
    for t in range(sb, end):
        k = t - s0          # the accounted interval (< 0: burn-in)
        if k == 0 and sb < s0:
            # What the burn-in did is not accounted; the planner's
            # state (packing, migrations in flight, budget, dwell)
            # carries on.
            causes.clear()
            failed = dict.fromkeys(failed, 0)
            plan_time, plan_max, moves_total, n_dropped = 0.0, 0.0, 0, 0
            rounds_before, cancelled_before = n_rounds, sched.cancelled
        t_start = t * step
        lo = max(0, t - big_l * hk + 1)
        gone = (pool.where >= 0) & (trace.last < t)
        if gone.any():
            sched.cancel(np.flatnonzero(gone).tolist())
            pool.where[gone] = -1
        new = np.flatnonzero((pool.where < 0) & alive[:, t])
        if len(new):
            place_new(new, t, lo)
        mem_moves, n_moves, n_absorbed = 0, 0, 0
        if (t in rounds_at if pacing.mode == CLOCK
                else pacing.due(t_start)):
            n_rounds += 1
            p0 = time.perf_counter()
            plan = plan_at(t, lo)
            dt = time.perf_counter() - p0
            plan_time += dt
            plan_max = max(plan_max, dt)
            states.update(plan.states)
            n_absorbed = len(plan.absorbed)
            added = []
            moves = plan.migrations
            if settings.move_order == move_order_mod.PRIORITY_DROP:
                kept, dropped = move_order_mod.drop_conflicting(
                    [move_order_mod.Entry(m.kind, pool.index[m.source],
                                          pool.index[m.destination])
                     for m in moves],
                    [f.entry() for f in sched.in_flight.values()])
                moves = [moves[i] for i in kept]
                n_dropped += len(dropped)
            for m in moves:
                v = vm_index[m.vm]
                moved_in[v] = n_rounds
                added.append(sched.add(v, pool.index[m.source],
                                       pool.index[m.destination],
                                       d_mem[v, t], t_start, m.kind,
                                       plan.load.get(m.source, 0.0)))
                key = '%s %s' % (m.kind, m.resource)
                causes[key] = causes.get(key, 0) + 1
                mem_moves += m.memory_caused
            for _, kind in plan.failed:
                failed[kind] += 1
            n_moves = len(moves)
            moves_total += n_moves
            ledger.record(t_start, n_moves)
            pacing.planned(t_start, added)
            if observer:
                observer('plan', t=t, plan=plan, hosts=plan_inputs[0],
                         vms=plan_inputs[1], migrations=added)
        overlaps = sched.advance(t_start, t_start + step, switch_over)
        pacing.advanced(sched, t_start + step)
        if k < 0:
            continue

        # Account for the interval up to the next sample.
        t1 = t + 1
        live = np.flatnonzero((pool.where >= 0) & alive[:, t1])
        hv = pool.where[live]
        used = np.bincount(hv, weights=mem[live, t1], minlength=n_h)
        cpu_h = np.bincount(hv, weights=cpu[live, t1], minlength=n_h)
        act = np.bincount(hv, minlength=n_h) > 0
        for o in overlaps:
            m = o.migration
            if not alive[m.vm, t1] or pool.where[m.vm] < 0:
                continue
            other = m.source if o.done else m.destination
            used[other] += mem[m.vm, t1]
            c = cpu[m.vm, t1]
            cpu_h[pool.where[m.vm]] -= c
            cpu_h[m.source] += c * o.before + overhead * o.copy
            cpu_h[m.destination] += c * (1 - o.before) + overhead * o.copy
            act[m.source] = act[m.destination] = True
            vm_degraded[m.vm] += (sla.MIGRATION_DEGRADATION * c * o.copy
                                  * step)
        u = np.minimum(1.0, cpu_h[act] / model.cpu_mhz)
        over = act & (cpu_h > model.cpu_mhz * (1 + 1e-9))
        host_on += act
        host_over += over
        vm_requested[live] += cpu[live, t1] * step
        vm_steps += len(live)
        series['active_hosts'][k] = act.sum()
        series['migrations'][k] = n_moves
        series['memory_migrations'][k] = mem_moves
        series['memory_violations'][k] = np.count_nonzero(
            used[act] > model.memory_mb)
        served, unserved = remote_memory.serve(
            used, np.bincount(hv, weights=d_mem[live, t1], minlength=n_h),
            act, model.memory_mb, remote_fraction)
        series['remote_memory_mb'][k] = served.sum()
        series['remote_hosts'][k] = np.count_nonzero(
            served > remote_memory.EPSILON_MB)
        series['memory_unserved'][k] = np.count_nonzero(
            unserved > remote_memory.EPSILON_MB)
        series['absorbed_hosts'][k] = n_absorbed
        series['cpu_overloads'][k] = np.count_nonzero(over)
        series['power_w'][k] = float(np.sum(sla.power(
            u, model.idle_watts, model.max_watts, model.power_model)))
        series['used_memory_mb'][k] = used.sum()
        series['allocated_memory_mb'][k] = d_mem[live, t1].sum()
        series['in_flight'][k] = len(sched.waiting) + len(sched.running)
        series['copying'][k] = sum(1 for o in overlaps if o.copy > 0)
        if observer:
            observer('interval', t=t1, where=pool.where.copy(),
                     waiting=list(sched.waiting),
                     running=list(sched.running), host_names=pool.names)
        if progress:
            progress(k + 1, n_int, {
                'active_hosts': int(series['active_hosts'][k]),
                'migrations': moves_total,
                'memory_migrations': int(series['memory_migrations'][:k + 1]
                                         .sum())})

    # Per-VM shortfall and the lower bound, over the accounted intervals.
    sl, sl1 = slice(s0, end), slice(s0 + 1, end + 1)
    ok = alive[:, sl] & alive[:, sl1] & clean.known[:, sl1]
    short = shortfall(d_mem[:, sl], mem[:, sl1], ok)
    lb, lb_cpu, lb_mem = quality.lower_bound(
        cpu[:, sl1], d_mem[:, sl1], alive[:, sl1], model.cpu_mhz,
        model.memory_mb)
    series['lower_bound'] = lb
    c_t, m_t = placement_targets(settings.spec)
    lb_t = quality.target_lower_bound(
        cpu[:, sl1], d_mem[:, sl1], alive[:, sl1], model.cpu_mhz,
        model.memory_mb, c_t, m_t)
    lb_held = quality.held_lower_bound(lb_t, settings.bound_hold_steps)
    series['shortfall_mb'] = short.sum(axis=0)
    series['short_vms'] = np.count_nonzero(short > 0, axis=0).astype(float)
    positive = short[short > 0]
    counted = ok.sum(axis=1)
    vm_frac = np.where(counted > 0, (short > 0).sum(axis=1)
                       / np.maximum(counted, 1), 0.0)[counted > 0]

    # Migrations planned in the accounted period.
    done = [m for m in sched.completed if m.planned >= s0 * step]
    durations = np.array([m.duration for m in done])
    waits = np.array([m.start - m.planned for m in done])
    spilled = sum(1 for m in done if m.end > m.planned + settings.interval
                  + 1e-6) + sum(1 for m in sched.waiting + sched.running
                                if m.planned >= s0 * step)

    host_time = series['active_hosts'].sum()
    memory_caused = int(series['memory_migrations'].sum())
    memory_only = sum(n for c, n in causes.items()
                      if c.endswith(' ' + planner.MEMORY))
    avg_active = float(series['active_hosts'].mean()) if n_int else 0.0
    energy_kwh = float(series['power_w'].sum() * step / 3.6e6)
    neat = sla.metrics(host_on, host_over, vm_degraded, vm_requested,
                       energy_kwh)
    vm_days = vm_steps * step / 86400.0
    lb_mean = float(lb.mean()) if n_int else 0.0
    metrics = {
        'mode': mode,
        'intervals': int(n_int),
        'hours': round(n_int * step / 3600.0, 3),
        'interval_s': settings.interval,
        'rounds': n_rounds - rounds_before,
        'burn_in_intervals': int(s0 - sb),
        'avg_active_hosts': avg_active,
        'max_active_hosts': int(series['active_hosts'].max())
        if n_int else 0,
        'lower_bound_hosts': lb_mean,
        'lower_bound_cpu_hosts': float(lb_cpu.mean()) if n_int else 0.0,
        'lower_bound_memory_hosts': float(lb_mem.mean()) if n_int else 0.0,
        'active_over_lower_bound': (avg_active / lb_mean if lb_mean
                                    else 0.0),
        # Fairer references (quality.target_lower_bound and
        # held_lower_bound), not the bound.
        'lower_bound_target_hosts': float(lb_t.mean()) if n_int else 0.0,
        'lower_bound_held_hosts': float(lb_held.mean()) if n_int else 0.0,
        'lower_bound_targets': [c_t, m_t],
        'lower_bound_hold_steps': settings.bound_hold_steps,
        'migrations': int(moves_total),
        'migrations_by_cause': dict(sorted(causes.items())),
        'memory_caused_migrations': memory_caused,
        'memory_only_migrations': int(memory_only),
        'memory_caused_share': (memory_caused / moves_total
                                if moves_total else 0.0),
        'migrations_completed': len(done),
        'migrations_cancelled': sched.cancelled - cancelled_before,
        'migrations_spilled': int(spilled),
        'move_order': settings.move_order,
        'migrations_dropped': int(n_dropped),
        'mean_migration_s': float(durations.mean()) if len(done) else 0.0,
        'max_migration_s': float(durations.max()) if len(done) else 0.0,
        'mean_migration_wait_s': float(waits.mean()) if len(done) else 0.0,
        'max_in_flight': int(series['in_flight'].max()) if n_int else 0,
        'memory_overload_host_time_fraction': (
            float(series['memory_violations'].sum() / host_time)
            if host_time else 0.0),
        # With remote memory (remote_memory_fraction), the part of it
        # the lenders served, and what was left for the guests' disks.
        'remote_memory_fraction': remote_fraction,
        'memory_unserved_host_time_fraction': (
            float(series['memory_unserved'].sum() / host_time)
            if host_time else 0.0),
        'remote_memory_host_time_fraction': (
            float(series['remote_hosts'].sum() / host_time)
            if host_time else 0.0),
        'remote_memory_gib_hours': float(
            series['remote_memory_mb'].sum() / 1024.0 * step / 3600.0),
        'remote_memory_peak_gib': (float(
            series['remote_memory_mb'].max() / 1024.0) if n_int else 0.0),
        'absorbed_host_rounds': int(series['absorbed_hosts'].sum()),
        'memory_overload_any_host_time_fraction': (
            float(np.mean(series['memory_violations'] > 0))
            if n_int else 0.0),
        'shortfall_vm_interval_fraction': (
            float(len(positive) / ok.sum()) if ok.sum() else 0.0),
        'shortfall_mean_mib': (float(positive.mean()) if len(positive)
                               else 0.0),
        'shortfall_p99_mib': (float(np.percentile(positive, 99))
                              if len(positive) else 0.0),
        'shortfall_gib_hours': float(short.sum() / 1024.0 * step / 3600.0),
        'shortfall_vms_fraction': (float(np.mean(vm_frac > 0))
                                   if len(vm_frac) else 0.0),
        'shortfall_vm_time_p95': (float(np.percentile(vm_frac, 95))
                                  if len(vm_frac) else 0.0),
        'cpu_overload_host_time_fraction': (
            float(series['cpu_overloads'].sum() / host_time)
            if host_time else 0.0),
        'energy_kwh': energy_kwh,
        'power_model': model.power_model,
        'otf': neat['otf'],
        'otf_host_time': neat['otf_host_time'],
        'pdm': neat['pdm'],
        'slav': neat['slav'],
        'esv': neat['esv'],
        'vm_days': vm_days,
        'migrations_per_vm_day': (moves_total / vm_days if vm_days
                                  else 0.0),
        'mean_used_memory_gib': float(series['used_memory_mb'].mean()
                                      / 1024) if n_int else 0.0,
        'mean_allocated_memory_gib': float(
            series['allocated_memory_mb'].mean() / 1024) if n_int else 0.0,
        'failed_placements': failed,
        'oversize_vms': sorted(oversize),
        'rejected_vms': rejected,
        'rejected_vm_count': len(rejected),
        'readings': clean.summary(),
        'wss_error': (settings.wss_error.describe() if mode == 'wss'
                      else None),
        'migration_time_s': round(mt, 3),
        'mean_round_ms': 1000.0 * plan_time / max(1, n_rounds
                                                  - rounds_before),
        'max_round_ms': 1000.0 * plan_max,
        'wall_seconds': time.perf_counter() - wall0,
    }
    series['time_h'] = (np.arange(s0, end) + 1 - s0) * step / 3600.0
    return metrics, series


def placement_targets(spec):
    """``(cpu, memory)`` fill targets of the spec's placement (its
    ``cpu_threshold`` and ``ram_threshold``; 1.0 for one without)."""
    try:
        p = spec.effective()['placement'][1]
    except loader.AlgorithmError:
        p = {}
    return (float(p.get('cpu_threshold', 1.0)),
            float(p.get('ram_threshold', 1.0)))


def compare(results):
    """Cross-mode figures from ``{mode: metrics}``."""
    out = {}
    b, w = results.get('booked'), results.get('wss')
    if b and w and w['avg_active_hosts']:
        out['active_host_ratio_booked_over_wss'] = (
            b['avg_active_hosts'] / w['avg_active_hosts'])
    if b and w and w.get('lower_bound_hosts'):
        out['lower_bound_ratio_booked_over_wss'] = (
            b['lower_bound_hosts'] / w['lower_bound_hosts'])
    if b and w and w['energy_kwh']:
        out['energy_ratio_booked_over_wss'] = (
            b['energy_kwh'] / w['energy_kwh'])
    return out


def settings_from_conf(conf, duration_hours=0.0, step=300.0,
                       wss_error=None):
    """:class:`Settings` from ``[consolidation]`` and ``[simulator]``.

    ``wss_error``: an :class:`memmut.simulator.quality.ErrorModel`
    (default: from ``[simulator] wss_error``, ``wss_lag``,
    ``wss_error_seed``).
    """
    c, s = conf.consolidation, conf.simulator
    if wss_error is None:
        wss_error = quality.parse_error(s.wss_error, s.wss_lag,
                                        s.wss_error_seed)
    return Settings(
        hosts=HostModel(cpu_mhz=s.host_cpu_mhz, memory_mb=s.host_memory_mb,
                        count=s.host_count, idle_watts=s.host_idle_watts,
                        power_model=s.host_power_model,
                        max_watts=s.host_max_watts),
        spec=loader.AlgorithmSpec.from_conf(conf),
        plan=planner.PlanParams.from_conf(conf),
        history_length=c.history_length,
        wss_average_window=s.wss_average_window,
        wss_time_slice=s.wss_time_slice,
        headroom_mb=conf.badis.headroom_kb / 1024.0,
        headroom_fraction=conf.badis.headroom_fraction,
        bandwidth_mb_s=c.network_migration_bandwidth,
        duration_steps=int(round(duration_hours * 3600.0 / step)),
        interval=float(c.interval),
        migration_concurrency=s.migration_concurrency,
        migration_incoming_concurrency=s.migration_incoming_concurrency,
        migration_parallel=s.migration_parallel,
        round_pacing=s.round_pacing,
        history_resolution=s.history_resolution,
        cpu_interval_statistic=c.cpu_interval_statistic,
        migration_cpu_mhz=s.migration_cpu_mhz,
        missing_carry_seconds=s.missing_carry_seconds,
        prewarm_history=c.prewarm_history,
        move_order=c.move_order,
        wss_error=wss_error,
        young=young_mod.YoungPolicy.from_conf(conf))
