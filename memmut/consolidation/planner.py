"""One consolidation round as a pure function.

The controller's entry point is :func:`plan`::

    from memmut.consolidation import planner
    params = planner.PlanParams.from_conf(conf)      # or PlanParams(...)
    result = planner.plan(hosts, vms, params)        # -> Plan
    for vm, source, destination, resource, kind in result.migrations:
        ...                                          # live-migrate vm
    # keep result.states[host] and pass it back as PlannerHost.state next round

``hosts`` is a list of :class:`PlannerHost`, ``vms`` a list of
:class:`PlannerVM`;
``resource`` is ``cpu``, ``memory`` or ``cpu+memory`` (what triggered the
move) and ``kind`` ``overload`` or ``underload``. :func:`plan_round` does
the same with algorithms already built (the simulator builds them once).

Input: the hosts (capacities, whether they are on, the algorithms' state
per host), the VMs (where they run, their CPU history, the memory they are
packed on and their memory-load history) and the decide functions of
:class:`memmut.consolidation.loader.Algorithms`. Output: a :class:`Plan`,
the migrations to make with the reason of each, the hosts to switch on and
off, and the algorithms' new per-host state. Nothing is executed here.

A round, following Neat's local and global managers:

1. Every host running VMs gets two utilization histories: CPU (the sum of
   its VMs' CPU histories, right-aligned, over its CPU capacity) and memory
   (the sum of its VMs' memory-load histories over its memory capacity:
   their working sets, WSS^max_avg, or their booked memory for the
   baseline). Each goes through the overload and the underload detector of
   its resource.
2. Overloaded hosts (the CPU or the memory detector fired): VMs are
   selected one at a time, removing each one's histories from the host's,
   until the detectors no longer fire on what remains; the selected VMs
   are placed on the other hosts that are on and not overloaded, switching
   suspended hosts on when needed. All or nothing per host, as in Neat.
3. Underloaded hosts (``params.underload_combination``: ``all`` — both
   resources underloaded, the default — or ``any``), lightest CPU first
   (or fewest VMs first, ``params.underload_order``), skipping those that
   received VMs in this round: all their VMs are placed on the other
   hosts that are on (none switched on); if they all fit the host is
   emptied and switched off, else nothing moves. With a migration budget
   (``params.migration_budget``, :mod:`memmut.consolidation.budget`) a
   host is emptied only if its VMs fit in what the budget has left.

Reasons: every move carries its kind (``overload``/``underload``) and the
resource that triggered it (``cpu``, ``memory`` or ``cpu+memory``). For an
overload that is the detectors that fired. For an underload under ``all``
it is ``memory`` when the memory detector has fired for fewer consecutive
rounds than the CPU one (memory was the condition met last: it released a
decision CPU alone would have made earlier), else ``cpu`` (CPU-only Neat
would have decided the same now); under ``any`` the ones that fired. A
move is *caused by memory* when its resource includes memory.
"""

import collections
import copy
import dataclasses
import gc
import typing

import numpy as np

from memmut.consolidation import budget as budget_mod
from memmut.consolidation import placement as placement_mod
from memmut.consolidation import remote_absorb

CPU = 'cpu'
MEMORY = 'memory'
BOTH = 'cpu+memory'
OVERLOAD = 'overload'
UNDERLOAD = 'underload'
UNDERLOAD_ORDERS = ('cpu', 'fewest_vms')


@dataclasses.dataclass
class PlannerHost:
    """A compute host: capacities in MHz and in the memory unit of the VMs'
    ``ram`` (memmut uses MiB); ``state`` is what the algorithms keep."""
    name: str
    cpu_mhz: float
    ram: float
    active: bool = True
    state: typing.Optional[dict] = None
    # What the host's agent reported it can lend to other hosts (its
    # reservoir, same unit as ``ram``); None: not known, taken as its
    # memory not promised to its VMs (see remote_absorb).
    lendable: typing.Optional[float] = None


