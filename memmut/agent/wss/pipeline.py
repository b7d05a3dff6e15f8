"""Per-VM working-set estimation and single-VM balloon actuation.

:class:`EstimationPipeline` runs once per agent poll. For every VM whose
round is due (``[badis] round_interval`` seconds since its last one) it
collects what the configured estimator (``[agent] wss_estimator``) needs
and produces an :class:`Estimate`:

``badis``
    access sampling (:mod:`memmut.agent.wss.sampling`, the "VMware" technique)
    + swap monitoring (memstore reuse distances, else balloon statistics)
    -> the V/VG/G state machine and max-average of
    :mod:`memmut.agent.wss.badis`.
    A VM no sampling back-end can see is sampled from the balloon
    statistics instead (used = available - unused - disk caches), and the
    source says so: ``badis/balloon_stats+balloon_stats``.
``balloon_stats``, ``balloon_stats_nocache``
    the guest's own figures (baselines).
``zballoond``
    Zballoond's shrink-until-swap loop driven from the host (active: the
    estimate carries the size to probe, ``probe_kb``). It starts from
    Committed_AS when a source of it is given (evaluation guests), else
    from the booked memory.
``selfballoon``
    self-ballooning on Committed_AS; needs a Committed_AS source (the test
    guests report it on their console): evaluation only.
``none``
    nothing.

Between two rounds of a VM the last estimate is returned again with
``fresh=False``. :class:`Actuator` is the single-VM feedback loop of
on-demand allocation: each fresh estimate sets the VM's balloon to its
demand plus headroom, rate-limited (:func:`memmut.agent.wss.badis.
balloon_target`), every change logged with its reason.
"""

import dataclasses
import os
import re
import time
import typing

from oslo_log import log as logging

from memmut.agent.wss import badis
from memmut.agent.wss import techniques
from memmut.agent.wss import sampling
from memmut.agent.wss.sampling import base as sampling_base
from memmut.agent.wss import swap_monitors as swapmod
from memmut.virt import driver as virt_driver

LOG = logging.getLogger(__name__)

ESTIMATORS = ('badis', 'balloon_stats', 'balloon_stats_nocache',
              'zballoond', 'selfballoon', 'none')
# Sources of the baselines (the first words of Estimate.source).
SOURCE_BALLOON_STATS = 'balloon_stats'
SOURCE_BALLOON_STATS_NOCACHE = 'balloon_stats_nocache'


@dataclasses.dataclass(frozen=True)
class Estimate:
    """One VM's working-set estimate, as the actuators consume it.

    ``wss_kb`` is this round's (instantaneous) estimate, ``max_avg_kb``
    WSS^max_avg, ``demand_kb`` what the VM should get before headroom,
    ``source`` a short description of where it came from
    (``badis/page_idle+memstore``, ``balloon_stats``...), ``mode`` the
    Badis state (V, VG, G) or None for other estimators. ``fresh`` is False
    when no round ran for the VM at this poll (the last estimate again);
    ``probe_kb`` is set by active estimators (Zballoond, self-ballooning)
    to the exact size they want to set.
    """
    uuid: str
    wss_kb: int
    max_avg_kb: int
    demand_kb: int
    source: str
    mode: typing.Optional[str] = None
    timestamp: float = 0.0
    fresh: bool = True
    probe_kb: typing.Optional[int] = None
    transition: typing.Optional[str] = None
    detail: str = ''
    # The inputs of max_avg_kb: a moving average of this many round
    # estimates, its maximum over this many seconds (None: the
    # estimator has no max-average, max_avg_kb is its estimate).
    max_avg_window: typing.Optional[int] = None
    max_avg_slice_s: typing.Optional[float] = None


def _mib(kb):
    return badis.fmt_kb(int(kb))


# ---------------------------------------------------------------------------
# Committed_AS, for the intrusive baselines (evaluation only)


_STAT = re.compile(r'^GUESTSTAT .*\bcommitted_as_kb=(\d+)', re.M)


