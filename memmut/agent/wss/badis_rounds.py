"""Badis rounds: the collectors' readings turned into Badis observations.

The ``badis`` estimator of the pipeline. Every round it ends the VM's
access-sampling interval (:mod:`memmut.agent.wss.sampling`, the "VMware"
technique), reads its swap monitor (memstore reuse distances, else the
balloon statistics), builds an :class:`~.badis.Observation` and runs the
V/VG/G state machine and max-average of :mod:`memmut.agent.wss.badis`.
A VM no sampling back-end can see is sampled from the balloon statistics
instead (used = available - unused - disk caches), and the source says
so: ``badis/balloon_stats+balloon_stats``.
"""

import dataclasses

from oslo_log import log as logging

from memmut.agent.wss import badis
from memmut.agent.wss import estimate as estimate_mod
from memmut.agent.wss import estimators
from memmut.agent.wss import observation
from memmut.agent.wss import short_set
from memmut.agent.wss import techniques
from memmut.agent.wss import ws_curve
from memmut.agent.wss.sampling import base as sampling_base
from memmut import units

LOG = logging.getLogger(__name__)
Estimate = estimate_mod.Estimate

SOURCE_BALLOON_STATS = 'balloon_stats'
# end_round_on_thrashing: read back since a shrink, in multiples of what
# the shrink took, that ends the VM's round at once
THRASH_FACTOR = 2
SOURCE_WS_CURVE = 'ws-curve'
_mib = units.fmt_kb

# calibration_follow_rounds: rounds after the guest's memory in use last
# rose during which the balloon is held (a load rising by less than the
# statistics' noise a round is seen rising every other round)
LOAD_HOLD_ROUNDS = 2
# Calibration rounds deferred at most while the guest's statistics look
# older than the sample (in use < seen): a stats period ([agent]
# stats_period) shorter than a round refreshes them by the next round; a
# guest whose touched pages are mostly page cache (counted available)
# reads this way for good, and is calibrated after these rounds as before.
STALE_STATS_ROUNDS = 3
# The guest's memory in use counts as steady over a sampled interval when
# it moved by at most this much (KiB, or this fraction of the balloon):
# the statistics' own noise between two periods is about 1 MiB.
STEADY_IN_USE_KB = 4 * 1024
STEADY_IN_USE_FRACTION = 0.02