@dataclasses.dataclass
class PlannerVM:
    """A VM as the consolidator sees it.

    ``cpu_history``: CPU use in MHz, newest last. ``ram``: the memory it
    is packed on (WSS^max_avg + headroom, or booked). ``mem_history``: its
    memory load for detection (WSS^max_avg series, or booked), newest last.
    """
    uuid: str
    host: typing.Optional[str]
    cpu_history: typing.Sequence[float]
    ram: float
    mem_history: typing.Sequence[float] = ()
    # Rounds since the VM last arrived by live migration (None: unknown,
    # or never): with PlanParams.min_dwell_rounds, a VM that moved less
    # than that many rounds ago is not moved again unless nothing else
    # fixes an overload.
    rounds_since_migration: typing.Optional[int] = None
    # Number of the newest sample of both histories, in a series that
    # only grows (the sample numbered k is the same in every round): with
    # it, plan_round's ``sums`` reuses last round's host sums (see
    # memmut.consolidation.history_sums). None: summed afresh each round.
    history_end: typing.Optional[int] = None


@dataclasses.dataclass(frozen=True)
class PlanParams:
    """How to plan a round.

    ``spec``: the algorithms' names and parameters
    (:class:`memmut.consolidation.loader.AlgorithmSpec`, default: the
    ``[consolidation]`` option defaults). ``time_step``: seconds between
    two samples of the histories (and two rounds). ``migration_time``:
    seconds a live migration takes, as the algorithms assume it; ``None``
    estimates it as Neat does, the mean ``ram`` of the VMs (MiB) over
    ``bandwidth_mb_s``.
    """
    underload_combination: str = 'all'
    # Most VMs selected from one overloaded host in a round (0: no limit).
    max_overload_moves: int = 0
    # Rounds after receiving VMs during which a host is not emptied.
    underload_grace_rounds: int = 12
    # Rounds a VM stays where a migration put it before it moves again
    # (0: no minimum; see PlannerVM.rounds_since_migration).
    min_dwell_rounds: int = 0
    # Migration budget (memmut.consolidation.budget): over the last
    # ``migration_budget_window`` seconds, the migrations planned may
    # reach ``migration_budget`` per VM and day, plus
    # ``migration_budget_burst``, before an underloaded host is emptied
    # (0: no budget; overload moves are never held back).
    migration_budget: float = 0.1
    migration_budget_window: float = 86400.0
    migration_budget_burst: float = 10.0
    # Which underloaded hosts are emptied first: ``cpu``, the lightest
    # CPU (Neat), or ``fewest_vms``, the fewest VMs (the fewest
    # migrations per host switched off), then the lightest CPU.
    underload_order: str = 'cpu'
    # How much of a host's memory remote memory may stand in for before
    # a memory overload moves VMs (0: never; remote_absorb).
    remote_memory_fraction: float = 0.0
    spec: typing.Any = None
    time_step: float = 300.0
    migration_time: typing.Optional[float] = None
    bandwidth_mb_s: float = 10.0

    @classmethod
    def from_conf(cls, conf):
        """Everything from the ``[consolidation]`` options."""
        from memmut.consolidation import loader
        c = conf.consolidation
        return cls(underload_combination=c.underload_combination,
                   max_overload_moves=c.max_overload_moves,
                   underload_grace_rounds=c.underload_grace_rounds,
                   min_dwell_rounds=c.min_dwell_rounds,
                   migration_budget=c.migration_budget,
                   migration_budget_window=float(
                       c.migration_budget_window),
                   migration_budget_burst=float(c.migration_budget_burst),
                   underload_order=c.underload_order,
                   remote_memory_fraction=c.remote_memory_fraction,
                   spec=loader.AlgorithmSpec.from_conf(conf),
                   time_step=float(c.interval),
                   bandwidth_mb_s=c.network_migration_bandwidth)

    def __post_init__(self):
        if self.time_step <= 0:
            raise ValueError('time_step must be positive')
        if self.bandwidth_mb_s <= 0:
            raise ValueError('bandwidth_mb_s must be positive')
        if self.migration_time is not None and self.migration_time < 0:
            raise ValueError('migration_time must not be negative')
        if self.underload_combination not in ('all', 'any'):
            raise ValueError('underload_combination must be "all" or '
                             '"any"')
        if self.max_overload_moves < 0:
            raise ValueError('max_overload_moves must not be negative')
        if self.underload_grace_rounds < 0:
            raise ValueError('underload_grace_rounds must not be negative')
        if self.min_dwell_rounds < 0:
            raise ValueError('min_dwell_rounds must not be negative')
        if self.migration_budget < 0:
            raise ValueError('migration_budget must not be negative')
        if self.migration_budget_window <= 0:
            raise ValueError('migration_budget_window must be positive')
        if self.migration_budget_burst < 0:
            raise ValueError('migration_budget_burst must not be negative')
        remote_absorb.check_fraction(self.remote_memory_fraction)
        if self.underload_order not in UNDERLOAD_ORDERS:
            raise ValueError('underload_order must be one of %s'
                             % ', '.join(UNDERLOAD_ORDERS))


