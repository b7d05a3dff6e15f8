"""Consolidation rounds in the controller: plan from the database, store
the plan, execute it.

A round (:meth:`RoundRunner.run`), scheduled every ``[consolidation]
interval`` seconds when ``scheduled_rounds`` is on, or on demand
(``ControllerService.run_round``):

1. A ``consolidation_rounds`` row is created (status ``running``) with
   the parameters the round runs with.
2. The planner's input is built from the database (:func:`build_input`):
   every host whose agent reported within ``[controller]
   host_down_after`` seconds, and the nova VMs running on it, with their
   CPU and memory histories resampled to one value per ``[consolidation]
   interval`` (the planner's time step), newest last, ``history_length``
   values at most.
3. :func:`memmut.consolidation.planner.plan` decides; each migration is
   stored with the resource that caused it (``cpu``, ``memory`` or
   ``cpu+memory``) and its kind (``overload``/``underload``).
4. Unless the round is a dry run, the executor (nova live migrations,
   :mod:`memmut.globals.executor`) runs the migrations and records each
   outcome; then the optional power-off hook runs for each host the
   round emptied.
5. The round is finished with its status and a one-line reason:
   ``completed`` (nothing failed; a dry run is ``completed`` with its
   migrations left ``planned``), ``partial`` (some migrations failed),
   ``failed`` (every migration failed, or the round itself could not run:
   the reason names the error). The summary (JSON) has the figures, the
   detections and the algorithms' per-host state, which the next round
   reads back.

A round never raises: errors are logged and recorded on the round (when
the database is reachable at all), so the controller keeps running.

Histories, per VM, from its samples (``vm_samples``):

* CPU: the VM's CPU time per second between consecutive samples from the
  same host (a counter that went back, after a migration or a restart,
  is skipped), averaged per interval, in MHz: cores used times
  ``[consolidation] cpu_core_mhz``. A host's capacity is its
  ``cpu_count`` times the same figure.
* Memory, ``[consolidation] memory_basis = wss``: WSS^max_avg at the end
  of each interval, exactly as the VM's agent computed and reported it
  (its estimator's maximum over the last ``[badis] time_slice`` seconds
  of the moving average of the last ``[badis] average_window`` round
  estimates), or with ``pack_on_shrink_floor`` the shrink floor the same
  sample reports when that is higher (the balloon is held there:
  :func:`memmut.sizing.packing_kb`); the VM is packed on it plus the
  headroom (:mod:`memmut.sizing`), capped at its booked memory. Until the
  VM has been seen for one time slice, and for samples without a reported
  figure (agents before RPC 1.1), it counts at its booked memory.
  ``booked``: its booked memory throughout (Neat's baseline).

VMs that nova does not manage (``nova_instance`` false) cannot be
migrated: they are left out of the plan and their last CPU use and
memory are taken off their host's capacity; a host keeping such VMs is
never powered off. Hosts that run no VM are given to the planner as
inactive, so they receive VMs only when an overload needs them. Hosts
whose agent is down are left out (they are not switched on).
"""

import dataclasses
import json
import math
import threading
import time
import typing

import numpy as np
from oslo_log import log as logging

from memmut.consolidation import algorithm
from memmut.consolidation import move_order
from memmut.consolidation import planner
from memmut.consolidation import young as young_mod
from memmut.db import models
from memmut.globals import protocol
from memmut import sizing

LOG = logging.getLogger(__name__)

COMPLETED = 'completed'
PARTIAL = 'partial'
FAILED = 'failed'
BUSY = 'busy'      # not a stored status: another round was running
# [consolidation] round_pacing
CLOCK = 'clock'
AFTER_EXECUTION = 'after_execution'
LEASE_LOST_BEFORE = ('lost the consolidation lease before executing (held '
                     'by %s)')

# Domain states of VMs that run (and can live-migrate).
RUNNING_STATES = ('running', 'blocked', 'paused')
MIN_CAPACITY = 1.0      # MHz / MiB left to a host full of pinned VMs


@dataclasses.dataclass
class RoundResult:
    """What :meth:`RoundRunner.run` did (also stored in the database)."""
    round_id: typing.Optional[int]
    status: str
    reason: str
    dry_run: bool
    plan: typing.Optional[planner.Plan] = None
    migrations: typing.List[typing.Any] = dataclasses.field(
        default_factory=list)
    outcomes: typing.Dict[int, typing.Any] = dataclasses.field(
        default_factory=dict)
    powered_off: typing.List[str] = dataclasses.field(default_factory=list)
    powered_on: typing.List[str] = dataclasses.field(default_factory=list)
    summary: typing.Dict[str, typing.Any] = dataclasses.field(
        default_factory=dict)


