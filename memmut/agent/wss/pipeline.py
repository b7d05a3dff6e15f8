"""Per-VM working-set estimation, once per agent poll.

:class:`EstimationPipeline` runs at every agent poll. For every VM whose
round is due (``[badis] round_interval`` seconds since its last one) it
asks the configured estimator (``[agent] wss_estimator``, a plug-in of
:mod:`memmut.agent.wss.estimators`) for an
:class:`~memmut.agent.wss.estimate.Estimate`; between two rounds the last
estimate is returned again with ``fresh=False``. The pipeline owns the
collectors the estimators read: the VMs' access-sampling back-ends
(:mod:`memmut.agent.wss.sampling`) and swap monitors
(:mod:`memmut.agent.wss.swap_monitors`).
"""

import dataclasses
import math
import time
import typing

from oslo_log import log as logging

from memmut.agent.wss import estimate as estimate_mod
from memmut.agent.wss import reentry
from memmut.agent.wss import sampling
from memmut.agent.wss import swap_monitors as swapmod
from memmut import plugins

LOG = logging.getLogger(__name__)

Estimate = estimate_mod.Estimate


@dataclasses.dataclass
class TrackedVM:
    """The pipeline's record of one VM (estimators keep their per-VM
    state here)."""
    name: str
    last_round: float
    pid: typing.Optional[int] = None
    sampler: typing.Any = None
    decided: bool = False
    sampling: bool = False       # an interval is running
    interval_balloon: int = 0    # balloon size when the interval began
    calibrated: bool = False     # initial pinned correction calibrated
    kernel_extra_kb: typing.Optional[int] = None   # see baselines
    last_balloon: typing.Optional[int] = None      # at the last round
    # the guest's swap_in counter (KiB) at the last round
    last_swap_in: typing.Optional[int] = None
    last: typing.Optional[Estimate] = None
    zballoond: typing.Any = None  # evaluation.baselines.ZballoondState
    # ws_curve: reads of the running cycle (ws_curve.Read), the last
    # complete cycle's, rounds since the clear; the first-sample
    # calibration's readings (calibrate_rounds)
    curve: list = dataclasses.field(default_factory=list)
    curve_prev: list = dataclasses.field(default_factory=list)
    curve_rounds: int = 0
    curve_t0: float = 0.0          # when the running cycle's clear was
    curve_next: float = 0.0        # age of its next read between rounds
    # the reference of the short set's test: the last complete cycle's
    # reads ([] before one, and after a fall, when curve_prev is capped)
    curve_ref: list = dataclasses.field(default_factory=list)
    # ws_curve_short_rounds: the short set's reads since its clear,
    # rounds since, when that clear was, the age of its next poll read
    short: list = dataclasses.field(default_factory=list)
    short_on: bool = False
    short_rounds: int = 0
    short_t0: float = 0.0
    short_next: float = 0.0
    calibrations: list = dataclasses.field(default_factory=list)
    stale_calibrations: int = 0  # calibration rounds deferred (stale stats)
    # calibrate_window_rounds: rounds the running calibration window has
    # read without clearing the accessed state
    calib_window: int = 0
    # calibration_probe_warm_rounds: rounds into the read over several
    # rounds (0: none running) and its first round's reading (KiB)
    warm_round: int = 0
    warm_first_kb: int = 0
    # calibration_follow_rounds: what the guest reported in use when the
    # pinned-page correction was last calibrated (None: not calibrated
    # from the guest's figures, or no longer followed)
    calibrated_in_use: typing.Optional[int] = None
    # and rounds since it last rose (calibration_follow_rounds)
    follow_quiet: int = 0
    # whether it rose since the calibration
    follow_rose: bool = False
    # its reads so far (ws_curve.Read), for the slope at its end
    warm_reads: list = dataclasses.field(default_factory=list)
    # what the guest reported in use when the sampled interval began
    # (until the pinned-page correction is calibrated)
    in_use_at_begin: typing.Optional[int] = None
    # memory the guest had not free (balloon actual - unused) when the
    # sampled interval began ([badis] pinned_used_bound)
    used_at_begin: typing.Optional[int] = None
    warned: set = dataclasses.field(default_factory=set)
    # spread_rounds: when sampling begins (None once it has)
    start_at: typing.Optional[float] = None