class ConsoleCommittedAS:
    """Committed_AS as a test guest prints it on its serial console.

    memmut's test guests print ``GUESTSTAT ... committed_as_kb=N`` lines;
    ``path_for(vm)`` names the console log of a VM (None: unknown). Reading
    a guest's own figures is intrusive: the baselines that need it exist
    for comparisons only.
    """

    def __init__(self, path_for, tail_bytes=16384):
        self.path_for = path_for
        self.tail_bytes = tail_bytes

    def __call__(self, vm):
        path = self.path_for(vm)
        if not path:
            return None
        try:
            with open(path, 'rb') as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - self.tail_bytes))
                text = f.read().decode('utf-8', 'replace')
        except OSError:
            return None
        found = _STAT.findall(text)
        return int(found[-1]) if found else None


# ---------------------------------------------------------------------------
# The pipeline


@dataclasses.dataclass
class _VM:
    name: str
    last_round: float
    pid: typing.Optional[int] = None
    sampler: typing.Any = None
    decided: bool = False
    sampling: bool = False       # an interval is running
    interval_balloon: int = 0    # balloon size when the interval began
    calibrated: bool = False     # initial pinned correction calibrated
    kernel_extra_kb: typing.Optional[int] = None   # see _committed
    last_balloon: typing.Optional[int] = None      # at the last round
    last: typing.Optional[Estimate] = None
    zballoond: typing.Optional[techniques.ZballoondState] = None
    warned: set = dataclasses.field(default_factory=set)