class Move(typing.NamedTuple):
    """One live migration: unpacks as ``(vm, source, destination,
    resource, kind)``."""
    vm: str
    source: str
    destination: str
    resource: str      # CPU, MEMORY or BOTH: what triggered it
    kind: str          # OVERLOAD or UNDERLOAD

    @property
    def reason(self):
        return '%s %s' % (self.resource, self.kind)

    @property
    def memory_caused(self):
        return MEMORY in self.resource


@dataclasses.dataclass
class Plan:
    """What a round decided; nothing is executed.

    ``migrations``: the moves in order. ``activate``: suspended hosts that
    receive VMs (switch them on first). ``deactivate``: hosts left without
    VMs (suspend them after the migrations). ``overloaded`` and
    ``underloaded``: host -> the resource detected. ``failed``: (host,
    kind) whose VMs could not all be placed, so nothing moved from it.
    ``states``: the algorithms' new per-host state (JSON-serialisable),
    to pass back as :attr:`PlannerHost.state` next round.
    ``over_budget``: underloaded hosts left on because emptying them
    would have overspent the migration budget. ``load``: overloaded
    host -> its load at detection (fraction of capacity). ``absorbed``:
    hosts overloaded on memory alone left in place because remote memory
    serves their excess (host -> what each reserves from the lenders;
    :mod:`memmut.consolidation.remote_absorb`).
    """
    migrations: typing.List[Move] = dataclasses.field(default_factory=list)
    activate: typing.List[str] = dataclasses.field(default_factory=list)
    deactivate: typing.List[str] = dataclasses.field(default_factory=list)
    overloaded: typing.Dict[str, str] = dataclasses.field(
        default_factory=dict)
    underloaded: typing.Dict[str, str] = dataclasses.field(
        default_factory=dict)
    failed: typing.List[typing.Tuple[str, str]] = dataclasses.field(
        default_factory=list)
    states: typing.Dict[str, dict] = dataclasses.field(default_factory=dict)
    over_budget: typing.List[str] = dataclasses.field(default_factory=list)
    # Overloaded host -> its load at detection (last sample over capacity,
    # the larger of the resources detected): how urgent its moves are
    # (memmut.consolidation.move_order).
    load: typing.Dict[str, float] = dataclasses.field(default_factory=dict)
    absorbed: typing.Dict[str, float] = dataclasses.field(
        default_factory=dict)

    def counts(self):
        """Moves per (kind, resource)."""
        return collections.Counter((m.kind, m.resource)
                                   for m in self.migrations)