class BadisRounds(estimators.Estimator):
    """The Badis estimator (seed 004 §2.6) over the pipeline's collectors.
    """
    name = 'badis'

    def __init__(self, pipeline):
        super().__init__(pipeline)
        self.badis = badis.BadisEstimator(badis.BadisParams.from_conf(
            pipeline.conf))

    def forget(self, uuid):
        self.badis.forget(uuid)

    def start(self, vm, st):
        reserved = guest_reserved_kb(vm)
        if reserved > self.badis.params.initial_pinned_kb:
            # What the guest kernel reserved at boot is pinned by
            # definition (the balloon cannot take it, sampling sees only
            # its hot part): Badis starts with it as its correction, and
            # the correction never decays below it.
            self.badis.states[vm.uuid] = badis.BadisState.initial(
                self.badis.params, pinned_floor_kb=reserved)
            LOG.info('VM %s (%s): initial pinned-page correction %s '
                     '(guest kernel reservation: balloon actual - '
                     'available)', vm.name, vm.uuid, _mib(reserved))
        self._begin_sampling(vm, st)

    def round(self, vm, st, now):
        m_cur = vm.balloon_kb
        curve = self._curve_on(st)
        choice = None
        window_open = False
        warm_kb = warm_slope = None
        if curve:
            sample, choice = self._curve_round(vm, st, now)
        elif self._calibration_window(st):
            sample, window_open = self._window_round(vm, st)
        elif self._warm_window(vm, st):
            sample, warm_kb, warm_slope = self._warm_round(vm, st)
        else:
            sample = self._end_sampling(vm, st)
        if st.sampler is not None:
            if choice is not None:
                sampled = techniques.TechniqueEstimate(
                    min(choice.kb, m_cur), SOURCE_WS_CURVE)
            else:
                sampled = sample.estimate(m_cur) if sample else None
            sampler_name = st.sampler.name
        else:
            sampled = techniques.balloon_used(vm.memory_stats,
                                              include_caches=False)
            sampler_name = SOURCE_BALLOON_STATS
        if (sampled is not None and sample is not None and
                not st.calibrated and not window_open):
            if sample.referenced_kb is not None:
                # A back-end that reads every page. With the curve, what
                # was seen is the longest window read so far.
                seen = (max(r.kb for r in st.curve + st.curve_prev)
                        if curve and (st.curve or st.curve_prev)
                        else sampled.wss_kb)
                self._calibrate(vm, st, min(seen, m_cur), now)
            elif not curve:
                # Sampled pages (page_idle, kmod: KVM): what was seen is
                # uncertain (12.5 MiB of a 256 MiB guest 60 % touched at
                # n = 100), and the error goes into the correction.
                # calibration_sample_point: at the estimate (unbiased;
                # the default) or at the upper end of its 99.5 % interval
                # (unseen memory at least, which left the correction 2.6
                # standard errors short and the estimate under the
                # guest's need by as much: badis50). The statistics are
                # older than the sample only below its lower end. (The
                # estimate and its lower end are capped at m_cur already;
                # the upper end is at least the estimate.)
                high = None
                if self.conf.badis.calibration_sample_point == 'upper':
                    high = min(m_cur, techniques.sample_high(
                        sample.accessed, sample.sampled, sample.span_kb))
                self._calibrate(vm, st, sampled.wss_kb, now,
                                seen_range_kb=(sampled.low_kb, high))
            else:
                st.calibrated = True
        sizes = observation.BalloonSizes(
            m_cur_kb=m_cur, last_round_kb=st.last_balloon,
            interval_start_kb=(st.interval_balloon if sample is not None
                               else None))
        st.last_balloon = m_cur
        st.last_swap_in = swap_in_kb(vm)
        # against the interval's beginning, before the curve starts the
        # next interval below
        used_now = guest_used_kb(vm)
        used = steady_used_kb(used_now, st.used_at_begin, m_cur)
        rising = allocating(used_now, st.used_at_begin, m_cur)
        if curve and st.sampling:
            # the next round's interval, for Badis, starts now (the
            # accessed state was not cleared)
            st.interval_balloon = m_cur
            st.used_at_begin = guest_used_kb(vm)
        evicted_at = sizes.evicted_at_kb
        reading = self._evicting_at(
            self.pipeline.swap_reading(vm, evicted_at), evicted_at, m_cur)
        reading = self._filling(vm, reading, sampled, m_cur)
        waited = self._reentry_stall(reading)
        if waited:
            sampled = None        # it reads low while the guest waits
        obs = observation.observe(now, vm.booked_kb, sizes, sampled, reading,
                                  self._full(vm, m_cur),
                                  sampled_round=sample is not None,
                                  used_kb=used, allocating=rising,
                                  in_use_kb=guest_in_use_kb(vm),
                                  # no shrink on a correction not
                                  # calibrated yet (Observation.hold)
                                  hold=self._calibrating(st))
        if sample is not None and sampled is not None and not curve:
            self._follow_growth(vm, st, sample, sampled, obs, now)
        if (st.calibrated_in_use is not None and st.follow_rose and
                st.follow_quiet < LOAD_HOLD_ROUNDS):
            # the guest is loading: what it will use is not known yet,
            # and each round's estimate is already short of the next
            # (redis from boot, TCG: the correction followed it 107 ->
            # 123 MiB while the descent took 32 MiB a round, and the
            # guest swapped at 152 MiB before its load was over)
            obs = dataclasses.replace(
                obs, hold=True, hold_reason='the guest\'s memory in use '
                'is rising (the calibration follows its load)')
        if waited and not obs.hold:
            obs = dataclasses.replace(obs, hold=True, hold_reason=waited)
        if self._can_read_warm(st):
            obs = dataclasses.replace(obs, can_read_warm=True,
                                      warm_kb=warm_kb,
                                      warm_slope_kb_s=warm_slope)
        r = self.badis.observe(vm.uuid, obs)
        if self.badis.state(vm.uuid).sampling_wanted(self.badis.params):
            if not st.sampling:
                self._begin_sampling(vm, st)
        elif st.sampler is not None:
            self._stop_sampling(vm, st)
        if choice is not None:
            LOG.debug('VM %s (%s): working-set curve: %s at w = %.1f s, '
                      'slope %s KiB/s (bound %d KiB/s, %s), %d points%s',
                      vm.name, vm.uuid, _mib(choice.kb), choice.window_s,
                      'n/a' if choice.slope_kb_s is None else
                      '%.0f' % choice.slope_kb_s,
                      self.conf.badis.swapin_bound_kb_s,
                      'met' if choice.bounded else 'not met within the '
                      'horizon', choice.points,
                      ', running cycle alone' if choice.running_only
                      else '')
        return self._badis_estimate(vm, r, reading, sampler_name, sampled,
                                    now)

    def _calibrating(self, st):
        return (self.conf.badis.calibrate_pinned and
                (self.conf.badis.calibrate_rounds > 1 or
                 st.stale_calibrations > 0 or self._windowed(st)) and
                st.sampler is not None and not st.calibrated)

    # -- the calibration window (calibrate_window_rounds) -----------------

    def _windowed(self, st):
        return (self.conf.badis.calibrate_window_rounds > 1 and
                getattr(st.sampler, 'can_peek', False))

    def _calibration_window(self, st):
        """Whether this round's sample belongs to the first
        calibration's window: a read that spans
        ``calibrate_window_rounds`` rounds, the accessed state not cleared
        between them.

        Why: the calibration counts what the guest uses and the sample
        did not see as pinned. A working set swept more slowly than one
        round is seen only in part by one round's sample, and the rest
        was counted as pinned (the paged guest model at 512 MiB: W2 from
        boot, 193 MiB calibrated from a 1 s sample of a 320 MiB sweep,
        72 MiB at 256 MiB; in production a working set reused over more
        than a minute). A read over several rounds sees what they
        touched in all."""
        return (self.conf.badis.calibrate_pinned and st.sampling and
                st.sampler is not None and not st.calibrated and
                self._windowed(st))

    def _window_round(self, vm, st):
        """(sample, still open): the window's cumulative read, ended at
        its last round (the next round begins a new interval)."""
        st.calib_window += 1
        if st.calib_window >= self.conf.badis.calibrate_window_rounds:
            st.calib_window = 0
            return self._end_sampling(vm, st), False
        try:
            return st.sampler.peek(vm, st.pid), True
        except sampling_base.SamplerError as e:
            self._sampling_failed(vm, st, e)
            return None, True

    @staticmethod
    def _read_on(vm, st, end):
        """The sampling interval's read: ended (the accessed state
        cleared) or not (a read across rounds goes on)."""
        return (st.sampler.end(vm, st.pid) if end
                else st.sampler.peek(vm, st.pid))

    # -- reads over several rounds before a probe ----------------------
    # (calibration_probe_warm_rounds; badis._probe_warm says why)

    def _can_read_warm(self, st):
        # (ws_curve reads across rounds already, and its rounds are its
        # own: no read of this kind with it)
        return (self.conf.badis.calibration_probe_warm_rounds > 1 and
                st.sampler is not None and
                getattr(st.sampler, 'can_peek', False) and
                not self._curve_on(st))

    def _warm_window(self, vm, st):
        """Whether this round belongs to a read over several rounds:
        one is running, or Badis asked for one at the last round."""
        if not (st.sampling and self._can_read_warm(st)):
            st.warm_round = 0
            return False
        return (st.warm_round > 0 or
                self.badis.state(vm.uuid).warm_wanted)

    def _warm_round(self, vm, st):
        """(sample, warm KiB, slope KiB/s) of a round of the read: its
        first round is an ordinary one-round sample read without
        clearing; the rounds after it give Badis no sample (a cumulative
        read is no one-round working set); the last ends the interval
        and gives what was touched beyond the first round and how fast
        memory not touched before was still being touched at the end
        (:func:`ws_curve.end_slope`)."""
        st.warm_round += 1
        last = st.warm_round >= self.conf.badis.calibration_probe_warm_rounds
        try:
            sample = self._read_on(vm, st, end=last)
        except sampling_base.SamplerError as e:
            st.warm_round = 0
            self._sampling_failed(vm, st, e)
            return None, None, None
        if last:
            st.sampling = False
            st.warm_round = 0
        if sample is None:
            st.warm_round = 0
            return None, None, None
        seen = sample.estimate(vm.balloon_kb).wss_kb
        if st.warm_round == 1:
            st.warm_first_kb = seen
            st.warm_reads = []
        st.warm_reads.append(ws_curve.read_of(sample))
        if st.warm_round == 1:
            return sample, None, None
        if not last:
            return None, None, None
        warm = max(0, seen - st.warm_first_kb)
        slope = ws_curve.end_slope(st.warm_reads, sample.span_kb,
                                   self.conf.badis.ws_curve_confidence)
        st.warm_reads = []
        LOG.info('VM %s (%s): %s touched over %d rounds, %s of it after '
                 'the first (the part of the pinned-page correction a '
                 'probe leaves alone), new memory touched at %s/s at the '
                 'end', vm.name, vm.uuid, _mib(seen),
                 self.conf.badis.calibration_probe_warm_rounds,
                 _mib(warm), '?' if slope is None else _mib(int(slope)))
        return None, warm, slope

    # -- the working-set curve (ws_curve) ---------------------------------

    def _curve_on(self, st):
        return (self.conf.badis.ws_curve and st.sampler is not None and
                getattr(st.sampler, 'can_peek', False))

    def peek(self, vm, st, now):
        """A poll between two rounds: one more point of the working-set
        curve (ws_curve)."""
        if not (st.sampling and self._curve_on(st)):
            return
        self._peek_short(vm, st, now)
        # Between rounds only at geometric times after the clear (one
        # poll, 2, 4, ...): the curve uses no more, and each read costs
        # as much as a round's (a walk of smaps, a scan of n pages).
        age = now - st.curve_t0
        if age < st.curve_next:
            return
        st.curve_next = 2 * age
        try:
            sample = st.sampler.peek(vm, st.pid)
        except sampling_base.SamplerError as e:
            self._sampling_failed(vm, st, e)
            return
        if sample is not None:
            st.curve.append(ws_curve.read_of(sample))

    def _curve_round(self, vm, st, now):
        """The round's read of the running cycle (its end, and a new
        cycle, every ``ws_curve_rounds`` rounds) and the allocation the
        curve asks for: (sample, choice), (None, None) without an
        interval."""
        if not st.sampling:
            return None, None
        st.curve_rounds += 1
        done = st.curve_rounds >= self.conf.badis.ws_curve_rounds
        try:
            sample = self._read_on(vm, st, end=done)
        except sampling_base.SamplerError as e:
            self._sampling_failed(vm, st, e)
            return None, None
        if sample is None:
            return None, None
        st.curve_next = max(st.curve_next, 2 * (now - st.curve_t0))
        st.curve.append(ws_curve.read_of(sample))
        # half a cycle, as the rounds are due (round_tolerance early)
        half_s = (0.5 * self.conf.badis.ws_curve_rounds *
                  self.pipeline.round_due)
        choice = ws_curve.choose_cycle(
            st.curve, st.curve_prev, self.conf.badis.swapin_bound_kb_s,
            half_s,
            span_kb=(sample.span_kb if sample.referenced_kb is None
                     else None),
            confidence=self.conf.badis.ws_curve_confidence,
            fall_detect=self.conf.badis.ws_curve_fall_detect,
            fall_min_age_s=2 * self.pipeline.round_due)
        fall = self._short_round(vm, st)
        if fall is not None:
            LOG.info('VM %s (%s): working-set curve: the short-cycle set '
                     'read at most %s touched in the last %.1f s, under the '
                     'curve\'s %s at that age: the working set fell; '
                     'estimate %s -> %s, new cycle', vm.name, vm.uuid,
                     _mib(fall.recent_kb), fall.age_s,
                     _mib(fall.reference_kb), _mib(choice.kb),
                     _mib(min(choice.kb, fall.kb)))
            choice = dataclasses.replace(
                choice, kb=min(choice.kb, fall.kb), running_only=True,
                recent_fall=True)
            # The cycle that saw the old set stands in for the previous
            # one, capped, until the new one is half a cycle old; it is
            # no reference for the next test.
            st.sampling = False
            st.curve_prev = short_set.capped(st.curve_prev or st.curve,
                                             fall.kb)
            st.curve_ref = []
            st.curve = []
        elif done:
            st.sampling = False
            st.curve_prev = st.curve_ref = ws_curve.monotone(st.curve)
            st.curve = []
        elif (st.short_on and
              st.short_rounds >= self.conf.badis.ws_curve_short_rounds):
            self._begin_short(vm, st, now)
        return sample, choice

    # -- the short-cycle set (ws_curve_short_rounds) ----------------------

    def _short_wanted(self, vm, st):
        if not (self.conf.badis.ws_curve_short_rounds and
                self._curve_on(st)):
            return False
        if not getattr(st.sampler, 'can_short', False):
            self.pipeline.warn_once(
                st, 'short-set', logging.WARNING,
                'VM %s (%s): [badis] ws_curve_short_rounds has no effect: '
                'the %s back-end cannot keep a second set of pages beside '
                'the curve\'s (it clears the accessed state of the whole '
                'process); the curve follows a fall at its next clear',
                vm.name, vm.uuid, st.sampler.name)
            return False
        return True

    def _begin_short(self, vm, st, now):
        st.short = []
        st.short_rounds = 0
        st.short_t0 = now
        st.short_next = 0.0
        try:
            st.sampler.begin_short(vm, st.pid,
                                   self.conf.badis.ws_curve_short_pages)
            st.short_on = True
        except sampling_base.SamplerError as e:
            self._short_failed(vm, st, e)

    def _short_failed(self, vm, st, error):
        # the curve goes on without the short set
        st.short_on = False
        self.pipeline.warn_once(
            st, 'short-set-failed', logging.WARNING,
            'VM %s (%s): the short-cycle set with %s failed: %s; the '
            'curve goes on without it', vm.name, vm.uuid, st.sampler.name,
            error)

    def _read_short(self, vm, st):
        try:
            sample = st.sampler.peek_short(vm, st.pid)
        except sampling_base.SamplerError as e:
            self._short_failed(vm, st, e)
            return None
        if sample is not None:
            st.short.append(ws_curve.read_of(sample))
        return sample

    def _peek_short(self, vm, st, now):
        """A poll's read of the short set, at its geometric ages (as the
        curve's): the reads its test compares from half its window on."""
        if not st.short_on:
            return
        age = now - st.short_t0
        if age < st.short_next:
            return
        st.short_next = 2 * age
        self._read_short(vm, st)

    def _short_round(self, vm, st):
        """The round's read of the short set and the fall it shows
        (:func:`short_set.fell`), or None."""
        if not st.short_on:
            return None
        sample = self._read_short(vm, st)
        if sample is None:
            return None
        st.short_rounds += 1
        k = self.conf.badis.ws_curve_short_rounds
        return short_set.fell(
            st.short, st.curve_ref or st.curve, sample.span_kb,
            k * self.pipeline.round_due, self.conf.badis.swapin_bound_kb_s,
            self.conf.badis.ws_curve_confidence)

    def _stop_sampling(self, vm, st):
        st.sampling = False
        st.curve = []
        st.curve_prev = []
        st.curve_ref = []
        st.short_on = False
        st.sampler.forget(vm.uuid)

    def round_now(self, vm, st, now):
        """``[badis] end_round_on_thrashing``: whether the balloon was
        made smaller since the VM's last round and the guest has read
        back from swap since then more than ``THRASH_FACTOR`` times what
        the balloon took (and at least ``swap_in_threshold_kb``).

        Why: :meth:`react` leaves the swap-ins that follow a shrink to the
        regular round, which judges them with its sample (a guest's first
        reclaim after a load reads back part of what it wrote, and that
        says nothing of its working set). A shrink below the working set
        (a calibration probe's step, a shrink on an estimate that was
        short) makes the guest read back the same pages over and over:
        more than the balloon took. On the bench's 1 s rounds that lasts
        a second; on production's 60 s rounds it lasted the whole round
        on the paged guest model (load-then-idle, a probe 123 MiB below
        the working set: 5.7 GiB read back in one round, KVM's costs).
        The round then comes at the first poll that sees it, and decides
        as it would have at its time."""
        if (not self.conf.badis.end_round_on_thrashing or
                st.last_balloon is None or st.last_swap_in is None):
            return False
        sizes = observation.BalloonSizes(
            m_cur_kb=vm.balloon_kb, last_round_kb=st.last_balloon,
            interval_start_kb=st.interval_balloon if st.sampling else None)
        now_kb = swap_in_kb(vm)
        # (a counter that went down: the guest rebooted)
        if (not sizes.shrunk or now_kb is None or
                now_kb < st.last_swap_in):
            return False
        taken = sizes.shrunk_from_kb - vm.balloon_kb
        read = now_kb - st.last_swap_in
        if read > max(THRASH_FACTOR * taken,
                      self.conf.badis.swap_in_threshold_kb):
            LOG.info('VM %s (%s): Badis round ended early: the guest read '
                     'back %s from swap since the balloon took %s from it '
                     '([badis] end_round_on_thrashing)', vm.name, vm.uuid,
                     _mib(read), _mib(taken))
            return True
        return False

    def react(self, vm, st, now):
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
        sizes = observation.BalloonSizes(
            m_cur_kb=m_cur, last_round_kb=st.last_balloon,
            interval_start_kb=st.interval_balloon if st.sampling else None)
        if sizes.shrunk:
            return None                   # shrunk: wait for the round
        if sizes.grown and not self._full(vm, m_cur) and not (
                self.badis.state(vm.uuid).short_kb):
            # grown and the guest has room (reading memstore here would
            # start a new interval of reuse distances: left to the round).
            # Not after a grow that answered a shortage: the guest may
            # still lack memory, and the balloon statistics that say it
            # has room are up to a period old.
            return None
        # Geiger's WSS from the size the guest evicted at (see the round)
        evicted_at = sizes.evicted_at_kb
        reading = self.pipeline.swap.read(vm, evicted_at, keep_quiet=True)
        if reading is None:
            return None
        reading = self._evicting_at(reading, evicted_at, m_cur)
        if not (reading.swapping or observation.pressure_kb(reading, False)):
            return None
        st.last_balloon = m_cur
        st.last_swap_in = swap_in_kb(vm)
        obs = observation.observe(now, vm.booked_kb, sizes, None, reading,
                                  self._full(vm, m_cur), sampled_round=False,
                                  hold=self._calibrating(st))
        r = self.badis.observe(vm.uuid, obs)
        wanted = self.badis.state(vm.uuid).sampling_wanted(self.badis.params)
        if wanted and not st.sampling:
            self._begin_sampling(vm, st)
        elif not wanted and st.sampling:
            self._stop_sampling(vm, st)
        sampler_name = (st.sampler.name if st.sampler is not None
                        else SOURCE_BALLOON_STATS)
        return self._badis_estimate(vm, r, reading, sampler_name, None, now,
                                    early=True)

    def _badis_estimate(self, vm, r, reading, sampler_name, sampled, now,
                        early=False):
        source = 'badis/%s+%s' % (sampler_name, reading.source)
        if r.transition:
            LOG.info('VM %s (%s): Badis %s', vm.name, vm.uuid, r.transition)
        for event in r.events:
            LOG.info('VM %s (%s): Badis %s', vm.name, vm.uuid, event)
        LOG.debug('VM %s (%s): Badis %s round%s: sampled %s, swap %s (%s), '
                  'WSS %s (%s), max-avg %s, demand %s, pinned %s%s',
                  vm.name, vm.uuid,
                  r.mode.value, ' (on swap activity)' if early else '',
                  _mib(sampled.wss_kb) if sampled else 'none',
                  'yes' if reading.swapping else 'no', reading.detail,
                  _mib(r.wss.wss_kb), r.wss.source, _mib(r.max_avg_kb),
                  _mib(r.demand_kb), _mib(r.pinned_kb),
                  ' (not capped by the guest\'s statistics: %s)'
                  % r.used_bound_skip if r.used_bound_skip else '')
        state = self.badis.state(vm.uuid)
        return Estimate(uuid=vm.uuid, wss_kb=r.wss.wss_kb,
                        max_avg_kb=r.max_avg_kb, demand_kb=r.demand_kb,
                        source=source, mode=r.mode.value, timestamp=now,
                        transition=r.transition, detail=r.wss.source,
                        max_avg_window=self.badis.params.average_window,
                        # the VM's own (time_slice_max lengthens it)
                        max_avg_slice_s=state.slice.length(
                            self.badis.params.slice_params),
                        bad_shrinks=r.bad_shrinks, pinned_kb=r.pinned_kb,
                        pinned_note=state.pinned_note,
                        pinned_at=state.pinned_at,
                        shrink_floor_kb=state.floor.kb,
                        shrink_floor_note=state.floor_note,
                        shrink_floor_at=state.floor_at, probe_kb=r.probe_kb,
                        events=tuple(r.events), held=r.held)

    def _filling(self, vm, reading, sampled, m_cur):
        """The reading with its re-entries counted after all when this
        round's sample fills the allocation (:func:`badis.
        fills_allocation`): a working set that rises into data the guest
        left long ago reads it back like a hot set that moves onto it,
        but it touches all it has while it does (W4's rise in the paged
        guest model: 1.079 -> 1.109 vm_over with them left out)."""
        if reading.with_reentries is None or sampled is None:
            return reading
        if not badis.fills_allocation(sampled.wss_kb,
                                      self.badis.state(vm.uuid).pinned_kb,
                                      m_cur, self.badis.params):
            return reading
        full = reading.with_reentries
        return dataclasses.replace(
            full, detail='%s; %d KiB of re-entries counted: the sample '
                         'fills the allocation' % (full.detail,
                                                   reading.reentry_kb))

    def _reentry_stall(self, reading):
        """Why this round's sample is no measurement when the guest read
        back re-entries (:mod:`.reentry`: left out of the reading, no
        shortage) at ``[badis] stall_swapin_rate_kb`` or faster over it,
        else None: it waited for them, and its sample reads low."""
        limit = self.conf.badis.stall_swapin_rate_kb
        if not (reading.reentry_kb and reading.seconds and limit):
            return None
        rate = reading.reentry_kb / reading.seconds
        if rate < limit:
            return None
        return ('the guest read back %s of pages it evicted long ago '
                '(re-entries, %d KiB/s): its sample is no measurement'
                % (_mib(reading.reentry_kb), rate))

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
        distances."""
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

    def _calibrate(self, vm, st, seen_kb, now, seen_range_kb=None):
        """The initial pinned-page correction from the first sample
        (``[badis] calibrate_pinned``): what the guest says it uses
        (balloon ``actual`` - ``usable``) and sampling did not see; with
        ``calibrate_rounds`` > 1 the median over that many rounds.
        ``seen_range_kb``: for a sample of pages, the (lower, upper) ends
        of what it saw (:func:`techniques.sample_low`,
        :func:`techniques.sample_high`): statistics below the lower end
        are older than the sample, and the unseen memory is taken from
        the upper end, so that a sample that under-read does not raise
        the correction."""
        rounds = self.conf.badis.calibrate_rounds
        state = self.badis.state(vm.uuid)
        if not self.conf.badis.calibrate_pinned or state.learned:
            st.calibrated = True
            return
        in_use = guest_in_use_kb(vm)
        # (a median over several rounds absorbs a reading taken while
        # the guest loaded; a single one is kept for good)
        seen_low, seen_high = seen_range_kb or (seen_kb, None)
        why = (calibration_unsafe(in_use,
                                  st.in_use_at_begin if rounds == 1 else None,
                                  seen_low, vm.balloon_kb) or
               unseen_implausible(vm, seen_kb if seen_high is None
                                  else seen_high))
        # statistics older than the sample may read so for good (page
        # cache); memory in use moving ends with the load
        limit = (STALE_STATS_ROUNDS if in_use is not None and
                 in_use < seen_low
                 else self.conf.badis.calibration_defer_rounds)
        if why and st.stale_calibrations < limit:
            # Read as they are, such statistics make nothing look unseen
            # and the correction stays at its floor for good (W2/W4 of
            # bench_badis, issue 20). Wait for the next round; the
            # balloon is held meanwhile (_calibrating).
            st.stale_calibrations += 1
            LOG.info('VM %s (%s): pinned-page calibration deferred: the '
                     'guest reports %s in use, %s (%d of %d rounds)',
                     vm.name, vm.uuid, _mib(in_use), why,
                     st.stale_calibrations, limit)
            return
        seen_note = _mib(seen_kb)
        if seen_high is not None:
            seen_note = 'at most %s (%s estimated from sampled pages)' % (
                _mib(seen_high), _mib(seen_kb))
            seen_kb = seen_high
        unseen = guest_unseen_kb(vm, seen_kb)
        if rounds > 1:
            st.calibrations.append(unseen)
            st.calibrated = len(st.calibrations) >= rounds
            value = max(state.pinned_floor_kb,
                        ws_curve.robust_offset(st.calibrations))
            if value == state.pinned_kb:
                return
            self._calibrated(vm, state, value, now,
                             'calibrated: median of %d samples of guest '
                             'memory in use not seen by sampling (last '
                             'saw %s)' % (len(st.calibrations), seen_note))
            LOG.info('VM %s (%s): initial pinned-page correction %s -> %s '
                     '(median over %d of %d calibration rounds of guest '
                     'memory in use, balloon actual - usable, not seen by '
                     'sampling)', vm.name, vm.uuid, _mib(state.pinned_kb),
                     _mib(value), len(st.calibrations), rounds)
            return
        st.calibrated = True
        st.calibrated_in_use = guest_in_use_kb(vm)
        st.follow_quiet = 0
        st.follow_rose = False
        if unseen > state.pinned_kb:
            # Not a floor: it also counts data the guest loaded and left
            # cold, so it decays like a learned correction
            # ([badis] pinned_decay).
            self._calibrated(vm, state, unseen, now,
                             'calibrated: guest memory in use not seen by '
                             'the first sample of %s' % seen_note)
            LOG.info('VM %s (%s): initial pinned-page correction %s '
                     '(guest memory in use, balloon actual - usable, not '
                     'seen by the first sample of %s); it decays while '
                     'the VM does not swap', vm.name, vm.uuid,
                     _mib(unseen), seen_note)

    def _follow_growth(self, vm, st, sample, sampled, obs, now):
        """``[badis] calibration_follow_rounds``: the first-sample
        calibration again, raising only, in a quiet round whose guest
        reports more memory in use than when it was last read for it,
        until it has not for that many rounds.

        Why: the calibration reads what the guest uses and one round's
        sample does not see at one moment; a guest that goes on loading
        data it touches less often than once a round (redis filled by
        its clients from boot: 20 000 values written over 14 s on TCG)
        adds memory no sample sees and the correction does not count.
        The estimate stayed at 88-94 MiB while the guest came to use 160,
        the descent went down to 117 MiB, and the guest swapped out 23
        MiB of its data and read them back over the next 40 s
        (tests/benchmarks/results/badis51/redis120). Raised on the guest's
        own figures like the first calibration, the correction counts the
        new data as that counted the old; the probes test it the same
        way (data written and left cold is given back). In a round with
        no swap activity, in V, with no probe running; only while the
        guest loads: memory taken later, in steps the sample sees only
        in part, is no calibration's business. (After the one-round
        calibration only: ``calibrate_rounds`` > 1 takes a median over
        its rounds, which a load moves through, and is not followed.)"""
        ref = st.calibrated_in_use
        quiet = self.conf.badis.calibration_follow_rounds
        if not quiet or not st.calibrated or ref is None:
            return
        in_use = guest_in_use_kb(vm)
        state = self.badis.state(vm.uuid)
        m_cur = vm.balloon_kb
        # (the balloon may move meanwhile: inflating takes as much from
        # the guest's total as from its available memory, so what it
        # reports in use rises only by what it allocates; a descent that
        # paces down every round is when this matters)
        if (in_use is None or in_use <= ref or obs.short or
                state.mode != badis.Mode.V or
                state.probe_pinned_kb is not None or
                not _moved(in_use, ref, m_cur)):
            st.follow_quiet += 1
            if st.follow_quiet >= quiet:
                # the load is over: later growth is the sample's and
                # the shortage rules' (the paged guest model at 512 MiB,
                # W5 with its memory kept: followed at every step up,
                # the correction held the steps down's cold data: its
                # error 12.8 -> 21.5 %, saved 23.9 -> 11.8 %)
                st.calibrated_in_use = None
                LOG.info('VM %s (%s): the guest\'s memory in use has not '
                         'risen for %d rounds: the pinned-page calibration '
                         'no longer follows it', vm.name, vm.uuid, quiet)
            return
        st.follow_quiet = 0
        st.follow_rose = True
        seen = sampled.wss_kb
        if sample.referenced_kb is None:
            # sampled pages: the upper end of what was seen, as the
            # calibration takes it (an under-read raises nothing)
            seen = min(m_cur, techniques.sample_high(
                sample.accessed, sample.sampled, sample.span_kb))
        st.calibrated_in_use = in_use
        unseen = guest_unseen_kb(vm, seen)
        if unseen <= state.pinned_kb:
            return
        note = ('calibrated again: guest memory in use rose from %s to %s '
                'and %s of it was not seen by the sample of %s'
                % (_mib(ref), _mib(in_use), _mib(unseen), _mib(seen)))
        # the moving average's estimates were sampled with the lower
        # correction while the same data was already there
        self.badis.states[vm.uuid] = badis.raise_pinned(
            state, unseen, vm.booked_kb, rebase=True, pinned_at=now,
            pinned_calibrated_kb=unseen, pinned_unconfirmed=True,
            pinned_note=note)
        LOG.info('VM %s (%s): pinned-page correction %s -> %s: %s',
                 vm.name, vm.uuid, _mib(state.pinned_kb), _mib(unseen),
                 note)

    def _calibrated(self, vm, state, value, now, note):
        """Store a calibrated correction (``[badis] calibration_rebase``:
        with the moving average's estimates raised by its rise)."""
        rebase = self.conf.badis.calibration_rebase
        self.badis.states[vm.uuid] = badis.raise_pinned(
            state, value, vm.booked_kb, rebase=rebase, pinned_at=now,
            pinned_calibrated_kb=value, pinned_unconfirmed=True,
            pinned_note=note)
        if rebase and value > state.pinned_kb and state.recent:
            LOG.info('VM %s (%s): the %d estimates of the moving average '
                     'raised by the calibration\'s %s (sampled with the '
                     'lower correction)', vm.name, vm.uuid,
                     len(state.recent), _mib(value - state.pinned_kb))

    def _sampler(self, vm, st):
        if not st.decided:
            st.pid = self.pipeline.samplers.pid(vm)
            st.sampler = self.pipeline.samplers.for_vm(vm, st.pid)
            st.decided = True
        return st.sampler

    def _sampling_failed(self, vm, st, e):
        self.pipeline.warn_once(
            st, 'sampling-failed', logging.WARNING,
            'VM %s (%s): access sampling with %s failed: %s; choosing a '
            'back-end again next round', vm.name, vm.uuid, st.sampler.name,
            e)
        self.pipeline.samplers.reset(vm.uuid)
        st.decided = False
        st.sampling = False
        st.curve = []
        st.curve_prev = []
        st.curve_ref = []
        st.short_on = False

    def _begin_sampling(self, vm, st):
        sampler = self._sampler(vm, st)
        if sampler is None:
            return
        try:
            sampler.begin(vm, st.pid)
            st.sampling = True
            st.calib_window = 0
            if not st.calibrated:
                st.in_use_at_begin = guest_in_use_kb(vm)
            st.used_at_begin = guest_used_kb(vm)
            st.interval_balloon = vm.balloon_kb
            st.curve = []
            st.curve_rounds = 0
            st.curve_t0 = st.last_round
            st.curve_next = 0.0
        except sampling_base.SamplerError as e:
            self._sampling_failed(vm, st, e)
            return
        st.short_on = False
        if self._short_wanted(vm, st):
            # after every clear of the curve (its begin drops the set)
            self._begin_short(vm, st, st.last_round)

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


def _actual_less(vm, key):
    """Balloon ``actual`` less the balloon statistic ``key``; None when
    the guest does not report both or they are inconsistent."""
    stats = vm.memory_stats or {}
    actual = stats.get('actual', vm.balloon_kb)
    value = stats.get(key)
    if not actual or value is None or value > actual:
        return None
    return actual - value


def guest_in_use_kb(vm):
    """Memory the guest reports in use: balloon ``actual`` - ``usable``
    (MemAvailable); None when unknown."""
    return _actual_less(vm, 'usable')


def swap_in_kb(vm):
    """The guest's swap-in counter (balloon statistics ``swap_in``, KiB
    read from swap since boot); None when it does not report it."""
    return (vm.memory_stats or {}).get('swap_in')


def guest_used_kb(vm):
    """Memory the guest has not free: balloon ``actual`` - ``unused``
    (MemFree; caches and cold data count as used); None when unknown."""
    return _actual_less(vm, 'unused')


def _moved(now_kb, then_kb, balloon_kb):
    """Whether guest memory figures moved between two readings more than
    STEADY_IN_USE_KB or STEADY_IN_USE_FRACTION of the balloon."""
    return abs(now_kb - then_kb) > max(
        STEADY_IN_USE_KB, STEADY_IN_USE_FRACTION * (balloon_kb or 0))


def steady_used_kb(used_kb, used_at_begin_kb, balloon_kb):
    """``used_kb`` when it describes the whole sampled interval (known at
    its beginning and end, and not moved in between: the guest was not
    allocating or freeing while the sample ran), else None."""
    if used_kb is None or used_at_begin_kb is None:
        return None
    if _moved(used_kb, used_at_begin_kb, balloon_kb):
        return None
    return used_kb


def allocating(used_kb, used_at_begin_kb, balloon_kb):
    """Whether the guest's memory not free rose during the sampled
    interval by more than the noise of its statistics (see
    :func:`_moved`): it was taking memory while the sample ran."""
    if used_kb is None or used_at_begin_kb is None:
        return False
    return (used_kb > used_at_begin_kb and
            _moved(used_kb, used_at_begin_kb, balloon_kb))


def calibration_unsafe(in_use_kb, in_use_at_begin_kb, seen_kb, balloon_kb):
    """Why the guest's statistics cannot calibrate the pinned-page
    correction against a sample that saw ``seen_kb`` touched, or None.

    * In use below what sampling saw: the statistics predate the sample
      (a workload that allocated within the last stats period).
    * In use moved during the sampled interval (from
      ``in_use_at_begin_kb``) by more than STEADY_IN_USE_KB or
      STEADY_IN_USE_FRACTION of the balloon: the guest was allocating or
      freeing while the sample ran, so the sample and the statistics
      (each of an unknown moment of the interval) describe different
      states; a workload caught mid-allocation gives a partial sample and
      partial statistics whose difference is not the unseen memory.
    """
    if in_use_kb is None:
        return None
    if in_use_kb < seen_kb:
        return ('less than the %s sampling saw (statistics older than the '
                'sample)' % _mib(seen_kb))
    if in_use_at_begin_kb is not None:
        if _moved(in_use_kb, in_use_at_begin_kb, balloon_kb):
            return ('%s when the sampled interval began (memory in use '
                    'moving while sampling)' % _mib(in_use_at_begin_kb))
    return None


# More of the balloon than this unseen by a sample is not believed: a
# sample that missed most of what the guest uses.
UNSEEN_LIMIT_FRACTION = 0.75


def _unseen(vm, sampled_kb):
    """(unseen KiB or None, the balloon's ``actual`` size)."""
    in_use = guest_in_use_kb(vm)
    actual = (vm.memory_stats or {}).get('actual', vm.balloon_kb)
    return (None if in_use is None else in_use - sampled_kb), actual


def unseen_implausible(vm, sampled_kb):
    """Why the memory a sample of ``sampled_kb`` left unseen is not to be
    believed, or None.

    Why a reason to wait: a one-round sample of a set reused more slowly
    than a round (TCG, a 40 MiB window moving every second over 160 MiB)
    sees one window in some rounds and more in others; read in a round
    that saw little, 200 of 242 MiB in use were unseen, over the limit,
    and the calibration was made with nothing (1 run in 6), where the
    next round's read calibrated 149-190 MiB. After
    ``calibration_defer_rounds`` such rounds the figure is taken at the
    limit (:func:`guest_unseen_kb`)."""
    unseen, actual = _unseen(vm, sampled_kb)
    if unseen is None or unseen <= UNSEEN_LIMIT_FRACTION * actual:
        return None
    return ('%s of it not seen by a sample of %s, more than %d%% of the '
            'balloon (a sample that missed most of it)'
            % (_mib(unseen), _mib(sampled_kb),
               round(100 * UNSEEN_LIMIT_FRACTION)))


def guest_unseen_kb(vm, sampled_kb):
    """Memory the guest reports in use that a sample of ``sampled_kb`` did
    not see: balloon ``actual`` - ``usable`` (``usable`` is the guest's
    MemAvailable) - ``sampled_kb``; 0 when the guest does not report
    both. A figure over UNSEEN_LIMIT_FRACTION of the balloon size (the
    calibration waited for a better one: :func:`unseen_implausible`) is
    taken at that limit.

    Why the limit and not 0: the calibration is a correction the
    calibration probe walks down when it counts too much, at the cost of
    memory not saved for a while; counted as nothing, the estimate is
    the sample alone and the balloon goes down into what the guest uses
    (TCG, stop 54: a moving hot set from boot whose one-round samples
    all saw 43 of 242 MiB in use, 198 MiB unseen against a 192 MiB
    limit: calibrated nothing, the balloon descended and the guest read
    back 22 MiB within 3 s, vm_over 1.036; in the run beside it a sample
    of 47 MiB left 190 MiB unseen, under the limit: calibrated, 1.008)."""
    unseen, actual = _unseen(vm, sampled_kb)
    if unseen is None or unseen <= 0:
        return 0
    return min(unseen, int(UNSEEN_LIMIT_FRACTION * actual))