class EstimationPipeline:
    """Produces an :class:`Estimate` per VM from the configured estimator.

    ``samplers`` (a :class:`sampling.SamplerChoice`), ``swap`` (a
    :class:`swap.SwapMonitors`) and ``committed`` (``f(vm)`` -> Committed_AS
    KiB or None) default to what the configuration asks for; tests and the
    benchmark pass their own. ``cpu_seconds`` accumulates the thread CPU
    time spent here (the hyper_over of the evaluation).
    """

    def __init__(self, conf, driver, samplers=None, swap=None,
                 committed=None, estimator=None):
        self.conf = conf
        self.driver = driver
        self.kind = estimator or conf.agent.wss_estimator
        if self.kind not in ESTIMATORS:
            raise ValueError('unknown WSS estimator %r (known: %s)'
                             % (self.kind, ', '.join(ESTIMATORS)))
        self.round_interval = conf.badis.round_interval
        # A round is due this much before round_interval has fully elapsed
        # (poll timing jitter), see [badis] round_tolerance.
        self.round_due = conf.badis.round_interval * (
            1.0 - conf.badis.round_tolerance)
        self.react = conf.badis.react_to_swapping
        self.badis = badis.BadisEstimator(badis.BadisParams.from_conf(conf))
        self.target_params = badis.TargetParams.from_conf(conf)
        self.samplers = samplers or sampling.SamplerChoice(conf, driver)
        self.swap = swap or swapmod.SwapMonitors(default_swap_monitors(conf))
        self.committed = committed
        self.cpu_seconds = 0.0
        self.rounds = 0
        self._vms = {}

    # -- bookkeeping -------------------------------------------------------

    def forget(self, uuid):
        self._vms.pop(uuid, None)
        self.badis.forget(uuid)
        self.samplers.forget(uuid)
        self.swap.forget(uuid)

    def _warn_once(self, st, key, level, msg, *args):
        if key not in st.warned:
            st.warned.add(key)
            LOG.log(level, msg, *args)

    # -- one poll ----------------------------------------------------------

    def estimate(self, vms, now):
        """Estimates of the VMs in ``vms`` (a dict uuid -> Estimate); VMs
        that are not running or have no estimate yet are left out."""
        if self.kind == 'none':
            return {}
        cpu0 = time.thread_time()
        out = {}
        live = set()
        try:
            for vm in vms:
                if vm.state != 'running':
                    continue
                live.add(vm.uuid)
                try:
                    est = self._poll_vm(vm, now)
                except Exception as e:
                    # One VM's bad data must not stop the others' estimates.
                    LOG.error('VM %s (%s): estimation round failed: %s: %s',
                              vm.name, vm.uuid, type(e).__name__, e)
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
            st = self._vms[vm.uuid] = _VM(name=vm.name, last_round=now)
            self._start(vm, st)
            return None
        if now - st.last_round < self.round_due:
            if self.kind == 'badis' and self.react and st.last is not None:
                est = self._react_badis(vm, st, now)
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
        est = getattr(self, '_round_' + self.kind)(vm, st, now)
        if est is not None:
            st.last = est
        elif st.last is not None:
            return dataclasses.replace(st.last, fresh=False)
        return est

    def _start(self, vm, st):
        self.swap.read(vm, vm.balloon_kb)      # prime the deltas
        if self.kind == 'badis':
            reserved = guest_reserved_kb(vm)
            if reserved > self.badis.params.initial_pinned_kb:
                # What the guest kernel reserved at boot is pinned by
                # definition (the balloon cannot take it, sampling sees only
                # its hot part): Badis starts with it as its correction
                # until it learns one in VG.
                self.badis.states[vm.uuid] = badis.BadisState(
                    pinned_kb=reserved)
                LOG.info('VM %s (%s): initial pinned-page correction %s '
                         '(guest kernel reservation: balloon actual - '
                         'available)', vm.name, vm.uuid, _mib(reserved))
            self._begin_sampling(vm, st)

    # -- access sampling -----------------------------------------------------

    def _sampler(self, vm, st):
        if not st.decided:
            st.pid = self.samplers.pid(vm)
            st.sampler = self.samplers.for_vm(vm, st.pid)
            st.decided = True
        return st.sampler

    def _sampling_failed(self, vm, st, e):
        self._warn_once(st, 'sampling-failed', logging.WARNING,
                        'VM %s (%s): access sampling with %s failed: %s; '
                        'choosing a back-end again next round', vm.name,
                        vm.uuid, st.sampler.name, e)
        self.samplers.reset(vm.uuid)
        st.decided = False
        st.sampling = False

    def _begin_sampling(self, vm, st):
        sampler = self._sampler(vm, st)
        if sampler is None:
            return
        try:
            sampler.begin(vm, st.pid)
            st.sampling = True
            st.interval_balloon = vm.balloon_kb
        except sampling_base.SamplerError as e:
            self._sampling_failed(vm, st, e)

    def _end_sampling(self, vm, st):
        sampler = st.sampler
        if sampler is None or not st.sampling:
            return None
        st.sampling = False
        try:
            return sampler.end(vm, st.pid)
        except sampling_base.SamplerError as e:
            self._sampling_failed(vm, st, e)
            return None

    # -- estimators ----------------------------------------------------------

    def _swap(self, vm, m_cur):
        reading = self.swap.read(vm, m_cur)
        if reading is None:
            reading = swapmod.SwapReading(False, None, 'none',
                                          'no swap monitor')
        return reading

    def _round_badis(self, vm, st, now):
        m_cur = vm.balloon_kb
        sample = self._end_sampling(vm, st)
        if st.sampler is not None:
            sampled = sample.estimate(m_cur) if sample else None
            sampler_name = st.sampler.name
        else:
            sampled = techniques.balloon_used(vm.memory_stats,
                                              include_caches=False)
            sampler_name = SOURCE_BALLOON_STATS
        if (sampled is not None and sample is not None and
                not st.calibrated):
            st.calibrated = True
            if sample.referenced_kb is not None:
                # Only from a back-end that reads every page: the error of
                # n sampled pages (about 5 % of booked at n = 100) would
                # go into the correction for good.
                self._calibrate(vm, sampled)
        # Geiger's WSS is the size the guest evicted at + m_ghost: when the
        # balloon grew since the last round, the evictions of the interval
        # happened at the smaller size (m_cur + m_ghost would count the
        # growth twice).
        evicted_at = m_cur if st.last_balloon is None else min(
            m_cur, st.last_balloon)
        # A guest made smaller since the last round (or the start of the
        # sampling interval) evicts because of it: its swap growth is ours.
        shrunk = (st.last_balloon is not None and
                  st.last_balloon > m_cur + 1024) or (
            sample is not None and st.interval_balloon > m_cur + 1024)
        st.last_balloon = m_cur
        reading = self._evicting_at(self._swap(vm, evicted_at), evicted_at,
                                    m_cur)
        # Swapping, Badis learns the pinned-page correction as m_cur -
        # sampled, which holds only if the guest had m_cur all interval
        # long: after a grow it had less for part of it (and may not need
        # all of the new size: only a lower bound), after a shrink it
        # touched pages it no longer has.
        steady = sample is not None and abs(st.interval_balloon -
                                            m_cur) < 1024
        grew_from = (st.interval_balloon if sample is not None and
                     st.interval_balloon < m_cur - 1024 else None)
        full = self._full(vm, m_cur)
        obs = badis.Observation(
            timestamp=now, m_cur_kb=m_cur, booked_kb=vm.booked_kb,
            sampled=sampled, ghost=reading.ghost, swapping=reading.swapping,
            steady=steady, grew_from_kb=grew_from, full=full,
            pressure_kb=_pressure_kb(reading, shrunk))
        r = self.badis.observe(vm.uuid, obs)
        if self.badis.state(vm.uuid).sampling_wanted(self.badis.params):
            self._begin_sampling(vm, st)
        elif st.sampler is not None:
            st.sampler.forget(vm.uuid)
        return self._badis_estimate(vm, r, reading, sampler_name, sampled,
                                    now)

    def _badis_estimate(self, vm, r, reading, sampler_name, sampled, now,
                        early=False):
        source = 'badis/%s+%s' % (sampler_name, reading.source)
        if r.transition:
            LOG.info('VM %s (%s): Badis %s', vm.name, vm.uuid, r.transition)
        LOG.debug('VM %s (%s): Badis %s round%s: sampled %s, swap %s (%s), '
                  'WSS %s (%s), max-avg %s, demand %s', vm.name, vm.uuid,
                  r.mode.value, ' (on swap activity)' if early else '',
                  _mib(sampled.wss_kb) if sampled else 'none',
                  'yes' if reading.swapping else 'no', reading.detail,
                  _mib(r.wss.wss_kb), r.wss.source, _mib(r.max_avg_kb),
                  _mib(r.demand_kb))
        return Estimate(uuid=vm.uuid, wss_kb=r.wss.wss_kb,
                        max_avg_kb=r.max_avg_kb, demand_kb=r.demand_kb,
                        source=source, mode=r.mode.value, timestamp=now,
                        transition=r.transition, detail=r.wss.source,
                        max_avg_window=self.badis.params.average_window,
                        max_avg_slice_s=self.badis.params.time_slice)

    def _react_badis(self, vm, st, now):
        """A Badis round run between two rounds, at the first poll that
        sees the VM swap (``[badis] react_to_swapping``), or None.

        Not after a shrink (since the last round or the start of the
        sampling interval: swap-ins that follow our own shrink say nothing
        of the working set, the regular round judges them with its
        sample); after a grow only while the guest has no free memory to
        speak of (pages read back once it has room are not a shortage) or
        when that grow answered a shortage.
        The
        sampling interval keeps running for the next regular round: this
        round has Geiger's reading only, so it learns no pinned-page
        correction."""
        m_cur = vm.balloon_kb
        if st.last_balloon is None:
            return None
        if m_cur < st.last_balloon - 1024 or (
                st.sampling and m_cur < st.interval_balloon - 1024):
            return None                   # shrunk: wait for the round
        grown = m_cur > st.last_balloon + 1024
        if grown and not self._full(vm, m_cur) and not (
                self.badis.state(vm.uuid).short_kb):
            # grown and the guest has room (reading memstore here would
            # start a new interval of reuse distances: left to the round).
            # Not after a grow that answered a shortage: the guest may
            # still lack memory, and the balloon statistics that say it
            # has room are up to a period old.
            return None
        # Geiger's WSS from the size the guest evicted at (see the round)
        evicted_at = min(m_cur, st.last_balloon)
        reading = self.swap.read(vm, evicted_at, keep_quiet=True)
        if reading is None:
            return None
        reading = self._evicting_at(reading, evicted_at, m_cur)
        pressure = _pressure_kb(reading, False)
        if not (reading.swapping or pressure):
            return None
        st.last_balloon = m_cur
        obs = badis.Observation(
            timestamp=now, m_cur_kb=m_cur, booked_kb=vm.booked_kb,
            sampled=None, ghost=reading.ghost, swapping=reading.swapping,
            steady=False, full=self._full(vm, m_cur), pressure_kb=pressure)
        r = self.badis.observe(vm.uuid, obs)
        wanted = self.badis.state(vm.uuid).sampling_wanted(self.badis.params)
        if wanted and not st.sampling:
            self._begin_sampling(vm, st)
        elif not wanted and st.sampling:
            st.sampling = False
            st.sampler.forget(vm.uuid)
        sampler_name = (st.sampler.name if st.sampler is not None
                        else SOURCE_BALLOON_STATS)
        return self._badis_estimate(vm, r, reading, sampler_name, None, now,
                                    early=True)

    def _evicting(self, reading):
        """Whether the guest wrote to swap over the reading's interval
        (at least ``[badis] swap_in_threshold_kb``): it has no free
        memory. Fresher than the balloon statistics' ``unused``, which
        QEMU refreshes once per statistics period."""
        return reading.out_kb >= self.conf.badis.swap_in_threshold_kb

    def _evicting_at(self, reading, evicted_at, m_cur):
        """Geiger's WSS from the current allocation when the balloon grew
        since the last round and the guest still evicted at the new size.

        m_ghost measures how much memory beyond what is resident now would
        have kept the pages read back: a reuse distance counts only the
        pages evicted after the page and still in swap, and all resident
        pages are more recent (LRU). When the guest has room after a grow,
        what is resident is less than the allocation, so the estimate
        starts from the size before the grow (``evicted_at``); once it
        evicts again it is full at ``m_cur``, and starting from the old
        size would hold it under its need until a whole new round of reuse
        distances (measured: 201 MiB for a true 236 over 1-1.5 s on a
        256 MiB guest after a 105 MiB rise)."""
        if (evicted_at >= m_cur or reading.ghost is None or
                not self._evicting(reading)):
            return reading
        ghost = techniques.TechniqueEstimate(
            reading.ghost.wss_kb + m_cur - evicted_at,
            reading.ghost.source)
        return dataclasses.replace(
            reading, ghost=ghost,
            detail='%s; %d KiB written at %s after a grow from %s: Geiger '
                   'from %s' % (reading.detail, reading.out_kb, _mib(m_cur),
                                _mib(evicted_at), _mib(m_cur)))

    def _full(self, vm, m_cur):
        """Whether the guest has no free memory to speak of (balloon
        statistics' ``unused`` at most ``[badis] pinned_max_free_fraction``
        of the allocation; True when it does not report it)."""
        free = (vm.memory_stats or {}).get('unused')
        return free is None or free <= (
            self.conf.badis.pinned_max_free_fraction * m_cur)

    def _calibrate(self, vm, sampled):
        """The initial pinned-page correction from the first sample
        (``[badis] calibrate_pinned``): what the guest says it uses
        (balloon ``actual`` - ``usable``) and sampling did not see."""
        state = self.badis.state(vm.uuid)
        if not self.conf.badis.calibrate_pinned or state.learned:
            return
        unseen = guest_unseen_kb(vm, sampled.wss_kb)
        if unseen > state.pinned_kb:
            self.badis.states[vm.uuid] = dataclasses.replace(
                state, pinned_kb=unseen)
            LOG.info('VM %s (%s): initial pinned-page correction %s '
                     '(guest memory in use, balloon actual - usable, not '
                     'seen by the first sample of %s)', vm.name, vm.uuid,
                     _mib(unseen), _mib(sampled.wss_kb))

    def _baseline(self, vm, now, include_caches, source):
        self._swap(vm, vm.balloon_kb)
        used = techniques.balloon_used(vm.memory_stats, include_caches)
        if used is None:
            return None
        wss = min(used.wss_kb, vm.booked_kb)
        return Estimate(uuid=vm.uuid, wss_kb=wss, max_avg_kb=wss,
                        demand_kb=wss, source=source, timestamp=now,
                        detail=used.source)

    def _round_balloon_stats(self, vm, st, now):
        return self._baseline(vm, now, True, SOURCE_BALLOON_STATS)

    def _round_balloon_stats_nocache(self, vm, st, now):
        return self._baseline(vm, now, False, SOURCE_BALLOON_STATS_NOCACHE)

    def _committed(self, vm):
        """Committed_AS in balloon terms: the guest's figure counts only
        user-space commitments inside its MemTotal, so the kernel's
        reservation (balloon actual - available) is added, as Badis's
        initial correction does, and the kernel's in-use memory seen at the
        first reading. None without a source."""
        if self.committed is None:
            return None
        try:
            committed = self.committed(vm)
        except Exception as e:
            LOG.debug('VM %s (%s): no Committed_AS: %s', vm.name, vm.uuid,
                      e)
            return None
        if committed is None:
            return None
        # In balloon terms the guest also needs its kernel's own memory,
        # which Committed_AS (user-space commitments) leaves out: what it
        # reserved at boot (actual - available) and what it uses inside
        # MemTotal (slab, page tables, an in-memory root file system). The
        # latter is taken once, at the first reading, as the in-use memory
        # of the balloon statistics (actual - usable) above Committed_AS +
        # the reservation (later readings are squeezed by the balloon the
        # baseline itself sets). Without it a guest whose Committed_AS is
        # small (W_i,d) was held about 25 MiB under its needs for good and,
        # with a low floor, OOM-killed.
        size = int(committed) + guest_reserved_kb(vm)
        st = self._vms.get(vm.uuid)
        if st is not None and st.kernel_extra_kb is None:
            stats = vm.memory_stats or {}
            actual = stats.get('actual', vm.balloon_kb)
            usable = stats.get('usable')
            if actual and usable is not None and usable <= actual:
                st.kernel_extra_kb = max(0, actual - usable - size)
        if st is not None and st.kernel_extra_kb:
            size += st.kernel_extra_kb
        return size

    def _round_zballoond(self, vm, st, now):
        reading = self._swap(vm, vm.balloon_kb)
        committed = self._committed(vm)
        origin = 'committed_as'
        if committed is None:
            committed = vm.booked_kb
            origin = 'booked'
            self._warn_once(st, 'no-committed', logging.INFO,
                            'VM %s (%s): Zballoond runs without '
                            'Committed_AS: each descent starts from the '
                            'booked memory', vm.name, vm.uuid)
        b = self.conf.badis
        floor = min(self.target_params.floor_kb, vm.booked_kb)
        prev = st.zballoond
        if prev is not None and prev.target_kb != vm.balloon_kb and (
                abs(prev.target_kb - vm.balloon_kb) >= 1024):
            # Someone else moved the balloon: descend from where it is.
            prev = dataclasses.replace(prev, target_kb=vm.balloon_kb)
        st.zballoond = techniques.zballoond_step(
            prev, committed, reading.swapping,
            decrease_fraction=b.zballoond_decrease_fraction,
            change_fraction=b.zballoond_change_fraction, floor_kb=floor,
            booked_kb=vm.booked_kb)
        z = st.zballoond
        return Estimate(uuid=vm.uuid, wss_kb=z.wss_kb, max_avg_kb=z.wss_kb,
                        demand_kb=z.wss_kb,
                        source='zballoond/%s+%s' % (origin, reading.source),
                        timestamp=now, probe_kb=z.target_kb,
                        detail='swapping' if reading.swapping else '')

    def _round_selfballoon(self, vm, st, now):
        self._swap(vm, vm.balloon_kb)
        committed = self._committed(vm)
        if committed is None:
            self._warn_once(st, 'no-committed', logging.ERROR,
                            'VM %s (%s): self-ballooning needs the guest\'s '
                            'Committed_AS, which this VM does not report: '
                            'no estimate', vm.name, vm.uuid)
            return None
        b = self.conf.badis
        floor = min(self.target_params.floor_kb, vm.booked_kb)
        target = techniques.selfballoon_target(
            vm.balloon_kb, committed, reserve_kb=b.selfballoon_reserve_kb,
            down_hysteresis=b.selfballoon_down_hysteresis, up_hysteresis=1,
            floor_kb=floor)
        goal = min(vm.booked_kb, committed + b.selfballoon_reserve_kb)
        probe = min(vm.booked_kb, target.wss_kb)
        return Estimate(uuid=vm.uuid, wss_kb=goal, max_avg_kb=goal,
                        demand_kb=goal, source='selfballoon/committed_as',
                        timestamp=now, probe_kb=probe)