def _sum_right_aligned(series_list):
    """Sum of series of any lengths, aligned on their last values.

    Element by element the series are added in list order (numpy's
    reduction over the first axis is sequential), so the last value is
    exactly the Python sum of the series' last values."""
    if not series_list:
        return np.zeros(0)
    lengths = {len(s) for s in series_list}
    if len(lengths) == 1:
        n = lengths.pop()
        if not n:
            return np.zeros(0)
        # One concatenation then a reshape: the same (VMs, samples)
        # array as np.array(series_list), built twice as fast (it does
        # not inspect every element for nesting), which matters with a
        # day of samples per VM.
        stacked = np.concatenate(series_list).reshape(len(series_list), n)
        if stacked.dtype != np.float64:
            stacked = stacked.astype(float)
        return np.add.reduce(stacked, axis=0)
    arrays = [np.asarray(s, dtype=float) for s in series_list]
    length = max(len(a) for a in arrays)
    out = np.zeros(length)
    for a in arrays:
        if len(a):
            out[length - len(a):] += a
    return out


def _host_sums(vm_list):
    """``(CPU, memory-load)`` right-aligned sums of a host's VMs
    (:func:`_sum_right_aligned` of each). When all the histories of both
    kinds have one length, both come from one concatenation and one
    reduction over the VM axis: the same conversion to float and the
    same sequential additions, so the same sums bit for bit, with half
    the numpy calls (the lengths are checked with C-level calls: a
    Python test per VM cost as much as the sums)."""
    cpus = [v.cpu_history for v in vm_list]
    mems = [v.mem_history for v in vm_list]
    k = len(cpus)
    n = len(cpus[0]) if k else 0
    if n and list(map(len, cpus + mems)).count(n) == 2 * k:
        both = np.concatenate(cpus + mems)
        if both.dtype != np.float64:
            both = both.astype(float)
        cpu, mem = np.add.reduce(both.reshape(2, k, n), axis=1)
        return cpu, mem
    return _sum_right_aligned(cpus), _sum_right_aligned(mems)


def _backfilled(series_list, summed):
    """The host's history as the overload detectors see it: each VM's
    history extended back to the longest with its earliest value.

    Right-aligned sums (``summed``) count a VM that arrived within the
    history as a rise of the host's load at its arrival; a forecast that
    reads the history's slope (``loess``, ``forecast_threshold``'s
    regression) or the rise at this time yesterday (its seasonal part)
    would then relieve a host for VMs that merely came. Extended, a VM
    contributes no change before its history starts: its level counts,
    it rose only if it rose. Where every history has one length this is
    ``summed`` itself (the same array)."""
    lens = [len(s) for s in series_list]
    if not lens or min(lens) == max(lens):
        return summed
    n = max(lens)
    out = np.array(summed, dtype=float)
    for s, k in zip(series_list, lens):
        if k and k < n:
            out[:n - k] += float(s[0])
    return out


def _take_off(acc, series, backfill=False):
    """Remove a VM's history from a host's summed history ``acc`` in
    place, right-aligned (``backfill``: and its earliest value from the
    samples before it, as :func:`_backfilled` added)."""
    s = np.asarray(series, dtype=float)
    if len(s):
        start = len(acc) - len(s)
        acc[start:] -= s
        if backfill and start > 0:
            acc[:start] -= s[0]


def _last(history):
    return float(history[-1]) if len(history) else 0.0


def _peak(history, window):
    tail = history[-window:]
    if not len(tail):
        return 0.0
    return float(tail.max() if isinstance(tail, np.ndarray) else max(tail))


def _resource(cpu, mem):
    if cpu and mem:
        return BOTH
    return CPU if cpu else MEMORY