@dataclasses.dataclass
class PlannerInput:
    """The planner's hosts and VMs, and what was left out and why."""
    hosts: typing.List[planner.PlannerHost]
    vms: typing.List[planner.PlannerVM]
    # host -> UUIDs of the VMs nova does not manage (pinned there).
    pinned: typing.Dict[str, typing.List[str]]
    # host -> why it was left out.
    excluded_hosts: typing.Dict[str, str]
    # Hosts memmut powered off, offered to the planner as inactive (they
    # are switched on before VMs go to them).
    sleeping: typing.List[str] = dataclasses.field(default_factory=list)
    # VM uuid -> (source, destination) of the migrations earlier rounds
    # are still executing: left out of the plan, reserved on arrival.
    in_flight: typing.Dict[str, typing.Tuple[str, str]] = \
        dataclasses.field(default_factory=dict)


# -- histories -------------------------------------------------------------


def _bin_index(timestamps, end, interval):
    """Interval index of each timestamp counted back from ``end`` (0: the
    newest interval ``(end - interval, end]``)."""
    t = np.asarray(timestamps, dtype=float)
    if not t.size:
        return np.zeros(0, dtype=int)
    # Interval k is (end - (k+1) interval, end - k interval]; samples
    # stamped after ``end`` (agent clocks) count in the newest.
    return np.maximum(0, np.floor((end - t) / interval + 1e-9)).astype(int)


def cpu_history(samples, end, interval, length, core_mhz,
                statistic=algorithm.CPU_MEAN):
    """CPU use in MHz per interval, oldest first (intervals with data).

    ``samples``: raw samples and rolled-up intervals (their CPU seconds
    count in the planner interval of their newest sample: exactly the
    raw figures when the intervals line up, within one interval
    otherwise). ``statistic``: ``mean``, the CPU used over the
    interval's time (Neat's), or ``peak``, the highest rate between two
    consecutive samples within it (a rolled-up interval counts at its
    mean: its samples are gone)."""
    if statistic not in algorithm.CPU_STATISTICS:
        raise ValueError('unknown CPU statistic %r' % (statistic,))
    used = np.zeros(length)
    spent = np.zeros(length)
    peak = np.zeros(length)
    prev = None
    for cur in samples:
        # A rolled-up interval (memmut.db.api.RollupRow) brings its own
        # CPU seconds; it is also the sample the next delta starts at.
        rolled = getattr(cur, 'cpu_spent_s', None)
        if rolled is not None:
            dcpu_s, dt = cur.cpu_used_s, rolled
        elif prev is None:
            prev = cur
            continue
        else:
            dt = cur.timestamp - prev.timestamp
            dcpu_s = (cur.cpu_time_ns - prev.cpu_time_ns) / 1e9
            if cur.host_id != prev.host_id or dt <= 0 or dcpu_s < 0:
                prev = cur
                continue
        prev = cur
        if dt <= 0:
            continue
        k = int(_bin_index([cur.timestamp], end, interval)[0])
        if k < length:
            used[k] += dcpu_s
            spent[k] += dt
            peak[k] = max(peak[k], dcpu_s / dt)
    have = spent > 0
    if statistic == algorithm.CPU_PEAK:
        values = peak
    else:
        values = np.where(have, used / np.where(have, spent, 1.0), 0.0)
    return [float(v * core_mhz) for v in values[have][::-1]]


def memory_history(samples, end, interval, length, booked_mb, first_seen,
                   time_slice, prewarm='booked', carry_floor=False):
    """WSS^max_avg in MiB at the end of each interval, oldest first.

    The figure is the agent's own (``wss_max_avg_kb`` of the newest sample
    of the interval): the controller never recomputes it, so agent and
    controller agree on it by construction. With ``carry_floor``
    (``[consolidation] pack_on_shrink_floor``) it is
    :func:`memmut.sizing.packing_kb` of it and the sample's
    ``shrink_floor_kb``, both the agent's. Intervals without any sample
    of the VM are left out; one whose newest sample has no reported
    WSS^max_avg (an agent before RPC 1.1, an estimator without one), or
    whose VM has not yet been seen for a whole time slice, counts at
    ``booked_mb``. With ``prewarm`` = ``'first_estimate'`` (``[consolidation]
    prewarm_history``) the intervals before the VM was seen for a whole
    time slice hold instead its first WSS^max_avg in the history, when
    the history has one.
    """
    k_all = _bin_index([s.timestamp for s in samples], end, interval)
    newest = {}
    for k, s in zip(k_all, samples):
        k = int(k)
        if k < length and (k not in newest or
                           s.timestamp >= newest[k].timestamp):
            newest[k] = s
    rows = [newest[k] for k in sorted(newest, reverse=True)]
    warm = [s.timestamp - first_seen >= time_slice for s in rows]
    figure = [sizing.packing_kb(s.wss_max_avg_kb, s.shrink_floor_kb,
                                carry_floor) for s in rows]
    out = [booked_mb if kb is None or not w
           else min(kb / 1024.0, booked_mb)
           for kb, w in zip(figure, warm)]
    if prewarm == 'first_estimate':
        first = next((i for i, (kb, w) in enumerate(zip(figure, warm))
                      if w and kb is not None), None)
        for i in range(first or 0):
            if not warm[i]:
                out[i] = out[first]
    return out