def _pressure_kb(reading, shrunk):
    """The swap growth of a reading that counts as a shortage: at the
    monitor's rate or faster, at an allocation we did not shrink (a guest
    we shrank evicts because of it)."""
    if shrunk or not reading.pressure:
        return 0
    return reading.grown_kb


def guest_reserved_kb(vm, limit_fraction=0.5):
    """Memory the guest kernel keeps outside MemTotal, from the balloon
    statistics: ``actual`` (the balloon size) - ``available`` (the guest's
    MemTotal, which the balloon driver lowers as it inflates). 0 when the
    guest does not report both, or when the difference is implausible
    (more than ``limit_fraction`` of the balloon size)."""
    stats = vm.memory_stats or {}
    actual = stats.get('actual', vm.balloon_kb)
    available = stats.get('available')
    if not actual or available is None or available > actual:
        return 0
    reserved = actual - available
    return reserved if reserved <= limit_fraction * actual else 0


def guest_unseen_kb(vm, sampled_kb, limit_fraction=0.75):
    """Memory the guest reports in use that a sample of ``sampled_kb`` did
    not see: balloon ``actual`` - ``usable`` (``usable`` is the guest's
    MemAvailable) - ``sampled_kb``. 0 when the guest does not report
    both, or when the figure is implausible (more than ``limit_fraction``
    of the balloon size)."""
    stats = vm.memory_stats or {}
    actual = stats.get('actual', vm.balloon_kb)
    usable = stats.get('usable')
    if not actual or usable is None or usable > actual:
        return 0
    unseen = actual - usable - sampled_kb
    if unseen <= 0 or unseen > limit_fraction * actual:
        return 0
    return unseen