def plan_round(hosts, vms, algorithms, params=None, sums=None,
               recent_migrations=0):
    """Plan one consolidation round; see the module documentation.

    ``recent_migrations``: migrations planned within
    ``params.migration_budget_window`` seconds before this round (only
    read with a ``params.migration_budget``).

    ``sums``: a :class:`memmut.consolidation.history_sums.HistorySums`
    kept by the caller from round to round (None: every host's sums are
    computed afresh). It makes the same plans, faster when the VMs give
    :attr:`PlannerVM.history_end`.

    The cyclic garbage collector is paused during the round: a round
    allocates many small tuples (moves, sort keys) while hundreds of
    thousands of VM objects are alive, and the collections this triggers
    scanned all of them again and again (a third of a 10 000-host
    round); whatever cycles it leaves are collected once it is
    re-enabled.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _plan_round(hosts, vms, algorithms, params, sums,
                           recent_migrations)
    finally:
        if was_enabled:
            gc.enable()


def _plan_round(hosts, vms, algorithms, params=None, sums=None,
                recent_migrations=0):
    params = params or PlanParams()
    by_name = {h.name: h for h in hosts}
    on = collections.defaultdict(list)
    for vm in vms:
        if vm.host is not None:
            if vm.host not in by_name:
                raise ValueError('VM %s is on unknown host %s'
                                 % (vm.uuid, vm.host))
            on[vm.host].append(vm)
    plan = Plan()
    # A placement may ask for hosts' CPU use as their peak over the last
    # ``usage_window`` samples (and a VM's share as its own peak) instead
    # of the last value (Neat): see placement.peak_best_fit_decreasing.
    usage_window = int(getattr(algorithms.placement, 'usage_window', 0)
                       or 0)
    # And its memory as what the VMs are packed on plus how far their
    # memory load rose above its last value within the last
    # ``memory_window`` samples (the host: its summed load, so VMs that
    # peak at different times share the room): see
    # placement.peak_best_fit_decreasing's memory_window.
    memory_window = int(getattr(algorithms.placement, 'memory_window', 0)
                        or 0)
    # Where a placement's session sends the VMs taken off an overloaded
    # host: the best fit (the default) or the host with the most CPU
    # left (placement.peak_best_fit_decreasing's overload_fit).
    overload_fit = getattr(algorithms.placement, 'overload_fit', 'best')
    # and the VMs of a host emptied for underload (underload_fit)
    underload_fit = getattr(algorithms.placement, 'underload_fit', 'best')
    # And the window of CPU peaks those VMs are packed on (0: the usage
    # window; placement.peak_best_fit_decreasing's overload_window).
    overload_window = int(getattr(algorithms.placement, 'overload_window',
                                  0) or 0)

    def packed_ram(vm_list):
        if not memory_window:
            return [v.ram for v in vm_list]
        rises = placement_mod.rises([v.mem_history for v in vm_list],
                                    memory_window)
        return [v.ram + r for v, r in zip(vm_list, rises)]

    def dwelling(v):
        return (params.min_dwell_rounds and
                v.rounds_since_migration is not None and
                v.rounds_since_migration < params.min_dwell_rounds)

    def host_context(h, candidates, cpu, mem):
        """What a host-aware selection (``decide.host_aware``) is told
        besides the candidates: the host's capacities, its CPU and
        memory-load histories with the VMs selected so far removed, and
        the candidates' memory-load histories."""
        if not getattr(algorithms.vm_selection, 'host_aware', False):
            return {}
        return {'host_cpu': h.cpu_mhz, 'host_ram': h.ram,
                'host_cpu_history': cpu, 'host_mem_history': mem,
                'vms_mem': {u: v.mem_history
                            for u, v in candidates.items()}}

    # -- 1. detection ---------------------------------------------------
    remote = params.remote_memory_fraction
    absorbing = []      # remote_absorb.Candidate
    cpu_hist, mem_hist = {}, {}
    over_hist = {}      # host -> (CPU, memory) as the overload detectors see
    cpu_use, ram_use = {}, {}
    for name in sorted(on):
        h = by_name[name]
        hv = on[name]
        if sums is None:
            cpu, mem = _host_sums(hv)
        else:
            cpu, mem = sums.host_sums(name, hv, _host_sums,
                                      _sum_right_aligned)
        cpu_hist[name], mem_hist[name] = cpu, mem
        cpu_o = _backfilled([v.cpu_history for v in hv], cpu)
        mem_o = _backfilled([v.mem_history for v in hv], mem)
        over_hist[name] = (cpu_o, mem_o)
        # = sum of the VMs' last CPU values (see _sum_right_aligned)
        cpu_use[name] = (_peak(cpu, usage_window) if usage_window
                         else float(cpu[-1]) if len(cpu) else 0.0)
        ram_use[name] = float(sum([v.ram for v in hv]))
        if memory_window and len(mem):
            ram_use[name] += max(0.0, _peak(mem, memory_window)
                                 - float(mem[-1]))
        state = dict(h.state or {})
        cu, mu = cpu / h.cpu_mhz, mem / h.ram
        over_c, state['cpu_overload'] = algorithms.cpu_overload(
            cpu_o / h.cpu_mhz, state.get('cpu_overload'))
        over_m, state['memory_overload'] = algorithms.memory_overload(
            mem_o / h.ram, state.get('memory_overload'))
        if remote:
            # The same detector on a host with remote memory added; run
            # every round so that a stateful detector's state follows.
            before = state.get('memory_overload_remote')
            over_r, state['memory_overload_remote'] = \
                algorithms.memory_overload(
                    mem_o / (h.ram * (1.0 + remote)), before)
            if over_m and not over_c and not over_r:
                need = remote_absorb.least_extra(
                    lambda g: algorithms.memory_overload(
                        mem_o / (h.ram * (1.0 + g)),
                        copy.deepcopy(before))[0], remote)
                absorbing.append(remote_absorb.Candidate(
                    name, float(mu[-1]) if len(mu) else 0.0,
                    float(need * h.ram)))
        under_c, state['cpu_underload'] = algorithms.cpu_underload(
            cu, state.get('cpu_underload'))
        under_m, state['memory_underload'] = algorithms.memory_underload(
            mu, state.get('memory_underload'))
        rc = state['cpu_underload_rounds'] = (
            state.get('cpu_underload_rounds', 0) + 1 if under_c else 0)
        rm = state['memory_underload_rounds'] = (
            state.get('memory_underload_rounds', 0) + 1 if under_m else 0)
        since = state['rounds_since_received'] = (
            state.get('rounds_since_received', -1) + 1)
        plan.states[name] = state
        in_grace = (state.get('received') and
                    since < params.underload_grace_rounds)
        if over_c or over_m:
            plan.overloaded[name] = _resource(over_c, over_m)
            plan.load[name] = max(
                float(cu[-1]) if over_c and len(cu) else 0.0,
                float(mu[-1]) if over_m and len(mu) else 0.0)
        elif in_grace:
            pass
        elif params.underload_combination == 'all':
            if under_c and under_m:
                plan.underloaded[name] = MEMORY if rm < rc else CPU
        elif under_c or under_m:
            plan.underloaded[name] = _resource(under_c, under_m)
    if sums is not None:
        sums.retain(on)
    for h in hosts:
        if h.active and h.name not in on:
            plan.deactivate.append(h.name)
    if absorbing:
        # Lenders: hosts on, neither overloaded (the candidates are
        # still counted so) nor underloaded (they may be emptied and
        # switched off in this round).
        pool = sum(remote_absorb.lendable(by_name[n].ram, ram_use[n],
                                          by_name[n].lendable)
                   for n in on if n not in plan.overloaded
                   and n not in plan.underloaded)
        plan.absorbed, _ = remote_absorb.choose(absorbing, pool)
        for name in plan.absorbed:
            del plan.overloaded[name]
            del plan.load[name]

    cpu_total = {h.name: float(h.cpu_mhz) for h in hosts}
    ram_total = {h.name: float(h.ram) for h in hosts}
    active = set(on)
    receivers, emptied = set(), set()

    # A placement that offers a session (``decide.session``, see
    # :class:`memmut.consolidation.placement.ThresholdSession`) keeps the
    # hosts' free capacities sorted for the whole round: each placement
    # then costs O(log hosts) per VM instead of rebuilding every host's
    # figures (O(hosts)) for every overloaded host. Same plans.
    session = None
    make_session = getattr(algorithms.placement, 'session', None)
    if make_session is not None:
        targets0 = sorted(active - set(plan.overloaded)
                          - set(plan.absorbed))
        off = set(plan.deactivate)
        inactive0 = [h.name for h in hosts if h.name not in active
                     and h.name not in off]
        session = make_session(
            {t: cpu_use[t] for t in targets0},
            {t: cpu_total[t] for t in targets0},
            {t: ram_use[t] for t in targets0},
            {t: ram_total[t] for t in targets0},
            {t: cpu_total[t] for t in inactive0},
            {t: ram_total[t] for t in inactive0})

    def placement_mapping(vm_list, source, allow_inactive, shares, rams,
                          kind):
        vms_cpu = {v.uuid: v.cpu_history for v in vm_list}
        vms_ram = {v.uuid: r for v, r in zip(vm_list, rams)}
        if session is not None:
            fit = overload_fit if kind == OVERLOAD else underload_fit
            kw = {'fit': fit} if fit != 'best' else {}
            if usage_window and \
                    getattr(session, 'peak_window', None) == usage_window:
                # The session's demand is the VM's peak over the same
                # window as its share of its host's use: computed once.
                return session.place(
                    vms_cpu, vms_ram, allow_inactive, exclude=(source,),
                    demands={v.uuid: c for v, c in zip(vm_list, shares)},
                    **kw)
            return session.place(vms_cpu, vms_ram, allow_inactive,
                                 exclude=(source,), **kw)
        targets = sorted(active - {source} - set(plan.overloaded)
                         - set(plan.absorbed) - emptied)
        inactive = ([h.name for h in hosts
                     if h.name not in active and h.name not in emptied
                     and h.name not in plan.deactivate]
                    if allow_inactive else [])
        mapping, _ = algorithms.placement(
            {t: cpu_use[t] for t in targets},
            {t: cpu_total[t] for t in targets},
            {t: ram_use[t] for t in targets},
            {t: ram_total[t] for t in targets},
            {t: cpu_total[t] for t in inactive},
            {t: ram_total[t] for t in inactive},
            vms_cpu, vms_ram)
        return mapping

    def place(vm_list, source, kind, resource, allow_inactive):
        # Each VM's CPU share: its peak over the usage window (one numpy
        # reduction for the whole list), or its last value.
        window = (overload_window if kind == OVERLOAD and overload_window
                  and usage_window else usage_window)
        shares = (placement_mod.peaks([v.cpu_history for v in vm_list],
                                      window) if window
                  else [_last(v.cpu_history) for v in vm_list])
        rams = packed_ram(vm_list)
        mapping = placement_mapping(vm_list, source, allow_inactive, shares,
                                    rams, kind)
        if not mapping or len(mapping) != len(vm_list):
            plan.failed.append((source, kind))
            return False
        changed = {source}
        for v, c, r in zip(vm_list, shares, rams):
            dest = mapping[v.uuid]
            if dest not in active:
                active.add(dest)
                cpu_use.setdefault(dest, 0.0)
                ram_use.setdefault(dest, 0.0)
                plan.activate.append(dest)
            cpu_use[dest] += c
            ram_use[dest] += r
            cpu_use[source] -= c
            ram_use[source] -= r
            changed.add(dest)
            plan.migrations.append(
                Move(v.uuid, source, dest, resource, kind))
        for dest in changed - {source}:
            receivers.add(dest)
            st = plan.states.setdefault(dest, {})
            st['received'] = True
            st['rounds_since_received'] = 0
        if session is not None:
            for h in changed:
                session.set_usage(h, cpu_use[h], ram_use[h])
        return True

    # -- 2. overloaded hosts ------------------------------------------------
    for name in sorted(plan.overloaded):
        h = by_name[name]
        state = h.state or {}
        candidates, reserve = {}, {}
        for v in on[name]:
            (reserve if dwelling(v) else candidates)[v.uuid] = v
        cpu, mem = cpu_hist[name].copy(), mem_hist[name].copy()
        cpu_o, mem_o = (np.array(x, dtype=float) for x in over_hist[name])
        selected = []
        selection_state = None
        while (candidates or reserve) and (
                not params.max_overload_moves or
                len(selected) < params.max_overload_moves):
            if not candidates:      # only VMs that just came are left
                candidates, reserve = reserve, {}
            chosen, selection_state = algorithms.vm_selection(
                {u: v.cpu_history for u, v in candidates.items()},
                {u: v.ram for u, v in candidates.items()},
                selection_state, **host_context(h, candidates, cpu, mem))
            chosen = [u for u in chosen if u in candidates]
            if params.max_overload_moves:
                # A selection may return several VMs at once
                # (longest_relief): the limit holds all the same.
                chosen = chosen[:params.max_overload_moves - len(selected)]
            if not chosen:
                break
            for u in chosen:
                v = candidates.pop(u)
                selected.append(v)
                for acc, acc_o, series in ((cpu, cpu_o, v.cpu_history),
                                           (mem, mem_o, v.mem_history)):
                    _take_off(acc, series)
                    _take_off(acc_o, series, backfill=True)
            still_c, _ = algorithms.cpu_overload(
                cpu_o / h.cpu_mhz, state.get('cpu_overload'))
            still_m, _ = algorithms.memory_overload(
                mem_o / h.ram, state.get('memory_overload'))
            if not (still_c or still_m):
                break
        if selected:
            place(selected, name, OVERLOAD, plan.overloaded[name], True)

    # -- 3. underloaded hosts -----------------------------------------------
    if params.underload_order == 'fewest_vms':
        order = sorted(plan.underloaded, key=lambda n: (
            len(on[n]), cpu_use[n] / cpu_total[n], n))
    else:
        order = sorted(plan.underloaded,
                       key=lambda n: (cpu_use[n] / cpu_total[n], n))
    budget_left = None
    if params.migration_budget:
        budget_left = budget_mod.left(
            params.migration_budget, params.migration_budget_window,
            len(vms), recent_migrations + len(plan.migrations),
            params.migration_budget_burst)
    for name in order:
        if name in receivers or name in emptied:
            continue
        if any(dwelling(v) for v in on[name]):
            continue        # emptying it would move a VM that just came
        if budget_left is not None and len(on[name]) > budget_left:
            plan.over_budget.append(name)
            continue
        if place(on[name], name, UNDERLOAD, plan.underloaded[name], False):
            if budget_left is not None:
                budget_left -= len(on[name])
            emptied.add(name)
            plan.deactivate.append(name)
            if session is not None:
                session.discard(name)
    return plan


def migration_time(vms, params):
    """Seconds a migration takes for the algorithms (see PlanParams)."""
    if params.migration_time is not None:
        return float(params.migration_time)
    from memmut.consolidation import loader
    return loader.migration_time([v.ram for v in vms], params.bandwidth_mb_s)


def plan(hosts, vms, params=None, sums=None, recent_migrations=0):
    """Plan one consolidation round (the controller's entry point).

    Builds the algorithms of ``params.spec`` (or the option defaults) and
    runs :func:`plan_round`. Raises
    :class:`memmut.consolidation.loader.AlgorithmError` for an unknown
    algorithm or bad parameters, ``ValueError`` for a VM on an unknown
    host.
    """
    from memmut.consolidation import loader
    params = params or PlanParams()
    spec = params.spec if params.spec is not None else loader.AlgorithmSpec()
    algorithms = loader.build_all(spec, params.time_step,
                                  migration_time(vms, params))
    return plan_round(hosts, vms, algorithms, params, sums,
                      recent_migrations)


def apply(plan, placement):
    """Apply a plan's moves to a ``{vm: host}`` mapping (returns a copy)."""
    new = dict(placement)
    for m in plan.migrations:
        new[m.vm] = m.destination
    return new