def last_arrivals(db):
    """VM uuid -> when its last completed live migration finished (for
    ``[consolidation] min_dwell_rounds``)."""
    import sqlalchemy as sa
    m = models.Migration
    rows = db.read_rows(
        sa.select(m.vm_uuid, sa.func.max(m.finished_at))
        .where(m.status == 'completed', m.finished_at.isnot(None))
        .group_by(m.vm_uuid))
    return {uuid: float(t) for uuid, t in rows}


def in_flight_migrations(db):
    """VM uuid -> (source, destination) of the migrations that rounds
    still executing have not finished (planned or running; not those of
    dry runs, which stay planned, nor of rounds that ended)."""
    import sqlalchemy as sa
    m, r = models.Migration, models.ConsolidationRound
    rows = db.read_rows(
        sa.select(m.vm_uuid, m.source_host, m.dest_host)
        .join(r, m.round_id == r.id)
        .where(r.status == 'running', r.dry_run.is_(False),
               m.status.in_(('planned', 'running')))
        .order_by(m.id))
    return {uuid: (src, dst) for uuid, src, dst in rows}


def later_arrivals(db, host, round_id):
    """Migrations to ``host`` planned by rounds after ``round_id`` that
    may still put a VM there (not failed, skipped or cancelled)."""
    import sqlalchemy as sa
    m, r = models.Migration, models.ConsolidationRound
    rows = db.read_rows(
        sa.select(sa.func.count(m.id))
        .join(r, m.round_id == r.id)
        .where(m.round_id > round_id, m.dest_host == host,
               r.dry_run.is_(False),
               m.status.notin_(('failed', 'skipped', 'cancelled'))))
    return int(rows[0][0]) if rows else 0


def recent_migrations(db, now, window):
    """Migrations planned by the rounds (not dry runs) that started in
    the last ``window`` seconds, but for those skipped or cancelled (for
    ``[consolidation] migration_budget``, memmut.consolidation.budget)."""
    import sqlalchemy as sa
    m, r = models.Migration, models.ConsolidationRound
    rows = db.read_rows(
        sa.select(sa.func.count(m.id))
        .join(r, m.round_id == r.id)
        .where(r.started_at > now - window, r.dry_run.is_(False),
               m.status.notin_(('skipped', 'cancelled'))))
    return int(rows[0][0]) if rows else 0


def _young_prior(policy, population, time_slice):
    """The young VM policy's prior from ``(age s, booked MiB, peak,
    current WSS^max_avg)`` of the round's VMs (see
    :mod:`memmut.consolidation.young`): for ``prior`` the peaks of the
    VMs at least ``min_age`` old, for ``spike_prior`` the rises of those
    past their first time slice."""
    q = policy.effective().get('quantile', 0.9)
    if policy.name == 'prior':
        rows = [(p, b) for a, b, p, _ in population if a >= policy.min_age]
    elif policy.name == 'spike_prior':
        rows = [(p - m, b) for a, b, p, m in population if a >= time_slice]
    else:
        return None
    if not rows:
        return None
    return young_mod.prior_fraction([r[0] for r in rows],
                                    [r[1] for r in rows], q)