class EstimationPipeline:
    """Produces an :class:`Estimate` per VM from the configured estimator.

    ``samplers`` (a :class:`sampling.SamplerChoice`), ``swap`` (a
    :class:`swap_monitors.SwapMonitors`) and ``committed`` (``f(vm)`` ->
    Committed_AS KiB or None, for the evaluation baselines) default to what
    the configuration asks for; tests and the benchmarks pass their own.
    ``cpu_seconds`` accumulates the thread CPU time spent here (the
    hyper_over of the evaluation).
    """

    def __init__(self, conf, driver, samplers=None, swap=None,
                 committed=None, estimator=None):
        self.conf = conf
        self.driver = driver
        self.kind = estimator or conf.agent.wss_estimator
        self.round_interval = conf.badis.round_interval
        # A round is due this much before round_interval has fully elapsed
        # (poll timing jitter), see [badis] round_tolerance.
        self.round_due = conf.badis.round_interval * (
            1.0 - conf.badis.round_tolerance)
        self.react = conf.badis.react_to_swapping
        self.spread = conf.badis.spread_rounds
        self.poll_interval = conf.agent.poll_interval
        self.samplers = samplers or sampling.SamplerChoice(conf, driver)
        self.swap = swap or swapmod.SwapMonitors(default_swap_monitors(conf))
        self.committed = committed
        self.cpu_seconds = 0.0
        self.rounds = 0
        self._vms = {}
        self._failed = set()         # (uuid, error type) already logged
        self.estimator = plugins.load(plugins.WSS_ESTIMATORS,
                                      self.kind)(self)

    @property
    def badis(self):
        """The Badis state machines (None unless the estimator is Badis).
        """
        return getattr(self.estimator, 'badis', None)

    # -- bookkeeping -------------------------------------------------------

    def forget(self, uuid):
        self._vms.pop(uuid, None)
        self._failed = {k for k in self._failed if k[0] != uuid}
        self.estimator.forget(uuid)
        self.samplers.forget(uuid)
        self.swap.forget(uuid)

    def warn_once(self, st, key, level, msg, *args):
        """Log ``msg`` once per VM and ``key``."""
        if key not in st.warned:
            st.warned.add(key)
            LOG.log(level, msg, *args)

    def swap_reading(self, vm, m_cur):
        """The VM's swap reading for the round that just ended (a quiet one
        when no monitor has anything)."""
        reading = self.swap.read(vm, m_cur)
        if reading is None:
            reading = swapmod.SwapReading(False, None, 'none',
                                          'no swap monitor')
        return reading

    # -- one poll ----------------------------------------------------------

    def estimate(self, vms, now):
        """Estimates of the VMs in ``vms`` (a dict uuid -> Estimate); VMs
        that are not running or have no estimate yet are left out."""
        if not self.estimator.active:
            return {}
        cpu0 = time.thread_time()
        out = {}
        live = set()
        try:
            for vm in vms:
                if vm.stale:
                    # unreadable this poll: keep what is known, estimate
                    # again when it can be read
                    live.add(vm.uuid)
                    continue
                if vm.state != 'running':
                    continue
                live.add(vm.uuid)
                try:
                    est = self._poll_vm(vm, now)
                except Exception as e:
                    # One VM's bad data must not stop the others' estimates;
                    # logged once per VM and kind of error.
                    kind = (vm.uuid, type(e).__name__)
                    if kind not in self._failed:
                        self._failed.add(kind)
                        LOG.error('VM %s (%s): estimation round failed: '
                                  '%s: %s', vm.name, vm.uuid,
                                  type(e).__name__, e)
                    est = None
                if est is not None:
                    out[vm.uuid] = est
            for gone in set(self._vms) - live:
                self.forget(gone)
        finally:
            self.cpu_seconds += time.thread_time() - cpu0
        return out

    def _poll_vm(self, vm, now):
        st = self._vms.get(vm.uuid)
        if st is None:
            # First sight: start collecting; the first estimate comes one
            # round later, when there is an interval to read.
            delay = self.start_delay(now) if self.spread else 0.0
            st = self._vms[vm.uuid] = TrackedVM(name=vm.name, last_round=now)
            if delay > 0:
                st.start_at = now + delay
                LOG.info('VM %s (%s): sampling starts in %.0f s, at the '
                         'poll the fewest rounds fall on '
                         '([badis] spread_rounds)', vm.name, vm.uuid, delay)
                return None
            self._start(vm, st)
            return None
        if st.start_at is not None:
            if now + self.poll_interval / 2 < st.start_at:
                return None
            st.start_at = None
            st.last_round = now
            self._start(vm, st)
            return None
        if (now - st.last_round < self.round_due and
                not self.estimator.round_now(vm, st, now)):
            self.estimator.peek(vm, st, now)
            if self.react and st.last is not None:
                est = self.estimator.react(vm, st, now)
                if est is not None:
                    st.last_round = now
                    self.rounds += 1
                    st.last = est
                    return est
            if st.last is None:
                return None
            return dataclasses.replace(st.last, fresh=False)
        st.last_round = now
        self.rounds += 1
        est = self.estimator.round(vm, st, now)
        if est is not None:
            st.last = est
        elif st.last is not None:
            return dataclasses.replace(st.last, fresh=False)
        return est

    def start_delay(self, now):
        """How long a VM first seen at ``now`` waits before its sampling
        starts: a whole number of polls, chosen so that its rounds fall on
        the poll that the fewest tracked VMs' rounds fall on (0 when rounds
        are not longer than a poll, or that poll is the current one)."""
        poll = self.poll_interval
        # rounds come at the first poll past round_due: this period
        period = poll * max(1, math.ceil(self.round_due / poll - 1e-9))
        slots = int(round(period / poll))
        if slots <= 1:
            return 0.0
        # where each tracked VM's rounds fall within the period
        phases = [((st.start_at if st.start_at is not None
                    else st.last_round) - now) % period
                  for st in self._vms.values()]

        def crowd(slot):
            at = slot * poll
            return sum(1 for ph in phases
                       if min(abs(ph - at), period - abs(ph - at))
                       < poll / 2)
        return min(range(slots), key=lambda s: (crowd(s), s)) * poll

    def _start(self, vm, st):
        self.swap.read(vm, vm.balloon_kb)      # prime the deltas
        self.estimator.start(vm, st)


def default_swap_monitors(conf, memstore_read=None, clock=time.monotonic):
    """memstore's reuse distances when ``memstore_read`` (``f(vm)`` -> a
    :class:`memmut.memstore.reuse.ReuseReading` or None) is given, then the
    balloon statistics; ``clock`` times their intervals (a simulation's
    own time)."""
    monitors = []
    if memstore_read is not None:
        b = conf.badis
        monitors.append(swapmod.MemstoreSwapMonitor(
            memstore_read, growth_rate_kb=b.swap_growth_rate_kb,
            clock=clock, reentries=reentry.Params(
                horizon_s=b.reentry_horizon_rounds * b.round_interval,
                limit_kb_s=b.swapin_bound_kb_s,
                window_s=b.reentry_window_rounds * b.round_interval)))
    monitors.append(swapmod.BalloonStatsSwapMonitor.from_conf(conf, clock))
    return monitors