def default_swap_monitors(conf, memstore_read=None):
    """memstore's reuse distances when ``memstore_read`` (``f(vm)`` -> a
    :class:`memmut.memstore.reuse.ReuseReading` or None) is given, then the
    balloon statistics."""
    monitors = []
    if memstore_read is not None:
        monitors.append(swapmod.MemstoreSwapMonitor(
            memstore_read,
            growth_rate_kb=conf.badis.swap_growth_rate_kb))
    monitors.append(swapmod.BalloonStatsSwapMonitor.from_conf(conf))
    return monitors


# ---------------------------------------------------------------------------
# Single-VM actuation (on-demand allocation)


class Actuator:
    """Sets each VM's balloon from its fresh estimate (no sharing between
    VMs: that is local mutualization's job)."""

    def __init__(self, conf, driver):
        self.driver = driver
        self.params = badis.TargetParams.from_conf(conf)

    def plan(self, vm, est):
        """``(target_kb, reason)`` for one VM, or None."""
        if est is None or not est.fresh:
            return None
        if est.probe_kb is not None:
            floor = min(self.params.floor_kb, vm.booked_kb)
            target = min(vm.booked_kb, max(floor, est.probe_kb))
            if target == vm.balloon_kb:
                return None
            return target, '%s %s -> %s: %s probes this size' % (
                'grow' if target > vm.balloon_kb else 'shrink',
                _mib(vm.balloon_kb), _mib(target), est.source)
        return badis.balloon_target(est.demand_kb, vm.balloon_kb,
                                    vm.booked_kb, self.params, est.source)

    def step(self, vms, estimates):
        """Apply the plans; returns [(uuid, target_kb, reason)] made."""
        done = []
        for vm in vms:
            if vm.state != 'running':
                continue
            plan = self.plan(vm, estimates.get(vm.uuid))
            if plan is None:
                continue
            target, reason = plan
            try:
                self.driver.set_balloon(vm.uuid, target)
            except virt_driver.VMNotFound:
                continue
            except (virt_driver.InvalidBalloonTarget,
                    virt_driver.HypervisorUnavailable) as e:
                LOG.warning('VM %s (%s): balloon change failed (%s): %s',
                            vm.name, vm.uuid, reason, e)
                continue
            LOG.info('VM %s (%s): balloon %s', vm.name, vm.uuid, reason)
            done.append((vm.uuid, target, reason))
        return done