def build_input(conf, db, now, states=None, wake=False, in_flight=None):
    """The planner's input from the database; see the module doc.

    ``wake``: hosts memmut powered off (and whose agent is therefore
    down) are offered to the planner as inactive hosts, at the capacity
    they last reported. ``in_flight``: VM uuid -> (source, destination)
    of migrations still running (:func:`in_flight_migrations`); those
    VMs are not planned, count as gone from their source, and their
    memory and last CPU use are reserved on their destination, which
    counts as active (as in the simulator)."""
    c = conf.consolidation
    interval = float(c.interval)
    length = c.history_length
    down_after = conf.controller.host_down_after
    core = c.cpu_core_mhz
    span = length * interval + conf.badis.time_slice
    states = states or {}

    up, excluded, sleeping = {}, {}, {}
    for h in db.list_hosts():
        if h.last_report_at is None or not h.memory_total_kb or \
                not h.cpu_count:
            excluded[h.name] = 'no report yet'
        elif now - h.updated_at > down_after and \
                h.power_state == models.POWER_OFF:
            if wake:
                sleeping[h.name] = h
            else:
                excluded[h.name] = ('powered off by memmut (no '
                                    'power_on_command to wake it)')
        elif now - h.updated_at > down_after:
            excluded[h.name] = 'agent down (last report %.0f s ago)' % (
                now - h.updated_at)
        else:
            up[h.name] = h

    since = min((h.last_report_at for h in up.values()), default=now) - span
    series = db.vm_series(since) if up else {}
    arrived = last_arrivals(db) if c.min_dwell_rounds else {}
    policy = young_mod.YoungPolicy.from_conf(conf)
    headroom = (conf.badis.headroom_kb / 1024.0,
                conf.badis.headroom_fraction)
    # (PlannerVM, booked MiB, age s) of the VMs the young VM policy may
    # repack once the population's prior is known.
    young = []
    population = []
    vms, pinned = [], {}
    in_flight = in_flight or {}
    moving = {}
    pinned_cpu = dict.fromkeys(up, 0.0)
    pinned_ram = dict.fromkeys(up, 0.0)
    for vm in db.list_vms():
        host = up.get(vm.host.name)
        if host is None or vm.state not in RUNNING_STATES:
            continue
        if vm.last_seen < host.last_report_at - down_after:
            continue        # not in the host's recent reports: gone
        end = host.last_report_at
        samples = [r for r in series.get(vm.uuid, ())
                   if r.timestamp >= end - span]
        booked = vm.booked_kb / 1024.0
        cpu = cpu_history(samples, end, interval, length, core,
                          c.cpu_interval_statistic)
        if c.memory_basis == 'booked':
            mem = [booked] * max(1, len(cpu))
            ram = booked
        else:
            mem = memory_history(samples, end, interval, length, booked,
                                 vm.first_seen, conf.badis.time_slice,
                                 c.prewarm_history,
                                 c.pack_on_shrink_floor) or [booked]
            ram = booked if mem[-1] >= booked else float(sizing.demand(
                mem[-1], booked, conf.badis.headroom_kb / 1024.0,
                conf.badis.headroom_fraction))
        if not vm.nova_instance:
            pinned.setdefault(host.name, []).append(vm.uuid)
            pinned_cpu[host.name] += cpu[-1] if cpu else 0.0
            pinned_ram[host.name] += ram
            continue
        move = in_flight.get(vm.uuid)
        if move is not None:
            moving[vm.uuid] = move
            dest = move[1]
            if dest in pinned_cpu:
                pinned_cpu[dest] += cpu[-1] if cpu else 0.0
                pinned_ram[dest] += ram
            continue
        done = arrived.get(vm.uuid)
        vms.append(planner.PlannerVM(
            vm.uuid, host.name, cpu, ram, mem,
            None if done is None else
            max(0, int((now - done) // interval))))
        if policy.name != 'time_slice' and c.memory_basis != 'booked':
            age = now - vm.first_seen
            window = mem[-max(1, int(round(policy.min_age / interval))):]
            population.append((age, booked, max(window), mem[-1]))
            if age < policy.min_age and age >= conf.badis.time_slice:
                young.append((vms[-1], booked, age))
    if young:
        prior = _young_prior(policy, population, conf.badis.time_slice)
        for v, booked, age in young:
            v.ram = young_mod.packed(policy, v.ram, booked, age, prior,
                                     *headroom, wss=v.mem_history[-1])

    busy = {v.host for v in vms}
    for source, dest in moving.values():
        busy.update((source, dest))
    # What each host can lend as remote memory (its reservoir), for the
    # planner's remote_memory_fraction (remote_absorb).
    lend = (protocol.lendable_kb(db) if c.remote_memory_fraction
            else None)
    hosts = [planner.PlannerHost(
        name,
        max(MIN_CAPACITY, h.cpu_count * core - pinned_cpu[name]),
        max(MIN_CAPACITY, h.memory_total_kb / 1024.0 - pinned_ram[name]),
        active=name in busy, state=states.get(name),
        lendable=None if lend is None else lend.get(name, 0) / 1024.0)
        for name, h in sorted(up.items())]
    hosts += [planner.PlannerHost(
        name, max(MIN_CAPACITY, h.cpu_count * core),
        max(MIN_CAPACITY, h.memory_total_kb / 1024.0), active=False,
        state=states.get(name)) for name, h in sorted(sleeping.items())]
    return PlannerInput(hosts, vms, pinned, excluded, sorted(sleeping),
                        moving)


# -- rounds ----------------------------------------------------------------


def _jsonable(value):
    """``value`` with numpy scalars and arrays made plain JSON."""
    def default(o):
        if isinstance(o, np.ndarray):
            return o.tolist()
        if isinstance(o, np.generic):
            return o.item()
        if isinstance(o, (set, tuple)):
            return list(o)
        raise TypeError('not JSON serialisable: %r' % type(o))

    def finite(o):
        if isinstance(o, float) and not math.isfinite(o):
            return None
        if isinstance(o, dict):
            return {k: finite(v) for k, v in o.items()}
        if isinstance(o, list):
            return [finite(v) for v in o]
        return o
    return finite(json.loads(json.dumps(value, default=default)))


def _parameters(conf, params, dry_run):
    c = conf.consolidation
    return _jsonable({
        'algorithms': dataclasses.asdict(params.spec),
        'underload_combination': params.underload_combination,
        'max_overload_moves': params.max_overload_moves,
        'underload_grace_rounds': params.underload_grace_rounds,
        'time_step': params.time_step,
        'history_length': c.history_length,
        'memory_basis': c.memory_basis,
        'headroom_kb': conf.badis.headroom_kb,
        'headroom_fraction': conf.badis.headroom_fraction,
        'cpu_core_mhz': c.cpu_core_mhz,
        'network_migration_bandwidth': c.network_migration_bandwidth,
        'dry_run': dry_run,
    })


def _default_executor_factory(conf, db, stop):
    from memmut.globals import executor
    return executor.NovaExecutor(conf, db, stop=stop)


def _call_hook(hook, host):
    """``hook(host) -> (ok, message)``; a hook that raises failed."""
    try:
        return hook(host)
    except Exception as e:
        return False, '%s: %s' % (type(e).__name__, e)


def _default_power(conf, action):
    from memmut.globals import executor
    return executor.PowerCommand(conf, action)


class RoundRunner:
    """Runs consolidation rounds, one at a time; see the module doc.

    ``executor_factory(conf, db, stop)`` returns an object whose
    ``execute(migration_rows)`` returns ``{migration id: outcome}`` (an
    object with a ``status``) and records each outcome itself
    (:class:`memmut.globals.executor.NovaExecutor` by default).
    ``power_off(host)`` and ``power_on(host)`` ``-> (ok, message)``,
    falsy when there is none (:class:`memmut.globals.executor.
    PowerCommand` by default); after a power-on the round waits for the
    host's nova-compute with the executor's ``wait_for_compute`` when it
    has one.
    """

    def __init__(self, conf, db, executor_factory=None, power_off=None,
                 stop=None, clock=time.time, power_on=None, leader=None):
        self.conf = conf
        self.db = db
        self._executor_factory = (executor_factory or
                                  _default_executor_factory)
        self._power_off = power_off
        self._power_on = power_on
        self._stop = stop or threading.Event()
        self._clock = clock
        # Held while a round plans and stores its migrations: rounds
        # plan one at a time. Under round_pacing after_execution it is
        # held until the round has executed them too.
        self._lock = threading.Lock()
        # Rounds of this controller executing their migrations now.
        self._executing = 0
        self._executing_lock = threading.Lock()
        # The migrations running at once across every round of this
        # controller ([nova] max_parallel, shared by their executors).
        self._slots = None
        # memmut.globals.leader.Leadership, or None: this controller is
        # the only one (no lease taken).
        self._leader = leader

    def _previous_states(self):
        """The algorithms' per-host state left by the latest round."""
        for rnd in self.db.list_rounds(limit=20):
            if isinstance(rnd.summary, dict) and \
                    isinstance(rnd.summary.get('states'), dict):
                return rnd.summary['states']
        return {}

    def run(self, dry_run=None, started=None):
        """Run one round now; returns a :class:`RoundResult`, never raises.

        ``dry_run``: plan and store only; ``None`` takes ``[consolidation]
        dry_run``. A round asked for while another plans (under
        ``round_pacing`` after_execution: runs), or while another
        controller holds the consolidation lease (:mod:`memmut.globals.
        leader`), is not started (status ``busy``, no row).
        ``started(round_id)`` is called once the round is recorded
        (memmut-api answers with its id then).
        """
        if dry_run is None:
            dry_run = self.conf.consolidation.dry_run
        if not self._lock.acquire(blocking=False):
            # (under clock pacing the lock is held while a round plans,
            # or while an emptied host is checked and switched off)
            reason = ('another round is planning' if self.pacing == CLOCK
                      else 'another round is running')
            LOG.warning('Consolidation round not started: %s', reason)
            return RoundResult(None, BUSY, reason, dry_run)
        held = [True]

        def release_planning():
            # Under clock pacing the next round may plan once this one
            # has stored its migrations (it then plans around them).
            if held[0] and self.pacing == CLOCK:
                held[0] = False
                self._lock.release()
        try:
            if self._leader is not None:
                if not self._leader.acquire():
                    reason = ('another controller (%s) holds the '
                              'consolidation lease' %
                              (self._leader.holder_now() or 'unknown'))
                    LOG.info('Consolidation round not started: %s', reason)
                    return RoundResult(None, BUSY, reason, dry_run)
                if self._leader.new:
                    # The previous leader's rounds end with its lease.
                    self._abandon()
            return self._run(bool(dry_run), started, release_planning)
        finally:
            if held[0]:
                self._lock.release()

    @property
    def pacing(self):
        return self.conf.consolidation.round_pacing

    @property
    def executing(self):
        """How many of this controller's rounds execute migrations."""
        return self._executing

    def due(self, interval):
        """True unless some controller started a round less than half
        ``interval`` ago (scheduled rounds of several controllers, or a
        new leader, do not run twice per interval)."""
        try:
            latest = self.db.list_rounds(limit=1)
        except Exception:
            return True         # the round records the database error
        return not latest or \
            self._clock() - latest[0].started_at >= interval / 2.0

    def _run(self, dry_run, started=None, release_planning=None):
        t0 = time.perf_counter()
        result = RoundResult(None, FAILED, '', dry_run)
        try:
            params = planner.PlanParams.from_conf(self.conf)
            parameters = _parameters(self.conf, params, dry_run)
        except Exception as e:
            # Bad [consolidation] parameters: record the round anyway.
            params, parameters = None, {'dry_run': dry_run}
            config_error = e
        else:
            config_error = None
        try:
            rnd = self.db.create_round(dry_run=dry_run,
                                       parameters=parameters)
        except Exception as e:
            LOG.error('Consolidation round not started: %s', e)
            result.reason = 'cannot record the round: %s' % e
            return result
        result.round_id = rnd.id
        if started is not None:
            started(rnd.id)
        try:
            if config_error is not None:
                raise config_error
            self._plan_and_execute(result, params, t0,
                                   release_planning or (lambda: None))
        except Exception as e:
            LOG.exception('Consolidation round %d failed', rnd.id)
            result.status = FAILED
            result.reason = 'round failed: %s: %s' % (
                type(e).__name__, str(e).strip().splitlines()[0]
                if str(e).strip() else '')
        result.summary['duration_s'] = round(time.perf_counter() - t0, 3)
        try:
            summary = _jsonable(result.summary)
        except Exception as e:     # an algorithm kept a state JSON refuses
            LOG.exception('Consolidation round %d: summary not stored',
                          rnd.id)
            summary = {'error': 'summary not serialisable: %s' % e}
        self._finish(rnd.id, result, summary)
        log = LOG.info if result.status == COMPLETED else LOG.warning
        log('Consolidation round %d %s: %s', rnd.id, result.status,
            result.reason)
        return result

    def _finish(self, round_id, result, summary):
        """Record the round's end, retrying while the database is away (a
        round must not stay ``running``); given up only when the service
        stops, and then the next start closes it (:meth:`recover`)."""
        delay = 1.0
        while True:
            try:
                self.db.finish_round(round_id, result.status,
                                     reason=result.reason, summary=summary)
                return True
            except Exception as e:
                LOG.error('Cannot record the end of consolidation round %d '
                          '(%s: %s): %s; retrying in %.0f s', round_id,
                          result.status, result.reason, e, delay)
            if self._stop.wait(delay):
                LOG.warning('Consolidation round %d left running in the '
                            'database: the next controller start closes it',
                            round_id)
                return False
            delay = min(delay * 2, 30.0)

    def recover(self):
        """At start: rounds a dead controller left ``running`` are closed
        as failed. Returns their ids. With a leader lease, only when no
        other controller holds it (its rounds are alive); a lease taken
        only for this is given back."""
        if self._leader is None:
            return self._abandon()
        if not self._leader.acquire():
            return []
        try:
            return self._abandon()
        finally:
            self._leader.release()

    def release(self):
        """Give the consolidation lease up (the controller stops)."""
        if self._leader is not None:
            self._leader.release()

    def _abandon(self):
        ids = self.db.abandon_running_rounds(
            'abandoned: the controller stopped while the round ran')
        for rid in ids:
            LOG.warning('Consolidation round %d was left running by a '
                        'controller that stopped: marked failed', rid)
        return ids

    def _plan_and_execute(self, result, params, t0, release_planning):
        now = self._clock()
        states = self._previous_states()
        if self._power_on is None:
            self._power_on = _default_power(self.conf, 'on')
        data = build_input(self.conf, self.db, now, states,
                           wake=bool(self._power_on),
                           in_flight=in_flight_migrations(self.db))
        c = self.conf.consolidation
        spent = (recent_migrations(self.db, now,
                                   float(c.migration_budget_window))
                 if c.migration_budget else 0)
        t_plan = time.perf_counter()
        plan = planner.plan(data.hosts, data.vms, params,
                            recent_migrations=spent)
        plan_s = time.perf_counter() - t_plan
        result.plan = plan
        for move in plan.migrations:
            result.migrations.append(self.db.add_migration(
                result.round_id, move.vm, move.source, move.destination,
                move.resource, move.kind))
        counts = plan.counts()
        result.summary.update({
            'hosts': len(data.hosts),
            'vms': len(data.vms),
            'in_flight': len(data.in_flight),
            'excluded_hosts': data.excluded_hosts,
            'pinned_vms': data.pinned,
            'input_s': round(t_plan - t0, 3),
            'plan_s': round(plan_s, 3),
            'migrations': len(plan.migrations),
            'memory_caused': sum(1 for m in plan.migrations
                                 if m.memory_caused),
            'by_reason': {'%s %s' % (r, k): n
                          for (k, r), n in sorted(counts.items())},
            'overloaded': plan.overloaded,
            'underloaded': plan.underloaded,
            'not_placed': [list(f) for f in plan.failed],
            'budget_spent': spent,
            'over_budget': plan.over_budget,
            'absorbed': plan.absorbed,
            'activate': plan.activate,
            'deactivate': plan.deactivate,
            'states': plan.states,
        })
        planned = '%d migration(s) planned (%d caused by memory)' % (
            len(plan.migrations), result.summary['memory_caused'])
        if plan.failed:
            planned += ', %d host(s) whose VMs did not fit elsewhere' % (
                len(plan.failed))
        if plan.absorbed:
            planned += (', %d host(s) left to remote memory for their '
                        'memory overload (%s)' % (
                            len(plan.absorbed),
                            ', '.join(sorted(plan.absorbed))))
        if result.dry_run or not plan.migrations:
            result.status = COMPLETED
            result.reason = ('dry run: %s, none executed' % planned
                             if result.dry_run else planned)
            return
        if self._leader is not None and not self._leader.acquire():
            self._cancel_all(result, planned, LEASE_LOST_BEFORE % (
                self._leader.holder_now() or 'unknown'))
            return
        with self._executing_lock:
            self._executing += 1
        try:
            release_planning()
            self._execute_guarded(result, plan, data, planned)
        finally:
            with self._executing_lock:
                self._executing -= 1

    def _execute_guarded(self, result, plan, data, planned):
        if self._leader is None:
            self._execute(result, plan, data, planned, self._stop)
            return
        # While it executes, the round renews the lease every third of
        # its duration; a lost lease (or the service stopping) sets the
        # round's stop event: no new migration or power hook starts.
        stop, done = threading.Event(), threading.Event()
        lost = []
        guard = threading.Thread(target=self._guard,
                                 args=(done, stop, lost),
                                 name='memmut-controller-lease',
                                 daemon=True)
        guard.start()
        try:
            self._execute(result, plan, data, planned, stop)
        finally:
            done.set()
            guard.join()
        if lost:
            result.status = PARTIAL if result.status == COMPLETED \
                else result.status
            result.reason += ('; lost the consolidation lease while '
                              'executing: the migrations not started were '
                              'cancelled, no host powered off')

    def _guard(self, done, stop, lost):
        """Renew the lease while the round executes; see above."""
        period = self._leader.duration / 3.0
        last = time.monotonic()
        while not done.wait(min(0.5, period)):
            if self._stop.is_set():
                stop.set()
            if time.monotonic() - last >= period:
                last = time.monotonic()
                if not self._leader.acquire():
                    LOG.error('Consolidation lease lost while the round '
                              'executes: no new migration starts')
                    lost.append(True)
                    stop.set()
                    return

    def _cancel_all(self, result, planned, error):
        """Record every planned migration of the round as cancelled."""
        from memmut.globals import executor as executor_mod
        for row in result.migrations:
            self.db.update_migration(row.id, 'cancelled', error=error,
                                     finished_at=self._clock())
            result.outcomes[row.id] = executor_mod.Outcome(
                'cancelled', 0, error, row.dest_host)
        result.summary['outcomes'] = {'cancelled': len(result.migrations)}
        result.status = FAILED
        result.reason = '%s; none executed: %s' % (planned, error)
        LOG.error('Consolidation round %s: %s', result.round_id, error)

    def _execute(self, result, plan, data, planned, stop):
        executor = self._executor_factory(self.conf, self.db, stop)
        share = getattr(executor, 'share_slots', None)
        if share is not None:
            # (rounds executing at once may both get here first)
            with self._executing_lock:
                if self._slots is None:
                    from memmut.globals import executor as executor_mod
                    self._slots = executor_mod.new_slots(self.conf)
            share(self._slots)
        runnable, cancelled = self._power_on_activated(result, plan, data,
                                                       executor, stop)
        runnable = self._order_moves(runnable, plan, cancelled)
        result.outcomes = executor.execute(runnable)
        result.outcomes.update(cancelled)
        by_status = {}
        for outcome in result.outcomes.values():
            by_status[outcome.status] = by_status.get(outcome.status, 0) + 1
        result.summary['outcomes'] = by_status
        failed = by_status.get(FAILED, 0) + by_status.get('cancelled', 0)
        if failed == 0:
            result.status = COMPLETED
        elif failed == len(result.outcomes):
            result.status = FAILED
        else:
            result.status = PARTIAL
        result.reason = '%s; %s' % (planned, ', '.join(
            '%d %s' % (n, s) for s, n in sorted(by_status.items())))
        if failed:
            errors = [o.error for o in result.outcomes.values()
                      if o.status in (FAILED, 'cancelled') and
                      getattr(o, 'error', None)]
            if errors:
                result.reason += '; first error: %s' % errors[0]
        if result.powered_on:
            result.reason += '; powered on %s' % ', '.join(result.powered_on)
        self._power_off_emptied(result, plan, data, stop)

    def _order_moves(self, rows, plan, skipped):
        """The rows in ``[consolidation] move_order``'s order
        (:mod:`memmut.consolidation.move_order`); with ``priority_drop``
        the underload evacuations that would wait for an overload move
        are recorded as skipped (into ``skipped``) and left out: the next
        round plans them again."""
        from memmut.globals import executor as executor_mod
        how = self.conf.consolidation.move_order
        if how == move_order.PLAN or not rows:
            return rows
        load = getattr(plan, 'load', None) or {}
        entries = [move_order.Entry(r.kind, r.source_host, r.dest_host,
                                    load.get(r.source_host, 0.0))
                   for r in rows]
        if how == move_order.PRIORITY_DROP:
            kept, dropped = move_order.drop_conflicting(entries)
            error = ('held back: the evacuation of %s shares a host with '
                     'an overload move of this round (move_order '
                     'priority_drop); planned again next round')
            for i in dropped:
                row = rows[i]
                msg = error % row.source_host
                self.db.update_migration(row.id, executor_mod.SKIPPED,
                                         error=msg,
                                         finished_at=self._clock())
                skipped[row.id] = executor_mod.Outcome(
                    executor_mod.SKIPPED, 0, msg, row.dest_host)
            rows = [rows[i] for i in kept]
            entries = [entries[i] for i in kept]
        return [rows[i] for i in move_order.order(entries, how)]

    def _power_on_activated(self, result, plan, data, executor, stop):
        """Switch on the sleeping hosts the plan places VMs on, waiting
        for their nova-compute; ``(migrations to run, {id: Outcome} of
        those cancelled because their destination did not come up)``."""
        from memmut.globals import executor as executor_mod
        wanted = [h for h in plan.activate if h in data.sleeping]
        failed, report = {}, {}
        for host in wanted:
            if stop.is_set():
                failed[host] = 'the controller is stopping'
                continue
            ok, message = _call_hook(self._power_on, host)
            wait = getattr(executor, 'wait_for_compute', None)
            if ok and wait is not None:
                ok, up = wait(host, self.conf.consolidation.power_on_wait)
                message = '%s; %s' % (message, up)
            report[host] = message
            if ok:
                result.powered_on.append(host)
                self.db.set_power_state(host, models.POWER_ON, message)
                LOG.info('Powered on host %s: %s', host, message)
            else:
                failed[host] = message
                LOG.error('Power-on of host %s failed: %s', host, message)
        if report:
            result.summary['power_on'] = report
        runnable, cancelled = [], {}
        for row in result.migrations:
            if row.dest_host not in failed:
                runnable.append(row)
                continue
            error = 'destination %s was not powered on: %s' % (
                row.dest_host, failed[row.dest_host])
            self.db.update_migration(row.id, 'cancelled', error=error,
                                     finished_at=self._clock())
            cancelled[row.id] = executor_mod.Outcome('cancelled', 0, error,
                                                     row.dest_host)
        return runnable, cancelled

    def _power_off_emptied(self, result, plan, data, stop):
        """Run the power-off hook for each host the round emptied and no
        later round (planning meanwhile, round_pacing clock) sends a VM
        to."""
        power_off = self._power_off
        if power_off is None:
            power_off = self._power_off = _default_power(self.conf, 'off')
        if not power_off:
            return
        sources = {}
        for row in result.migrations:
            sources.setdefault(row.source_host, []).append(row.id)
        if self.pacing == CLOCK:
            # No round plans while the hosts are checked and switched
            # off, so none sends a VM to a host going down.
            with self._lock:
                self._power_off_hosts(result, plan, data, stop, power_off,
                                      sources)
        else:
            self._power_off_hosts(result, plan, data, stop, power_off,
                                  sources)

    def _power_off_hosts(self, result, plan, data, stop, power_off,
                         sources):
        report = {}
        for host in plan.deactivate:
            ids = sources.get(host)
            if not ids or data.pinned.get(host) or stop.is_set():
                continue        # not emptied by this round, or keeps VMs
            if any(getattr(result.outcomes.get(i), 'status', None) !=
                   COMPLETED for i in ids):
                report[host] = 'kept on: not every VM left it'
                continue
            later = later_arrivals(self.db, host, result.round_id)
            if later:
                report[host] = ('kept on: a later round sends %d VM(s) '
                                'to it' % later)
                continue
            ok, message = _call_hook(power_off, host)
            report[host] = message
            if ok:
                result.powered_off.append(host)
                self.db.set_power_state(host, models.POWER_OFF, message)
                LOG.info('Powered off emptied host %s: %s', host, message)
            else:
                LOG.error('Power-off of emptied host %s failed: %s', host,
                          message)
        if report:
            result.summary['power_off'] = report
        if result.powered_off:
            result.reason += '; powered off %s' % ', '.join(
                result.powered_off)
