"""Badis: per-VM working-set estimation state machine (seed 004 §2.6).

Badis combines two non-intrusive estimators that see opposite situations:
page sampling ("VMware", sees a VM wasting memory, S_more) and Geiger's
ghost buffer (sees a VM lacking memory, S_less). Per VM it runs a 3-state
machine (§2.6.1):

``V``
    sampling only. The estimate is the sampled WSS plus the pinned-page
    correction. → ``VG`` when that estimate comes within
    ``[badis] vg_threshold`` of the current allocation.
``VG``
    both. The estimate is the sampled one while there is no swap activity,
    Geiger's when there is. While swapping the true WSS is the whole
    allocation, so what sampling misses then is pinned pages: the
    correction is learned here. → ``G`` after ``vg_to_g_rounds``
    consecutive rounds with swap activity.
``G``
    Geiger only. The estimate is Geiger's while swapping, else the current
    allocation (Geiger cannot see below it). → ``V`` after
    ``g_to_v_rounds`` consecutive rounds without swap activity; the round
    of that transition is a V round, estimated by sampling.

On top, §2.6.2: the moving average of the last ``n`` estimates and its
maximum over the last time slice ``s``, WSS^max_avg, which sizes the VM and
is reported to the consolidator.

Choices where the seed is silent (see doc/source/badis.rst):

* V → VG also when swap activity is seen in V. Geiger is off in V, but the
  balloon statistics' swap counters cost nothing; without this a VM whose
  pinned pages keep its sampled WSS under the threshold would be shrunk
  round after round into swapping without Badis noticing. Not, though, in
  a round whose interval saw the balloon move (``steady`` false) while the
  sampled WSS stays under the threshold: a guest reclaiming what the
  balloon just took evicts a few hot pages with the cold ones and reads
  them back, which says nothing of its working set; a real shortage keeps
  swapping at the new, steady size and is seen one round later.
* Swap growth under pressure counts as swap activity
  (:attr:`Observation.short`): a guest that, at an allocation we did not
  shrink and with no free memory, put more in swap than it read back is
  evicting to make room for memory it touches. In a rising working set
  that comes first (new pages push older ones out; Geiger's swap-ins
  follow only when those are touched again), and the allocation plus the
  growth is a lower bound of the need where Geiger has nothing yet.
* VG → V after ``vg_to_v_rounds`` consecutive rounds without swap activity
  in which the corrected sampled WSS is below the threshold again. The
  seed's machine has no exit from VG other than G; without one a VM that
  came close to its allocation once would run both estimators forever.
* The pinned-page correction is stored in KiB (pinned pages do not scale
  with the balloon), taken from the latest swapping VG round whose
  sampling interval ran at one allocation (:attr:`Observation.steady`: a
  round in which the balloon moved compares the sample with a size the
  guest did not have all along; one in which it grew gives a lower bound,
  the size the interval began at - sampled, which may raise it), only
  when the guest has no free memory to speak of (:attr:`Observation.full`:
  pages evicted during an earlier shortage and read back once memory is
  plentiful again do not mean that all of m_cur is in use), and applied
  wherever the sampled estimate is used (V and VG without swap activity),
  capped at the current allocation. :attr:`BadisState.learned` says it
  was learned; until then the caller may set an initial value
  (``initial_pinned_kb``, or one calibrated from the balloon statistics,
  see :mod:`memmut.agent.wss.pipeline`).
* Issue 13: the pinned-page correction is re-estimated in every quiet
  round sampled at a steady allocation (:func:`_recheck_pinned`: at most
  m_cur - sampled, and what is above its floor, the pages known to be
  pinned, decays by ``pinned_decay``), so it can fall as well as rise;
  and a round with swap-ins, or one of the hold rounds after it or after
  a shrink followed by swap-ins, never lowers a sampled estimate below
  the allocation the guest swapped at (:func:`_guard`; such shrinks are
  counted in :attr:`Result.bad_shrinks`, and each one doubles the hold).
* Sampling restarts in G one round before G → V can happen (after
  ``g_to_v_rounds`` - 1 quiet rounds), so that the transition round, a V
  round, has a fresh sample instead of holding Geiger's last estimate (the
  allocation) for one more round. Sampling stays off in G while the VM
  swaps, as the seed has it.
* Consecutive swapping rounds accumulate: while the VM keeps swapping, a
  round's estimate does not lower the previous round's shortage estimate
  (:attr:`BadisState.short_kb`): its reuse distances were measured over a
  shorter interval (the agent runs a round as soon as it sees swap
  activity), over part of the new working set only, or from pages evicted
  at the smaller size before a grow (doc/source/badis.rst has the
  measurement). The first round without swap activity ends the run.
* Counters of consecutive rounds restart on every transition: they count
  rounds spent in the current state.
* WSS^max_avg is the maximum of the moving average over a sliding window
  of ``s`` seconds ending now (grows at once, shrinks after ``s``).
* :attr:`Result.demand_kb`, what the allocation should cover, is
  WSS^max_avg, except in a round whose estimate came from Geiger (the VM
  is short of memory now): then the larger of the two, so a shortage is
  served at once instead of being averaged away.

Everything here is pure: :func:`step` maps (state, observation, params) to
(new state, result); :class:`BadisEstimator` only keeps one state per VM.
"""

import dataclasses
import enum
import typing

from memmut.agent.wss import adaptive_slice
from memmut.agent.wss import hindsight
from memmut.agent.wss import shrink_floor as floors
from memmut.agent.wss import slow_start
from memmut.agent.wss import swapin_budget
from memmut.agent.wss import techniques
from memmut import sizing
from memmut import units

MiB = units.KIB_PER_MIB

# Sources of estimates Badis makes itself (the others: techniques.SOURCE_*).
SOURCE_SWAPPING = 'swapping'         # swapping, no Geiger estimate: m_cur
SOURCE_HOLD = 'hold'                 # no data this round: last estimate
SOURCE_GEIGER_IDLE = 'geiger-idle'   # G without swap activity: m_cur
SOURCE_SWAP_GROWTH = 'swap-growth'   # m_cur + what went to swap
SOURCE_SHRINK_GUARD = 'shrink-guard'  # sampled, held at m_cur (guard)
SOURCE_SHRINK_FLOOR = 'shrink-floor'  # sampled, raised to the floor
SOURCE_PROBE = 'probe'               # a probe's swap-ins: the estimate before

# Estimates that mean "short of memory now".
SHORTAGE_SOURCES = frozenset((techniques.SOURCE_GEIGER,
                              techniques.SOURCE_SWAP_STATS,
                              SOURCE_SWAPPING, SOURCE_SWAP_GROWTH))


class Mode(str, enum.Enum):
    V = 'V'
    VG = 'VG'
    G = 'G'


def _from_options(cls, group, **others):
    """A parameter dataclass whose fields are options of ``group``
    (``others``: the fields that are not)."""
    return cls(**{f.name: others[f.name] if f.name in others
                  else getattr(group, f.name)
                  for f in dataclasses.fields(cls)})


@dataclasses.dataclass(frozen=True)
class BadisParams:
    """Tuning of the state machine and the max-average (``[badis]``)."""
    vg_threshold: float = 0.95
    # stop 51: V -> VG also needs the estimate to have eaten into the
    # headroom its allocation holds above it (see _close; 0: off)
    vg_headroom_fraction: float = 0.8
    vg_to_g_rounds: int = 2
    g_to_v_rounds: int = 2
    vg_to_v_rounds: int = 2
    average_window: int = 5
    time_slice: float = 3600.0
    initial_pinned_kb: int = 0
    pinned_decay: float = 0.25
    shrink_swapin_window: float = 180.0
    shrink_hold_rounds: int = 2
    shrink_hold_max_rounds: int = 4
    # issue 13 mechanisms: off by default, see doc/source/badis.rst
    # (measured: both regress W1-W5 on the benchmark guests)
    pinned_relearn: bool = False
    shrink_guard: bool = False
    pinned_decay_evidence: bool = True
    shrink_noise_filter: bool = True
    # issue 13, session 3: no correction learned from a sample taken while
    # the guest stalled on swap (see stalled())
    stall_filter: bool = False
    stall_swapin_rate_kb: int = 4096
    # issue 13, session 3: test a lower correction with the balloon
    # instead of lowering the estimate (see _probe())
    pinned_probe: bool = False
    pinned_probe_step_kb: int = 16 * MiB
    # stop 35: the probe for a calibrated correction only, until a
    # probe or a VG round confirms it (see _probe()); on since stop 36
    # (badis24)
    calibration_probe: bool = True
    # stop 49: the calibration probe only while the correction is at
    # least this fraction of the booking above its floor (0: always;
    # 0.15 since stop 50)
    calibration_probe_min_fraction: float = 0.15
    # stop 50: a calibration probe's step at most this fraction of the
    # correction's gap above its floor (1: no cap; see _probe)
    calibration_probe_max_gap_fraction: float = 1.0
    # stop 50 (on since stop 51): the calibration probe goes on after a
    # confirmation, its wait doubled by each probe answered by swap-ins
    # (see _probes)
    calibration_reprobe: bool = True
    # stop 56: with calibration_reprobe, no probe after this many in a
    # row answered by swap-ins at the same correction until the sampled
    # working set falls by a step (0: no limit; see _answered_enough)
    calibration_reprobe_answers: int = 2
    # stop 61 (on by default since): before a calibration probe, read
    # what the guest touches over this many rounds; the part of the
    # correction it touched is not probed (0: off; see _probe_warm)
    calibration_probe_warm_rounds: int = 4
    # stop 62: with it, no probe either when memory the read had not seen
    # before was still being touched faster than swapin_bound_kb_s at its
    # end (see _probe_warm)
    calibration_probe_warm_slope: bool = True
    # stop 90: instead, a series of probes after a read releases at most
    # what its slope says would be read back at swapin_bound_kb_s (see
    # _probe_warm; off: on TCG it cost a paced database 23-38 % of its
    # service time for under a point of memory in 120 s)
    calibration_probe_warm_budget: bool = False
    # the swap-in rate (KiB/s) a working set's definition allows (the
    # working-set curve's bound, and the read's slope above)
    swapin_bound_kb_s: int = 1024
    # stop 44: a probe is answered by swap-ins only once the guest read
    # back this fraction of what it evicted since the probe began (0:
    # any swap activity; see _probe())
    probe_readback_fraction: float = 0.0
    # stop 68 (badis68, on by default since): swap activity within
    # probe_burst_s seconds of the first of a probe that is the guest's
    # first reclaim does not answer it (0: any does), and
    # (probe_rise_written) a reuse distance within what the guest wrote
    # since the probe began is the probe's, not a rise (see _probe())
    probe_burst_s: float = 3.0
    probe_rise_written: bool = True
    # issue 13, session 7: no shrinking again into an allocation shown to
    # swap (see shrink_floor); on since stop 33 (badis21)
    shrink_floor: bool = True
    shrink_floor_fall: float = 0.15
    shrink_floor_rounds: int = 60
    # stop 37 (badis25): the floor lowered step by step (see
    # shrink_floor; 0: off), and swap-ins at a steady allocation set or
    # raise it too
    shrink_floor_step_kb: int = 16 * MiB
    shrink_floor_step_rounds: int = 4
    shrink_floor_steady: bool = True
    # a shortage at a floor that held the demand raises it this far above
    # the allocation that swapped, then twice the last (0: off); 64 MiB
    # since stop 41 (issue 13: -0.04 to -0.06 vm_over paired to no raise
    # in two sessions' lock slots, W1-W5 not worse)
    shrink_floor_raise_kb: int = 64 << 10
    # every shortage of a live floor keeps the lower reference sample,
    # not only one that raised it (stop 40)
    shrink_floor_low_reference: bool = False
    # stop 43: swap-ins after a floor's step down take the step back
    shrink_floor_step_back: bool = False
    # the floor a lower bound of the estimate too (stop 34; off: W1-W5)
    shrink_floor_estimate: bool = False
    # only a floor a later shortage confirmed (shrink_floor.tested):
    # the suite's gain without W1-W5's loss (stop 39, badis27)
    shrink_floor_estimate_confirmed: bool = True
    # stop 73: the floor in the estimate with its raise above where the
    # guest swapped (off: shrink_floor.evidence_kb; the demand keeps it)
    shrink_floor_estimate_raise: bool = False
    # a lifted floor holds (and steps down) only while the demand sits
    # at it (stop 40, badis28: the hot set better, W5 worse; off)
    shrink_floor_hold_at_demand: bool = False
    # stop 46: a floor a step down of which swapped neither steps down nor
    # lapses while the guest uses it (shrink_floor._held_in_use)
    shrink_floor_hold_in_use: bool = False
    # stop 47: swap-ins at a floor that held the demand raise it, whatever
    # the round (run on swap activity, Geiger reading a rise)
    shrink_floor_held_shortage: bool = False
    # stop 47: a floor's step down doubles only if the last one moved the
    # balloon (shrink_floor._moved)
    shrink_floor_step_moved: bool = False
    # a VM's own time slice, lengthened while shortages recur (see
    # adaptive_slice), at most this many time slices (at most 1: off), or
    # time_slice_max seconds when that is set. 15 (60 s on the bench's
    # 4 s slice) lowered W1-W5's and the pattern suite's vm_over on TCG
    # and the model (stop 74); the default since stop 75, once a
    # shortage under a balloon the host took (Algorithm 1 lending the
    # VM's memory) no longer counts as a recurrence
    time_slice_max_slices: float = 15.0
    time_slice_max: float = 0.0
    time_slice_factor: float = 1.5
    # stop 77: the first shortage after the balloon shrunk from what the
    # VM had at its first round recurs (adaptive_slice, from_first)
    time_slice_from_first: bool = False
    # stop 77: the working set back at its high after a fall keeps the
    # slice long (adaptive_slice, reuse): without it a periodic job the
    # slice held paid again once the slice halved; on since stop 77
    time_slice_reuse: bool = True
    # issue 13, session 8: a shortage round's demand goes this fraction
    # of the way from m_cur to the booking (see shortage_demand)
    shortage_grow_fraction: float = 0.0
    # stop 44: the jump only in a round whose swap-outs are at least this
    # many times its swap-ins (new data pushing old out: a rise; 0: any
    # short round; see fresh_allocation())
    shortage_grow_out_ratio: float = 0.0
    # stop 72: a short round that follows a short round asks at least
    # the allocation and one more round's growth ahead (see
    # shortage_ramp_demand)
    shortage_ramp: bool = True
    # stop 86: the rounds after a rise rule's ask keep at least their
    # estimate, but a quiet round's no more than the balloon's size (see
    # after_rise_demand; on since stop 87)
    rise_hold_no_grow: bool = True
    # stop 76: the round whose sample reached the allocation (V -> VG
    # without swap activity) asks the estimate and its rise once more
    # (see reached_demand)
    vg_entry_grow: bool = False
    # issue 13, session 8: no shrink in a VM's first warmup_slices x
    # time_slice (see step); the balloon's headroom, to hold it there
    warmup_slices: float = 0.0
    # issue 13, session 10: a round that ends in VG never shrinks (see
    # step); off by default until measured on the suite
    vg_no_shrink: bool = False
    # stop 45: no shrink in a round whose guest was allocating while the
    # sample ran (Observation.allocating; see step)
    no_shrink_while_allocating: bool = False
    # stop 48: no shrink below the round's own estimate when the
    # max-average lags it (see hold_at_estimate); on since stop 50
    no_shrink_below_estimate: bool = True
    # stop 30: the correction never stays above what the guest has not
    # free minus what sampling saw (see _bound_by_used)
    pinned_used_bound: bool = True
    # stop 43: the rise test compares with the size before the first step
    # of a descent, not its last step (see _guard())
    shrink_rise_from_descent: bool = True
    # stop 42: no shrink while the VM's swap-in rate, averaged over
    # swapin_budget_rounds rounds, is above this (KiB/s; 0: off; see
    # swapin_budget)
    swapin_budget_kb_s: int = 0
    swapin_budget_rounds: float = 30.0
    # stop 43: the first step of a descent (KiB; 0: off; see slow_start)
    shrink_slow_start_kb: int = 4 * MiB
    # stop 49: a shrink whose evictions the guest read back within
    # hindsight_rounds raises the shrink floor (see hindsight; 0: off; on
    # since stop 50)
    hindsight_rounds: int = 30
    hindsight_fraction: float = 0.25
    hindsight_min_kb: int = 16 * MiB
    hindsight_recent_only: bool = False
    # stop 53: a correction lowered on evidence lowers the estimates
    # already averaged with it (see rebase_estimates; on since stop 69)
    pinned_drop_rebase: bool = True
    # stop 69: after a probe that lowered the correction, the next waits
    # one read-back window only (with pinned_drop_rebase)
    probe_chain: bool = True
    # stop 70: a probe counts the guest's memory in use falling as
    # evictions (clean pages dropped without a swap-out; on since stop 70)
    probe_in_use_evidence: bool = True
    # stop 82: the first probe of the first-sample calibration waits one
    # read-back window, not a time slice more (see _probe_due; on since
    # stop 82)
    calibration_probe_early: bool = True
    # stop 83: a probe is answered by swap-ins only when the guest read
    # back faster than swapin_bound_kb_s since it began (see _probe; on
    # since stop 83)
    probe_answer_rate: bool = True
    # stop 83: a probe may start while the max-average holds the demand
    # above the estimate, one step below that demand (see _probe; on
    # since stop 83)
    probe_over_demand: bool = True
    # stop 90: a probe asks the guest to give up one step of what it
    # uses, not that step plus what it uses above the estimate (see
    # _probe)
    probe_evicts_one_step: bool = True
    # stop 90: what a probe made the guest write to swap is the probe's:
    # reading it back (reuse distances within it, nothing written since)
    # is no shortage (see _debt_read)
    probe_owns_readback: bool = True
    # stop 91: a probe whose balloon stopped short of its size lowers the
    # correction only as far as the balloon got (see _probe)
    probe_lowers_to_reached: bool = True
    round_interval: float = 60.0
    headroom_kb: int = 32 * MiB
    headroom_fraction: float = 0.05
    # not a [badis] option: the smallest move of the balloon controller
    # in use ([badis] or [mutualization] min_change_kb; see from_conf)
    balloon_min_change_kb: int = 0

    def __post_init__(self):
        if not 0 < self.vg_threshold <= 1:
            raise ValueError('vg_threshold must be in (0, 1]')
        if not 0 <= self.vg_headroom_fraction <= 1:
            raise ValueError('vg_headroom_fraction must be in [0, 1]')
        for name in ('vg_to_g_rounds', 'g_to_v_rounds', 'vg_to_v_rounds',
                     'average_window'):
            if getattr(self, name) < 1:
                raise ValueError('%s must be at least 1' % name)
        if self.time_slice <= 0:
            raise ValueError('time_slice must be positive')
        if self.time_slice_max < 0 or self.time_slice_max_slices < 0:
            raise ValueError('time_slice_max and time_slice_max_slices '
                             'must not be negative')
        if self.initial_pinned_kb < 0:
            raise ValueError('initial_pinned_kb must not be negative')
        if not 0 <= self.pinned_decay <= 1:
            raise ValueError('pinned_decay must be in [0, 1]')
        if self.pinned_probe_step_kb <= 0:
            raise ValueError('pinned_probe_step_kb must be positive')
        if not 0 <= self.probe_readback_fraction <= 1:
            raise ValueError('probe_readback_fraction must be in [0, 1]')
        if self.probe_burst_s < 0:
            raise ValueError('probe_burst_s must not be negative')
        if self.calibration_probe_warm_rounds == 1:
            raise ValueError('calibration_probe_warm_rounds must be 0 '
                             '(off) or at least 2')
        if self.calibration_probe_warm_rounds < 0:
            raise ValueError('calibration_probe_warm_rounds must not be '
                             'negative')
        if not 0 < self.calibration_probe_max_gap_fraction <= 1:
            raise ValueError('calibration_probe_max_gap_fraction must be '
                             'in (0, 1]')
        if self.shortage_grow_out_ratio < 0:
            raise ValueError('shortage_grow_out_ratio must not be negative')
        if self.stall_swapin_rate_kb < 0:
            raise ValueError('stall_swapin_rate_kb must not be negative')
        if self.shrink_slow_start_kb < 0 or self.balloon_min_change_kb < 0:
            raise ValueError('shrink_slow_start_kb and balloon_min_change_kb '
                             'must not be negative')
        if self.swapin_budget_kb_s < 0 or self.swapin_budget_rounds <= 0:
            raise ValueError('swapin_budget_kb_s must not be negative and '
                             'swapin_budget_rounds must be positive')
        if self.shrink_swapin_window < 0:
            raise ValueError('shrink_swapin_window must not be negative')
        self.floor_params                # checks its parameters
        self.slice_params                # checks its parameters
        if not 0 <= self.shrink_hold_rounds <= self.shrink_hold_max_rounds:
            raise ValueError('shrink_hold_rounds must be in [0, '
                             'shrink_hold_max_rounds]')

    @classmethod
    def from_conf(cls, conf):
        return _from_options(cls, conf.badis, balloon_min_change_kb=(
            conf.mutualization.min_change_kb if conf.mutualization.enabled
            else conf.badis.min_change_kb))

    @property
    def hindsight_params(self):
        return hindsight.Params(rounds=self.hindsight_rounds,
                                fraction=self.hindsight_fraction,
                                min_kb=self.hindsight_min_kb,
                                recent_only=self.hindsight_recent_only)

    @property
    def floor_params(self):
        return floors.FloorParams(
            fall=self.shrink_floor_fall,
            expire_rounds=self.shrink_floor_rounds,
            step_kb=self.shrink_floor_step_kb,
            step_rounds=self.shrink_floor_step_rounds,
            raise_kb=self.shrink_floor_raise_kb,
            low_reference=self.shrink_floor_low_reference,
            step_back=self.shrink_floor_step_back,
            hold_in_use=self.shrink_floor_hold_in_use,
            step_moved=self.shrink_floor_step_moved)

    @property
    def slice_params(self):
        return adaptive_slice.SliceParams(
            base_s=self.time_slice,
            max_s=self.time_slice_max or (self.time_slice_max_slices *
                                          self.time_slice),
            factor=self.time_slice_factor,
            from_first=self.time_slice_from_first,
            reuse=self.time_slice_reuse)


@dataclasses.dataclass(frozen=True)
class Observation:
    """What the collectors measured for one VM in one round.

    ``sampled`` is the sampling estimate (``None`` when the sampler is off
    or unavailable); ``ghost`` Geiger's (or its balloon-statistics stand-in),
    ``None`` when it has no estimate; ``swapping`` whether swap activity was
    seen this round (Geiger's histogram not empty, or the balloon swap
    counters); ``steady`` whether the allocation stayed ``m_cur_kb`` over
    the whole sampling interval (only then can a swapping round teach the
    pinned-page correction); ``grew_from_kb`` the allocation the interval
    began at when the balloon grew during it (a swapping round then gives
    a lower bound of the correction); ``full`` whether the guest had no
    free memory to speak of (a guest that reads pages back from swap while
    it has free memory is not using all of m_cur: nothing to learn);
    ``pressure_kb`` how much the guest put in swap (net) over the round at
    an allocation that did not shrink, with no free memory: it had to
    evict to make room for memory it touched, so it lacks at least that
    (0: no such sign; the caller applies the threshold and the
    conditions, see :mod:`memmut.agent.wss.pipeline`); ``shrunk`` whether
    the balloon shrank since the last round or the sampling interval's
    start (swap-ins soon after count against the shrink, see
    :func:`_guard`); ``swapin_kb`` what the guest read back from swap
    over the round and ``interval_s`` how long that was (None: unknown),
    see :func:`stalled`; ``used_kb`` the memory the guest had not free
    (balloon statistics ``actual`` - ``unused``) over the sampled interval,
    None when it did not report it or it moved during the interval (see
    :func:`_bound_by_used`); ``allocating`` whether that memory rose
    by more than the statistics' noise during the interval (the guest
    was taking memory while the sample ran); ``in_use_kb`` what it
    reports in use now, page cache not counted (``actual`` - ``usable``,
    MemAvailable; None: unknown); ``hold`` whether the agent holds the
    balloon this round (a first pinned-page calibration pending: every
    round it reads must be at the same allocation, since a shrink makes
    the guest evict and changes what it reports in use; or the guest
    loading, ``calibration_follow_rounds``): no shrink, and no descent of
    the slow start begins; ``hold_reason`` says why.
    """
    timestamp: float
    m_cur_kb: int
    booked_kb: int
    sampled: typing.Optional[techniques.TechniqueEstimate] = None
    ghost: typing.Optional[techniques.TechniqueEstimate] = None
    swapping: bool = False
    steady: bool = True
    grew_from_kb: typing.Optional[int] = None
    full: bool = True
    pressure_kb: int = 0
    shrunk: bool = False
    shrunk_from_kb: typing.Optional[int] = None
    evicted_kb: int = 0
    swapin_kb: int = 0
    interval_s: typing.Optional[float] = None
    # the round's swap-ins by reuse distance (SwapReading.in_distances;
    # None: unknown), for hindsight's recent_only
    swapin_distances: typing.Optional[tuple] = None
    used_kb: typing.Optional[int] = None
    allocating: bool = False
    in_use_kb: typing.Optional[int] = None
    hold: bool = False
    hold_reason: str = 'pinned-page calibration pending'
    # calibration_probe_warm_rounds: whether the rounds can read over
    # several rounds (a back-end that peeks), and, at the last round of
    # such a read, what it saw touched beyond its first round
    can_read_warm: bool = False
    warm_kb: typing.Optional[int] = None
    # and how fast memory it had not seen before was touched at its end
    # (KiB/s; None: unknown)
    warm_slope_kb_s: typing.Optional[float] = None

    def __post_init__(self):
        if self.m_cur_kb < 0 or self.booked_kb <= 0:
            raise ValueError('m_cur_kb must be >= 0 and booked_kb > 0')
        if self.pressure_kb < 0:
            raise ValueError('pressure_kb must not be negative')

    @property
    def short(self):
        """Swap activity, or swap growth under pressure: the VM lacks
        memory this round."""
        return self.swapping or self.pressure_kb > 0

    @property
    def swapin_rate_kb(self):
        """KiB/s read back from swap over the round (None: unknown)."""
        if self.interval_s is None or self.interval_s <= 0:
            return None
        return self.swapin_kb / self.interval_s


@dataclasses.dataclass(frozen=True)
class BadisState:
    """Everything Badis remembers about one VM between rounds."""
    mode: Mode = Mode.V
    swap_rounds: int = 0         # consecutive swapping rounds in `mode`
    quiet_rounds: int = 0        # consecutive rounds without swapping
    pinned_kb: int = 0
    learned: bool = False        # pinned_kb was learned in VG
    # The last round's estimate when it said "short of memory" (Geiger's,
    # or the allocation while swapping), else 0: see _shortage_wss.
    short_kb: int = 0
    recent: tuple = ()           # last `average_window` estimates (KiB)
    # Candidates for the sliding maximum: (timestamp, moving average),
    # averages strictly decreasing, all within the last time slice.
    window: tuple = ()
    # What the pinned-page correction may not decay below (pages known to
    # be pinned: the guest kernel's reservation, initial_pinned_kb), and
    # why and when pinned_kb last changed (shown in the logs).
    pinned_floor_kb: int = 0
    pinned_note: str = ''
    pinned_at: typing.Optional[float] = None
    # What the first-sample calibration set the correction to (0: none):
    # the cap of pinned_used_bound never goes below it (see
    # _bound_by_used).
    pinned_calibrated_kb: int = 0
    # The correction is the calibration's (or a probe lowered it from
    # there) and nothing has shown it is needed yet: no VG round learned
    # it, no probe below it was answered by swap-ins (calibration_probe).
    pinned_unconfirmed: bool = False
    # pinned_used_bound's bounds of the last rounds in a row that gave
    # one (KiB; see _used_bounds)
    used_bounds: tuple = ()
    # The decay's pace: halved each time a swapping round learns the
    # correction back above what it had decayed to (down to 1/16)
    decay_scale: float = 1.0
    # the correction before its decay began (what a bad shrink restores)
    pinned_peak_kb: int = 0
    # The shrink guard (see _guard): when the balloon last shrank, whether
    # swap-ins followed it already, shrinks followed by swap-ins so far,
    # rounds left during which sampling may not lower the estimate below
    # guard_kb, and the hold the next bad shrink gets.
    shrink_at: typing.Optional[float] = None
    shrink_from_kb: typing.Optional[int] = None
    shrink_counted: bool = False
    bad_shrinks: int = 0
    hold_rounds: int = 0
    guard_kb: int = 0
    next_hold: int = 0
    # Evidence-paced decay (pinned_decay_evidence): the last round with
    # swap activity, and the correction before the latest decay step
    # (what a shrink followed by swap-ins restores, and then keeps as
    # its floor: shrinking below it was shown to swap).
    swap_at: typing.Optional[float] = None
    step_from_kb: int = 0
    # the latest decay step is a probe not judged yet; whether the guest
    # evicted below the old estimate since (cold data: the step was
    # right); the wait before the next step, in units of time_slice +
    # shrink_swapin_window (doubles after each unproductive probe)
    probing: bool = False
    probe_evicted: bool = False
    probe_wait: int = 1
    # The last sampled round's raw sample and the last round's swap-in
    # rate (KiB/s), to see a sample that fell while swap-ins rose
    # (stalled()).
    last_sampled_kb: typing.Optional[int] = None
    last_swapin_rate_kb: float = 0.0
    # The balloon probe of a lower correction (pinned_probe, _probe()):
    # the correction under test (None: no probe running), the balloon
    # size it asks for, the estimate it started from, when it started,
    # whether the guest evicted below that estimate since, and when the
    # last probe ended (pacing, with probe_wait).
    probe_pinned_kb: typing.Optional[int] = None
    probe_size_kb: int = 0
    probe_from_kb: int = 0
    probe_at: typing.Optional[float] = None
    probe_seen_evict: bool = False
    probe_end_at: typing.Optional[float] = None
    # After a probe answered by swap-ins: until when the guest reading
    # back what the probe made it evict is the probe's doing, and the
    # estimate the probe started from (see step()).
    probe_readback_until: typing.Optional[float] = None
    probe_readback_kb: int = 0
    # what the last probe made the guest write to swap and it has not
    # read back, while it has written nothing since (KiB;
    # probe_owns_readback: 0 once it writes)
    probe_debt_kb: int = 0
    # probes in a row that lowered the correction (calibration_probe
    # doubles its step with each)
    probe_streak: int = 0
    # what the guest read back and evicted since the running probe
    # began (KiB; probe_readback_fraction)
    probe_in_kb: int = 0
    probe_out_kb: int = 0
    # when the running probe first saw swap activity, and whether it
    # began before the guest had evicted anything (probe_burst_s)
    probe_swap_at: typing.Optional[float] = None
    probe_blind: bool = False
    # what the guest reported in use when the running probe began (KiB;
    # Observation.in_use_kb; probe_in_use_evidence)
    probe_in_use_kb: typing.Optional[int] = None
    # whether the guest has evicted to swap since the VM was first seen
    evicted_once: bool = False
    # probes in a row answered by swap-ins with the correction at
    # probe_answer_pinned_kb, and the sampled part of the estimate
    # (estimate less correction) when the last of them began
    # (calibration_reprobe_answers)
    probe_answers: int = 0
    probe_answer_pinned_kb: int = 0
    probe_answer_sample_kb: int = 0
    # calibration_probe_warm_rounds (_probe_warm): a read over several
    # rounds is wanted before the next probe; what the last one saw
    # touched beyond its first round, when, and whether a probe decision
    # has used it yet
    warm_wanted: bool = False
    warm_kb: int = 0
    warm_slope_kb_s: typing.Optional[float] = None
    warm_at: typing.Optional[float] = None
    warm_fresh: bool = False
    # calibration_probe_warm_budget: the lowest correction the probes
    # after the last read may test (None: that read not used yet)
    warm_low_kb: typing.Optional[int] = None
    # the sampled part of the estimate (estimate - correction) when a
    # read spared the probe (None: none since the last probe began)
    warm_spared_sample_kb: typing.Optional[int] = None
    # The last round had swap activity (a second such round is a
    # shortage even while the balloon moves: _fsm, _noise), and the
    # bad-shrink floor (shrink_floor.py).
    last_short: bool = False
    floor: floors.Floor = floors.Floor()
    # the floor's last change in words and when (shown per VM, as the
    # pinned-page correction's)
    floor_note: str = ''
    floor_at: typing.Optional[float] = None
    # the VM's own time slice (time_slice_max, adaptive_slice.py)
    slice: adaptive_slice.Slice = adaptive_slice.Slice()
    # when a shortage round last raised the demand toward the booking
    # (shortage_grow_fraction)
    jumped_at: typing.Optional[float] = None
    # the first round seen for this VM (warmup_slices)
    first_at: typing.Optional[float] = None
    last_m_cur_kb: typing.Optional[int] = None
    budget: swapin_budget.Budget = swapin_budget.Budget()
    descent: slow_start.Descent = slow_start.Descent()
    ledger: hindsight.Ledger = hindsight.Ledger()
    # what the last round asked for, the demand or a probe's size below
    # it (a balloon taken below it was not our shrink: hindsight)
    last_asked_kb: typing.Optional[int] = None

    @classmethod
    def initial(cls, params=None, pinned_floor_kb=0, now=None):
        """A new VM's state; ``pinned_floor_kb`` pages known to be pinned
        (the guest kernel's reservation): the correction starts at the
        larger of it and ``initial_pinned_kb`` and never decays below."""
        params = params or BadisParams()
        floor = max(params.initial_pinned_kb, pinned_floor_kb)
        note = ''
        if floor:
            note = ('initial: %s' % ('guest kernel reservation'
                                     if pinned_floor_kb >=
                                     params.initial_pinned_kb
                                     else 'initial_pinned_kb'))
        return cls(pinned_kb=floor, pinned_floor_kb=floor, pinned_note=note,
                   pinned_at=now if floor else None)

    @property
    def sampling_on(self):
        """Whether the page sampler should run for this VM next round
        (in V and VG; in G only when the next round may be the G -> V
        transition, see :func:`sampling_wanted`)."""
        return self.mode in (Mode.V, Mode.VG)

    def sampling_wanted(self, params=None):
        """Whether to sample during the next round: in V and VG, and in G
        after ``g_to_v_rounds`` - 1 quiet rounds, so that a G -> V
        transition round has a sample to estimate with."""
        params = params or BadisParams()
        return self.sampling_on or (
            self.mode is Mode.G and
            self.quiet_rounds >= params.g_to_v_rounds - 1)

    @property
    def geiger_on(self):
        """Whether Geiger's swap monitor should run for this VM."""
        return self.mode in (Mode.VG, Mode.G)


@dataclasses.dataclass(frozen=True)
class Result:
    """The outcome of one round for one VM."""
    mode: Mode
    wss: techniques.TechniqueEstimate  # this round's estimate and source
    moving_avg_kb: int
    max_avg_kb: int              # WSS^max_avg
    demand_kb: int               # what the allocation should cover
    transition: typing.Optional[str] = None
    # shrinks followed by swap-ins within shrink_swapin_window, so far
    bad_shrinks: int = 0
    held: bool = False           # the shrink guard held the estimate up
    pinned_kb: int = 0           # the correction after this round
    # what happened to the correction or the guard this round (log lines)
    events: tuple = ()
    # a balloon probe of a lower correction is running: the balloon size
    # to set, without headroom (the estimate itself is unchanged)
    probe_kb: typing.Optional[int] = None
    # why pinned_used_bound gave no bound this round (debug log), or None
    used_bound_skip: typing.Optional[str] = None


fmt_kb = units.fmt_kb
_mib = fmt_kb


def _corrected(state, obs, sampled_kb, pinned_kb=None):
    """A sample with the pinned-page correction (``pinned_kb``, else the
    state's), capped at m_cur."""
    if pinned_kb is None:
        pinned_kb = state.pinned_kb
    return min(obs.m_cur_kb, sampled_kb + pinned_kb)


def _sampled_wss(state, obs):
    """Sampled WSS with the pinned-page correction, capped at m_cur."""
    if obs.sampled is None:
        return None
    return techniques.TechniqueEstimate(
        _corrected(state, obs, obs.sampled.wss_kb), obs.sampled.source)


def _last_sample_kb(state, obs, sample):
    """This round's corrected ``sample``, else the last round's (a round
    run on swap activity between two sampled ones), else None."""
    if sample is not None:
        return sample.wss_kb
    if state.last_sampled_kb is None:
        return None
    return _corrected(state, obs, state.last_sampled_kb)


def _shortage_wss(state, obs):
    """Estimate while short: the larger of Geiger's and the allocation plus
    the swap growth under pressure (the guest evicted that much for pages
    it touched; Geiger sees only what it read back, nothing yet in the
    first moments of a rise), else the whole allocation.

    Consecutive short rounds accumulate: a new interval's reading (cut
    short by a round run on swap activity, over a part of the new working
    set only, or of pages evicted before a grow) does not lower the
    previous round's shortage estimate."""
    if obs.ghost is not None:
        wss = obs.ghost
    else:
        wss = techniques.TechniqueEstimate(obs.m_cur_kb, SOURCE_SWAPPING)
    if obs.pressure_kb and obs.m_cur_kb + obs.pressure_kb > wss.wss_kb:
        wss = techniques.TechniqueEstimate(obs.m_cur_kb + obs.pressure_kb,
                                           SOURCE_SWAP_GROWTH)
    if state.short_kb > wss.wss_kb:
        return techniques.TechniqueEstimate(state.short_kb, wss.source)
    return wss


def shortage_demand(obs, fraction):
    """The demand of a round that is short (swap-ins or swap growth the
    state machine counts as a shortage): ``fraction`` of the way from
    m_cur to the booking.

    Nothing read from outside the guest gives the size of a rise before
    the guest has evicted for it: growing by what it evicted per round
    (the shortage estimate) takes rise / evicted rounds, each of them
    swapping (phases in badis17: 1.5-2.5 s under the working set for an
    80 MiB rise, where a balloon driven by the true size lost 1 %). Going
    a fixed fraction of the remaining way reaches any rise in a few
    rounds. The excess is in the demand of the short rounds only, not in
    the estimate nor the max-average: the first quiet round gives it
    back."""
    gap = max(0, obs.booked_kb - obs.m_cur_kb)
    return obs.m_cur_kb + int(fraction * gap)


def shortage_ramp_demand(obs, estimate_kb):
    """The demand of a short round that follows a short round: at least
    the allocation, and the estimate plus what it asks above the
    allocation once more when it asks more; at most the booking.

    A rising working set is estimated from what the guest read back in
    the round, so each round grows by what one round can swap in (25
    MiB/s on the test bed's disk: an 80 MiB rise takes three rounds, each
    swapping). Two short rounds in a row are a rise, not a hot set's
    one-round move, and the guest swaps at its allocation: it is asked
    no less (the balloon target then adds its headroom), and the growth
    the estimate asks of the second round is the best guess of the
    third's. On the test bed most of these rounds had Geiger's estimate
    a little under the allocation (the guest swapped in the headroom):
    there the rule grows the balloon by the headroom. The excess is in
    the demand only and is given back from the first quiet round, as a
    shortage jump's."""
    grow = max(0, estimate_kb - obs.m_cur_kb)
    return min(obs.booked_kb, max(obs.m_cur_kb, estimate_kb + grow))


def reached_demand(obs, estimate_kb, last_kb):
    """The demand of the round whose corrected sample reached the
    allocation before any swap activity (V -> VG on the sample): the
    estimate plus its rise since the last round (``last_kb``; None: no
    rise known), at most the booking.

    A working set that rises by new data first fills the balloon's
    headroom, which sampling sees, and only then evicts: sometimes the
    sample reaches the allocation a round before the swap monitors see
    anything (TCG, phases from boot: at 39.0 s the sample had reached
    the 172 MiB allocation while the demand, the max-average, was still
    159 MiB for a working set that had gone to 236), and the balloon
    waits for the swap-ins. The rise seen in the sample, asked once
    more ahead as the shortage ramp does, starts it a round early. The
    sample is capped at the allocation, so this is a lower bound of the
    rise, and the excess is in this round's demand only (the next quiet
    rounds give it back). Off by default: in the stop-76 TCG pairs the
    swap monitor saw every rise in the same round as the sample
    (tests/benchmarks/results/badis76_vgentry)."""
    rise = max(0, estimate_kb - last_kb) if last_kb is not None else 0
    return min(obs.booked_kb, estimate_kb + rise)


def fresh_allocation(obs, out_ratio):
    """Whether a short round looks like new data pushing old data out:
    the guest wrote to swap at least ``out_ratio`` times what it read
    back (always True when ``out_ratio`` is 0).

    A rise of the working set by new allocations (phases' second step
    on TCG: 80 MiB more data at 40 s) first evicts and reads little back;
    a shortage at a size we shrank to, or a hot set moving onto data it
    left, reads back about what it evicts (every page it brings in pushes
    one out). Only the first is worth a jump towards the booking
    (``shortage_grow_fraction``): on the second the jump is given back at
    the next quiet round and the guest evicts again (the hot set lost
    4-5 % with the jump on every short round, badis32)."""
    if out_ratio <= 0:
        return True
    return obs.evicted_kb > 0 and obs.evicted_kb >= out_ratio * obs.swapin_kb


def hold_demand(m_cur_kb, params):
    """The demand that keeps the balloon where it is: m_cur less the
    headroom the balloon target adds (never a grow by the headroom)."""
    return max(0, m_cur_kb - sizing.headroom(
        m_cur_kb, params.headroom_kb, params.headroom_fraction))


def _no_shrink(demand, obs, params, events, event):
    """``demand`` raised to keep the balloon where it is, with ``event``
    logged when that holds it (never a grow)."""
    hold = hold_demand(obs.m_cur_kb, params)
    if hold > demand:
        events.append(event)
        return hold
    return demand


def hold_at_estimate(demand_kb, estimate_kb, m_cur_kb, params):
    """The demand of a round whose own estimate is ``estimate_kb``: never
    below that estimate when it would shrink the balloon, never a grow.

    Why: the demand is a maximum of moving averages; after the estimate
    rose (a calibration that learned the pinned pages, a working set
    that grew between samples) the average still carries the rounds
    before it for ``average_window`` rounds, and a shrink on it evicts
    what the guest uses now (TCG, stop 48: Zipf 0.8 from boot, estimate
    195 -> 236 MiB in the round the calibration rose, demand 206 MiB, the
    balloon went 256 -> 225 MiB and the guest read 32 MiB back in the
    first 10 s, 4 % of its run's operations). Growing stays the average's
    and the shortage rules' business: one high sample does not grow.
    """
    hold = min(estimate_kb, hold_demand(m_cur_kb, params))
    return max(demand_kb, hold)


def after_rise_demand(demand_kb, wss, obs, params):
    """The demand of a round within one time slice of a rise rule's ask
    (a jump or the ramp): at least this round's estimate; with
    ``rise_hold_no_grow``, as :func:`hold_at_estimate` holds it, never
    a grow on it (a shortage's estimate is in ``demand_kb`` already).

    Why: the rule keeps the paced give-back from going under the new
    working set while the max-average still lags the rise. But a round
    in G without swap activity estimates the allocation itself (Geiger
    cannot see below it), and asking it grew the balloon by its headroom
    in the first quiet round after a rise (TCG, phases at 512 MiB, stop
    86: 465 -> 488 MiB for a working set of 410, with nothing swapped;
    the model shows the same step)."""
    if params.rise_hold_no_grow:
        return hold_at_estimate(demand_kb, wss.wss_kb, obs.m_cur_kb, params)
    return max(demand_kb, wss.wss_kb)


def raise_pinned(state, pinned_kb, booked_kb, rebase=False, **changes):
    """``state`` with the pinned-page correction set to ``pinned_kb``
    (and ``changes``). ``rebase``: when that raises it, the estimates the
    moving average and its max-average window already hold are raised by
    the same amount, up to ``booked_kb``.

    Why: they are the samples of earlier rounds corrected with the lower
    value, which the new one says was short by as much: the same pages
    went unseen then. Left as they were, the first rounds after a
    calibration average them with the new estimate and shrink below what
    the guest was just shown to use (TCG, badis33: Zipf's correction
    calibrated 50 -> 97 MiB in the fourth round, the estimate 235 MiB, the
    demand the average with three earlier rounds, 205 MiB; the balloon went
    256 -> 224 MiB and the guest read back 35 MiB over the next ten
    seconds; Zipf 1.2 and phases the same in every slot)."""
    rise = pinned_kb - state.pinned_kb
    if rebase and rise > 0:
        changes['recent'], changes['window'] = rebase_estimates(
            state.recent, state.window, rise, booked_kb)
    return dataclasses.replace(state, pinned_kb=pinned_kb, **changes)


def rebase_estimates(recent, window, shift_kb, booked_kb, low_kb=0):
    """``(recent, window)``, the estimates of the moving average and of
    its max-average window, moved by ``shift_kb`` (up or down) to what
    they would have been with a pinned-page correction changed by as
    much, kept within 0 and ``booked_kb``; moved down, none goes below
    ``low_kb`` (this round's estimate with the new correction) unless it
    was there already: an estimate capped at a smaller allocation (a
    probe's) never held the whole old correction.

    Each is an earlier round's sample plus the correction of its round;
    when the correction changes on evidence, the pages it counted (or
    missed) were the same then. Up: see :func:`raise_pinned`. Down
    (``pinned_drop_rebase``): a correction lowered by a balloon probe the
    guest lived through, or capped by the guest's own statistics, would
    otherwise still hold the demand up through the averages for a time
    slice; the balloon went back above the size just proven (TCG,
    badis41: at 512 MiB load-then-idle's balloon rose 30-80 MiB after
    each of its probes, and the next probe waited for the max-average
    to come down, 330 -> 83 MiB of cold data given back over 100 s)."""
    def moved(kb):
        if shift_kb < 0:
            return max(min(kb, low_kb), kb + shift_kb, 0)
        return min(booked_kb, kb + shift_kb)
    return (tuple(moved(e) for e in recent),
            tuple((t, moved(a)) for t, a in window))


def _hold(state, obs):
    """No usable data this round: keep the last estimate."""
    if state.recent:
        return techniques.TechniqueEstimate(state.recent[-1], SOURCE_HOLD)
    return techniques.TechniqueEstimate(obs.m_cur_kb, SOURCE_HOLD)


def _far_below(wss, obs, params):
    """Whether a sampled estimate is clearly under the allocation (below
    the V -> VG threshold)."""
    return wss is not None and not _close(wss, obs, params)


def _close(wss, obs, params):
    """Whether an estimate has come close to the allocation (V -> VG):
    at least ``vg_threshold`` of it, and (``vg_headroom_fraction``) with
    less than that fraction of its own headroom left above it.

    Why the second: the balloon is sized to the estimate plus a headroom
    of at least ``headroom_fraction`` of it, so an estimate sitting at its
    own target is within 1 / (1 + headroom_fraction) of the allocation
    whenever that headroom is more than ``headroom_kb``: with 5 % and the
    95 % threshold, every VM above 640 MiB (the defaults) or 320 MiB (the
    benchmarks' 16 MiB) entered VG the round its balloon reached the
    target and stayed there, and the calibration probe, which runs in V
    only, never tested a cold correction (paged guest model at 512 MiB
    with 320 MiB of load-then-idle data: 18 % of the booking saved for
    65 % by the oracle). A working set that grows eats into the headroom
    first, which is what VG is for. At 256 MiB and 16 MiB of headroom the
    two tests agree (5 % of 256 MiB is 0.8 x 16 MiB)."""
    return wss is not None and _near_allocation(wss.wss_kb, obs.m_cur_kb,
                                                params)


def _near_allocation(wss_kb, m_cur_kb, params):
    """:func:`_close` of an estimate of ``wss_kb`` at ``m_cur_kb``."""
    if wss_kb < params.vg_threshold * m_cur_kb:
        return False
    if not params.vg_headroom_fraction:
        return True
    room = sizing.headroom(wss_kb, params.headroom_kb,
                           params.headroom_fraction)
    return m_cur_kb - wss_kb <= params.vg_headroom_fraction * room


def fills_allocation(sampled_kb, pinned_kb, m_cur_kb, params):
    """Whether a raw sample, with the pinned-page correction, has come
    close to the allocation as V -> VG reads it (:func:`_close`): the
    guest touches about all it has."""
    return _near_allocation(min(m_cur_kb, sampled_kb + pinned_kb), m_cur_kb,
                            params)


# A sample lower than the last sampled round's by more than this (or
# STALL_DROP_FRACTION of m_cur, the larger) "fell" (stalled()): a sample
# that reads every page varies by a few hundred KiB between rounds at a
# steady working set.
STALL_DROP_KB = MiB
STALL_DROP_FRACTION = 0.01


def stalled(state, obs, params):
    """Why this round's access sample is not a working-set measurement
    (the guest stalled on swap while it was taken), or None.

    A guest waiting for pages to come back from swap touches fewer
    pages per second, so the sample reads low, and m_cur - sampled (the
    pinned-page correction VG learns) reads high: in the W3,s run of
    badis13-final a correction of 89 MiB was learned this way for a true
    72 MiB. Two signs:

    * the swap-in rate over the round is at least
      ``stall_swapin_rate_kb`` KiB/s: at a page-in latency of 50-100 us
      per 4 KiB page (memstore over NBD), 4 MiB/s keeps a vCPU waiting
      5-10 % of the time, about as much as the sample then under-reads;
    * the sample fell below the last sampled round's (by more than
      ``STALL_DROP_KB`` or ``STALL_DROP_FRACTION`` of m_cur) while the
      swap-in rate rose above that round's: a working set does not
      shrink while the guest reads more of it back from swap.
    """
    if obs.sampled is None:
        return None
    rate = obs.swapin_rate_kb
    if rate is None:
        return None
    if params.stall_swapin_rate_kb and rate >= params.stall_swapin_rate_kb:
        return ('swap-in rate %d KiB/s >= %d KiB/s'
                % (rate, params.stall_swapin_rate_kb))
    last = state.last_sampled_kb
    drop = max(STALL_DROP_KB, int(STALL_DROP_FRACTION * obs.m_cur_kb))
    if (last is not None and obs.sampled.wss_kb < last - drop and
            rate > state.last_swapin_rate_kb):
        return ('sampled %s fell from %s while the swap-in rate rose '
                '(%d -> %d KiB/s)' % (_mib(obs.sampled.wss_kb), _mib(last),
                                      state.last_swapin_rate_kb, rate))
    return None


@dataclasses.dataclass(frozen=True)
class _Round:
    mode: Mode
    wss: techniques.TechniqueEstimate
    swap_rounds: int = 0
    quiet_rounds: int = 0
    pinned_kb: int = 0
    learned: bool = False
    transition: typing.Optional[str] = None
    pinned_note: typing.Optional[str] = None
    # why a swapping VG round learned nothing from its sample (log line)
    skipped: typing.Optional[str] = None
    # V -> VG on the sample alone (no swap activity this round): it
    # reached the allocation
    reached: bool = False


def _fsm(state, obs, params):
    """The state machine of seed 004 §2.6.1 for one round."""
    pinned = state.pinned_kb
    learned = state.learned
    sampled = _sampled_wss(state, obs)
    pct = '%d%%' % round(params.vg_threshold * 100)

    if state.mode is Mode.V:
        if obs.short and (obs.steady or not _far_below(sampled, obs,
                                                       params)):
            return _Round(Mode.VG, _shortage_wss(state, obs),
                          pinned_kb=pinned,
                          transition='V->VG: swap activity seen while '
                                     'sampling')
        if obs.short and state.last_short:
            # a balloon that shrinks every round is never steady, so the
            # exception below would excuse every one of its swap-ins: a
            # guest reclaiming what one shrink took stops swapping the
            # next round, a short one does not (badis17: Zipf 0.8 from
            # boot shrank 239 -> 105 MiB in 8 rounds, swapping in each)
            return _Round(Mode.VG, _shortage_wss(state, obs),
                          pinned_kb=pinned,
                          transition='V->VG: swap activity in 2 '
                                     'consecutive rounds while the '
                                     'balloon moved')
        # (Swap-ins in an interval during which the balloon moved, while
        # sampling sees a WSS well under the allocation: the guest
        # reclaiming what the balloon took evicts a few hot pages with the
        # cold ones. A real shortage keeps swapping next round.)
        wss = sampled or _hold(state, obs)
        if _close(sampled, obs, params):
            return _Round(Mode.VG, wss, pinned_kb=pinned, reached=True,
                          transition='V->VG: sampled WSS %s reached %s of '
                                     'allocation %s'
                          % (_mib(wss.wss_kb), pct, _mib(obs.m_cur_kb)))
        return _Round(Mode.V, wss, pinned_kb=pinned)

    if state.mode is Mode.VG:
        if obs.short:
            note = skipped = None
            stall = stalled(state, obs, params) if (
                params.stall_filter and obs.full and (
                    obs.steady or obs.grew_from_kb is not None)) else None
            if stall is not None:
                # not a working-set measurement: learn nothing from it
                skipped = ('pinned-page correction %s kept: sample taken '
                           'while the guest stalled on swap (%s)'
                           % (_mib(pinned), stall))
            elif obs.sampled is not None and obs.steady and obs.full:
                # Swapping: all of m_cur is in use; what sampling misses
                # now are pinned (unswappable, rarely touched) pages.
                pinned = max(state.pinned_floor_kb if params.pinned_relearn
                             else 0, obs.m_cur_kb - obs.sampled.wss_kb)
                learned = True
                note = ('learned in VG: swapping at %s, sampled %s'
                        % (_mib(obs.m_cur_kb), _mib(obs.sampled.wss_kb)))
            elif (obs.sampled is not None and obs.grew_from_kb is not None
                  and obs.full):
                # The balloon grew during the interval: the guest swapped
                # at the smaller size, and sampling also counts pages it
                # touched after the grow, so start - sampled is a lower
                # bound of the pinned pages: it may raise the correction,
                # never lower it.
                bound = obs.grew_from_kb - obs.sampled.wss_kb
                if bound > pinned:
                    pinned = bound
                    note = ('raised in VG: swapping after a grow from %s, '
                            'sampled %s' % (_mib(obs.grew_from_kb),
                                            _mib(obs.sampled.wss_kb)))
            swaps = state.swap_rounds + 1
            wss = _shortage_wss(state, obs)
            if swaps >= params.vg_to_g_rounds:
                return _Round(Mode.G, wss, pinned_kb=pinned, learned=learned,
                              transition='VG->G: swap activity in %d '
                                         'consecutive rounds' % swaps,
                              pinned_note=note, skipped=skipped)
            return _Round(Mode.VG, wss, swap_rounds=swaps, pinned_kb=pinned,
                          learned=learned, pinned_note=note, skipped=skipped)
        quiet = state.quiet_rounds + 1
        wss = sampled or _hold(state, obs)
        if quiet >= params.vg_to_v_rounds and not _close(sampled, obs,
                                                         params):
            return _Round(Mode.V, wss, pinned_kb=pinned,
                          transition='VG->V: no swap activity in %d '
                                     'consecutive rounds and sampled WSS '
                                     '%s below %s of allocation %s'
                          % (quiet, _mib(wss.wss_kb), pct,
                             _mib(obs.m_cur_kb)))
        return _Round(Mode.VG, wss, quiet_rounds=quiet, pinned_kb=pinned)

    # Mode.G: Geiger only; it cannot see a WSS below the allocation.
    if obs.short:
        return _Round(Mode.G, _shortage_wss(state, obs), pinned_kb=pinned)
    quiet = state.quiet_rounds + 1
    wss = techniques.TechniqueEstimate(obs.m_cur_kb, SOURCE_GEIGER_IDLE)
    if quiet >= params.g_to_v_rounds:
        # This round is V's: the sample primed in the last quiet round
        # (BadisState.sampling_wanted) estimates it, if there is one.
        return _Round(Mode.V, sampled or wss, pinned_kb=pinned,
                      transition='G->V: no swap activity in %d '
                                 'consecutive rounds' % quiet)
    return _Round(Mode.G, wss, quiet_rounds=quiet, pinned_kb=pinned)


@dataclasses.dataclass(frozen=True)
class _Guard:
    """The shrink guard after one round (see :func:`_guard`)."""
    wss: techniques.TechniqueEstimate
    held: bool
    active: bool                 # sampled evidence may not lower anything
    shrink_at: typing.Optional[float]
    shrink_from_kb: typing.Optional[int]
    shrink_counted: bool
    bad_shrinks: int
    hold_rounds: int
    guard_kb: int
    next_hold: int
    events: tuple
    floor_kb: int = 0            # what demand may not fall below (active)
    rise: bool = False           # the swap-ins are a rise, not a shrink's


def _guard(state, obs, params, wss):
    """The thrashing guard: a VM that swaps in is not shrunk on sampled
    evidence, and shrinks are paced by the swap-ins that follow them.

    * A round with swap-ins (``obs.swapping``) or one of the
      ``hold_rounds`` rounds after it does not let a sampling estimate
      (or a held one), nor the demand, fall below the allocation the
      guest swapped at (``guard_kb``, at most m_cur): a guest stalled on
      swap touches fewer pages per second, so its sample reads low; it is
      not a working-set measurement.
    * A shrink (``obs.shrunk``) followed by swap-ins within
      ``shrink_swapin_window`` seconds counts once in ``bad_shrinks``
      and holds the estimate for ``next_hold`` rounds; every such shrink
      doubles the next hold (up to ``shrink_hold_max_rounds``), and a
      shrink that the window passes without swap-ins resets it to
      ``shrink_hold_rounds``.
    """
    events = []
    base_hold = params.shrink_hold_rounds
    shrink_at, counted = state.shrink_at, state.shrink_counted
    shrink_from = state.shrink_from_kb
    bad, hold, guard_kb = state.bad_shrinks, state.hold_rounds, state.guard_kb
    next_hold = state.next_hold or base_hold
    window = params.shrink_swapin_window
    if (shrink_at is not None and not counted and
            obs.timestamp - shrink_at > window):
        next_hold = base_hold            # the last shrink held: unwind
        shrink_at = None
    if obs.shrunk:
        # A descent in steps (max_step_fraction of the booking a round) is
        # one shrink for the rise test below: the guest had the size
        # before its first step. Compared with the last step's start, a
        # guest that swaps three steps down read as a rise whenever
        # Geiger put it above the step before (Zipf, badis30: no bad
        # shrink counted, no floor, the same dip every minute).
        if (params.shrink_rise_from_descent and shrink_at is not None and
                not counted and shrink_from is not None):
            shrink_from = max(shrink_from, obs.shrunk_from_kb)
        else:
            shrink_from = obs.shrunk_from_kb
        shrink_at, counted = obs.timestamp, False
    active = hold > 0
    # Swap-ins that Geiger puts above the size before the shrink are a
    # rise of the working set, not the shrink's doing.
    rise = (obs.ghost is not None and shrink_from is not None and
            obs.ghost.wss_kb > shrink_from)
    swapping = obs.swapping and not _noise(state, obs, params)
    if swapping:
        if (shrink_at is not None and not counted and not rise and
                obs.timestamp - shrink_at <= window):
            bad += 1
            counted = True
            hold = max(hold, next_hold)
            events.append('shrink followed by swap-ins within %gs '
                          '(%d so far): no shrink on sampled evidence for '
                          '%d rounds' % (window, bad, hold))
            next_hold = min(params.shrink_hold_max_rounds,
                            max(1, next_hold * 2))
        hold = max(hold, base_hold)
        guard_kb = obs.m_cur_kb
        active = True
    elif hold > 0:
        hold -= 1
    if not params.shrink_guard:
        # bad shrinks are still counted (a metric), nothing is held
        return _Guard(wss=wss, held=False, active=False,
                      shrink_at=shrink_at, shrink_from_kb=shrink_from,
                      shrink_counted=counted, bad_shrinks=bad,
                      hold_rounds=0, guard_kb=0, next_hold=next_hold,
                      events=tuple(events), rise=rise)
    held = False
    floor = min(guard_kb, obs.m_cur_kb)
    if (active and wss.source not in SHORTAGE_SOURCES and
            wss.wss_kb < floor):
        wss = techniques.TechniqueEstimate(floor, SOURCE_SHRINK_GUARD)
        held = True
    return _Guard(wss=wss, held=held, active=active, shrink_at=shrink_at,
                  shrink_from_kb=shrink_from, shrink_counted=counted,
                  bad_shrinks=bad, hold_rounds=hold,
                  guard_kb=guard_kb if hold or swapping else 0,
                  next_hold=next_hold, events=tuple(events),
                  floor_kb=floor if active else 0, rise=rise)


def _recheck_pinned(state, obs, params, pinned, guarded):
    """The pinned-page correction re-estimated in a quiet round with a
    sample taken at a steady allocation, outside the shrink guard.

    * The guest did not swap at m_cur, so its pinned pages are at most
      m_cur - sampled: an upper bound whatever learned the correction,
      taken only from a sample that read every page (source
      ``vmware-referenced``: the error of n randomly sampled pages, about
      5 % of m_cur at n = 100, would drag it down on every high sample).
    * What is above the floor (pages known to be pinned) decays by
      ``pinned_decay`` x ``decay_scale`` each such round, so that a
      correction learned from cold data or a stalled sample is given
      back. A correction that was right comes back the way it was
      learned (the smaller allocation swaps, VG learns it again), and
      each such return halves ``decay_scale``.

    Returns ``(pinned_kb, note)`` (note None: unchanged)."""
    floor = state.pinned_floor_kb
    if (obs.sampled is None or not obs.steady or obs.short or guarded or
            pinned <= floor):
        return pinned, None
    if state.pinned_at is not None and state.pinned_at >= obs.timestamp:
        return pinned, None         # set this very round (calibration)
    if params.pinned_decay_evidence and not _decay_due(state, obs, params):
        return pinned, None
    bound = pinned
    if obs.sampled.source == techniques.SOURCE_VMWARE_REFERENCED:
        bound = obs.m_cur_kb - obs.sampled.wss_kb
    rate = params.pinned_decay * state.decay_scale
    decayed = pinned
    if rate > 0:
        decayed = pinned - max(1, int(rate * (pinned - floor)))
    new = max(floor, min(decayed, bound))
    if new >= pinned:
        return pinned, None
    if bound < decayed:
        return new, ('lowered: no swap-ins at %s with %s sampled'
                     % (_mib(obs.m_cur_kb), _mib(obs.sampled.wss_kb)))
    return new, 'decayed: no swap-ins (floor %s)' % _mib(floor)


_DECAY_NOTES = ('decayed', 'lowered')
# how a probe that lowered the correction says so (it starts with
# 'lowered' too: a step down that a shrink followed by swap-ins undoes)
_PROBE_NOTE = 'lowered by a balloon probe'
# corrections lowered on evidence, not on a decay's guess
_EVIDENCE_NOTES = (_PROBE_NOTE, 'bounded')


# Rounds in a row whose bound a sampled (not exact) back-end needs before
# the cap acts: the largest of their bounds is taken.
USED_BOUND_ROUNDS = 3
# A cap lower than the correction by less than this (KiB) is the balloon
# statistics' own noise between two periods (about 1 MiB): the same
# correction. Taken, it restarted the clocks of the correction's decay and
# probes (pinned_at) for nothing (TCG, load_idle: caps 8-456 KiB lower
# every few rounds, each postponing the next probe by a time slice).
USED_BOUND_MIN_KB = 1024


def _used_bound_skip(obs, guarded):
    """Why this round gives :func:`_bound_by_used` no bound, or None."""
    est = obs.sampled
    if est is None or est.low_kb is None:
        return 'no access sample'
    if obs.used_kb is None:
        return 'guest statistics unknown or moved during the interval'
    if not obs.steady:
        return 'balloon moved'
    if obs.short or obs.swapping:
        return 'swap activity'
    if guarded:
        return 'shrink guard'
    if est.low_kb > obs.used_kb:
        return ('statistics older than the sample (%s not free, %s seen)'
                % (_mib(obs.used_kb), _mib(est.low_kb)))
    return None


def _used_bounds(state, obs, skip):
    """This round's bounds for :func:`_bound_by_used`: the state's
    ``used_bounds`` with this round's bound added, or ``()`` when this
    round gives none (``skip``, from :func:`_used_bound_skip`: the run
    of rounds restarts)."""
    if skip is not None:
        return ()
    est = obs.sampled
    bound = obs.used_kb - est.low_kb
    if est.exact:
        return (bound,)
    return (state.used_bounds + (bound,))[-USED_BOUND_ROUNDS:]


def _bound_by_used(state, obs, pinned, bounds):
    """The pinned-page correction capped by the guest's own statistics
    (``pinned_used_bound``).

    Pinned pages are in use and were not referenced in the interval, so
    they fit in what the guest has not free (``used_kb``: balloon
    ``actual`` - ``unused``, which also counts its caches and cold data)
    less what sampling saw: a measured upper bound, whatever learned the
    correction. It matters when the guest has free memory, i.e. when the
    estimate is too high: a correction learned in VG from a sample that
    under-read (the guest stalled on swap, or swept slower than the
    interval) otherwise stays for good unless ``pinned_relearn`` decays
    it, and so does the estimate (CI at stop 29: 80 MiB over a falling
    working set for a minute). Taken only in a quiet round with a steady
    allocation, outside the shrink guard, when the statistics did not
    move during the interval and count at least what sampling saw
    (``bounds``, from :func:`_used_bounds`).

    What sampling saw is the sample's lower confidence end
    (``low_kb``): the whole count for a back-end that reads every page
    (smaps), which caps at once; for one that samples pages (page_idle,
    kmod: KVM) the Wilson bound at z = 2.576, and the cap acts only after
    ``USED_BOUND_ROUNDS`` such rounds in a row, at the largest of their
    bounds. A cap only ever lowers the correction, so one bound taken
    round after round would in the end act on the unlucky sample that
    over-read; three independent samples all over-reading beyond their
    lower ends (each in at most 1 % of samples) is a chance of at most
    about 1e-6. The price is width: at 100 pages of a 448 MiB guest a
    half-used sample's lower end is 56 MiB under its estimate, so the cap
    removes only a correction that far too high (more pages,
    ``sample_pages``, narrow it).

    The bound is short by the free memory the guest keeps anyway (its
    watermarks: the W1-W5 guest swaps with 15 MiB free at 128 MiB), and
    sampling also sees the hot part of the kernel's reservation, so it
    never goes below the first-sample calibration (which reads the same
    statistics at the first steady interval, MemAvailable-based) nor the
    floor: what it removes is a correction learned above those. Returns
    ``(pinned_kb, note)`` (note None: unchanged)."""
    floor = max(state.pinned_floor_kb, state.pinned_calibrated_kb)
    if pinned <= floor or not bounds:
        return pinned, None
    if not obs.sampled.exact and len(bounds) < USED_BOUND_ROUNDS:
        return pinned, None
    bound = max(floor, max(bounds))
    if bound > pinned - USED_BOUND_MIN_KB:
        return pinned, None
    if obs.sampled.exact:
        return bound, ('bounded: the guest has %s not free, sampling saw %s'
                       % (_mib(obs.used_kb), _mib(obs.sampled.wss_kb)))
    return bound, ('bounded: the guest has %s not free, sampling saw at '
                   'least %s (%s estimated), %d rounds in a row'
                   % (_mib(obs.used_kb), _mib(obs.sampled.low_kb),
                      _mib(obs.sampled.wss_kb), len(bounds)))


def _decay_due(state, obs, params):
    """Evidence-paced decay: the next step only once the last change
    of the correction (or the last swap activity, if later) is at least
    ``time_slice`` + ``shrink_swapin_window`` old: the max-average lets
    a lower estimate move the balloon only after ``time_slice``, and the
    shrink it causes then had ``shrink_swapin_window`` to show swap-ins.
    A step is thus taken only when the previous one cost nothing."""
    last = max(t for t in (state.pinned_at, state.swap_at, -1e18)
               if t is not None)
    return obs.timestamp - last >= state.probe_wait * (
        params.time_slice + params.shrink_swapin_window)


def _evicted_below(state, obs):
    """Whether the guest evicted, without swap-ins, at an allocation
    below what the correction before the latest step asked for: the
    pages the step stopped counting as pinned were swappable and not
    needed back (cold data)."""
    return (obs.evicted_kb > 0 and not obs.swapping and
            obs.sampled is not None and
            obs.m_cur_kb < obs.sampled.wss_kb + state.step_from_kb)


def _noise(state, obs, params):
    """Swap-ins that do not arm the shrink guard nor count as a bad
    shrink (``shrink_noise_filter``): the first swapping round after a
    shrink while the corrected sample is well under the allocation -- a
    guest reclaiming what the balloon took evicts a few hot pages with
    the cold ones and reads them back (choice 1 of the state machine). A
    shortage keeps swapping the next round and arms the guard then."""
    if not (params.shrink_noise_filter and obs.swapping and obs.shrunk):
        return False
    if state.short_kb or state.hold_rounds:
        return False
    if state.last_short:
        return False                 # the second round: a shortage
    return _far_below(_sampled_wss(state, obs), obs, params)


def _peak(state, note, pinned):
    """The correction before its current decay began."""
    decaying = state.pinned_note.startswith(_DECAY_NOTES)
    if note is not None and note.startswith(_DECAY_NOTES):
        return state.pinned_peak_kb if decaying else state.pinned_kb
    if note is None and decaying:
        return state.pinned_peak_kb
    return pinned


@dataclasses.dataclass(frozen=True)
class _Probe:
    """The balloon probe after one round (see :func:`_probe`)."""
    pinned_kb: int
    note: typing.Optional[str]
    fields: dict                 # BadisState fields of the probe
    probe_kb: typing.Optional[int] = None
    event: typing.Optional[str] = None
    # the probe ended by swap-ins: the correction is needed
    confirmed: bool = False
    # the probe ended without swap-ins after the guest evicted for it:
    # the allocation the guest held for its whole window (a shrink floor
    # above it is disproved; a probe that evicted nothing tested nothing)
    quiet_at_kb: typing.Optional[int] = None


_PROBE_FIELDS = ('probe_pinned_kb', 'probe_size_kb', 'probe_from_kb',
                 'probe_at', 'probe_seen_evict', 'probe_end_at',
                 'probe_wait', 'probe_readback_until', 'probe_readback_kb',
                 'probe_streak', 'probe_in_kb', 'probe_out_kb',
                 'probe_swap_at', 'probe_blind', 'probe_in_use_kb',
                 'probe_answers', 'probe_answer_pinned_kb',
                 'probe_answer_sample_kb', 'warm_wanted', 'warm_kb',
                 'warm_slope_kb_s', 'warm_at', 'warm_fresh',
                 'warm_spared_sample_kb', 'warm_low_kb', 'probe_debt_kb')


def _probe_due(state, obs, params):
    """Whether the next probe may start: the correction, swap activity
    and the last probe all at least ``probe_wait`` x (``time_slice`` +
    ``shrink_swapin_window``) old, as :func:`_decay_due` paces decay.

    ``probe_chain`` (with ``pinned_drop_rebase``): after a run of probes
    that lowered the correction (the guest lived through each for its
    whole window without reading back), the unit is
    ``shrink_swapin_window`` alone. The time slice in the wait lets the
    max-average forget the estimates of the old correction; rebased,
    they already carry the new one, and the balloon stays down instead
    of climbing back for a slice. Swap activity still restarts the
    wait, and a probe answered by swap-ins ends the run (its streak)
    and doubles the wait as before. Paged guest model, load-then-idle
    from boot: probes 9 s apart became 3-5 s apart; in production
    (a 3600 s slice, a 180 s window) one probe an hour becomes one
    every few minutes.

    ``calibration_probe_early``: the first probe of the first-sample
    calibration waits ``shrink_swapin_window`` alone too. Every estimate
    the max-average holds was made with that calibration, so there is
    nothing for the time slice to forget, and in production the cold
    data a guest loaded before the agent started stayed counted as
    pinned for the slice (paged guest model at production's clock,
    load-then-idle: 26 -> 48 % of the booking saved, the oracle 66 %).
    Swap activity still restarts the wait; a first probe answered by
    swap-ins doubles the next wait as before."""
    last = max(t for t in (state.pinned_at, state.swap_at,
                           state.probe_end_at, -1e18) if t is not None)
    chained = (params.probe_chain and params.pinned_drop_rebase and
               state.probe_streak > 0)
    first = (params.calibration_probe_early and state.pinned_unconfirmed and
             state.probe_end_at is None)
    unit = params.time_slice + params.shrink_swapin_window
    if state.probe_wait <= 1 and (chained or first):
        unit = params.shrink_swapin_window
    return obs.timestamp - last >= state.probe_wait * unit


def _dropped_in_use(state, obs, params):
    """With ``probe_in_use_evidence``: how much the guest's memory in use
    (balloon ``actual`` - ``usable``) fell below what it was when the
    running probe began, when by more than ``BALLOON_SLACK_KB``; else 0.

    Why: a guest gives up pages without a swap-out when they are clean
    copies of what swap already holds (the swap cache: pages written out
    and not yet freed when the reclaim that wrote them stopped, pages
    read back and not written since). After a first probe answered by
    its burst, the guest held 85-92 MiB of them (balloon ``disk_caches``;
    TCG, load-then-idle from a loaded start, badis69 r2); the next
    probes took their memory back with no swap-out counted, read as "no
    evictions", and the cold data stayed counted for the run (2.5 % of
    the booking saved against 28-33 % in the other runs). Memory in use
    does not count the page cache (MemAvailable does), so a guest that
    only drops file pages, whose refaults the host cannot see, gives no
    such evidence."""
    if (not params.probe_in_use_evidence or state.probe_in_use_kb is None or
            obs.in_use_kb is None):
        return 0
    fall = state.probe_in_use_kb - obs.in_use_kb
    return fall if fall > BALLOON_SLACK_KB else 0


def _probes(state, params):
    """Whether the balloon probe runs for this VM: ``pinned_probe``, or
    ``calibration_probe`` while its correction is unconfirmed (or at
    all times with ``calibration_reprobe``), or a probe still running.

    ``calibration_reprobe``: a confirmation is not for good. A probe
    answered by swap-ins while the guest was still settling (TCG,
    load-then-idle from boot: 9 s after boot, balloon 254 -> 234 MiB for
    a guest that had just loaded 241 MiB) kept 190 MiB of cold data
    counted as pinned for the rest of the run (2.8 % of the booking
    saved against about 40), in 5 of about 70 such runs since badis30.
    Each answered probe doubles the wait before the next (up to 16
    times ``time_slice`` + ``shrink_swapin_window``) and restarts its
    step at the smallest: a right correction costs a few small probes
    a day in production."""
    return (params.pinned_probe or state.probe_pinned_kb is not None or
            (params.calibration_probe and (state.pinned_unconfirmed or
                                           params.calibration_reprobe)))


def _probe(state, obs, params, wss, mode, guarded, pinned, demand,
           above_kb=0, max_avg_kb=None):
    """Test a lower pinned-page correction with the balloon
    (``pinned_probe``) instead of lowering the estimate.

    * Start, in a quiet V round sampled at a steady allocation outside
      the shrink guard, when the correction is above its floor, the
      demand has settled on this round's estimate (the max-average
      holds nothing higher: the balloon is not shrunk faster than it
      allows; or, with ``probe_over_demand``, it is the max-average that
      holds it, and the probe goes one step below the demand instead of
      below the estimate) and :func:`_probe_due`: the correction under
      test is one step lower (the larger of ``pinned_probe_step_kb`` and
      ``pinned_decay`` of what is above the floor, not below the
      floor); the balloon is
      asked for the estimate with that correction, without headroom
      (``Result.probe_kb``). The estimate, the max-average and the
      demand stay as they are: a correction that is right costs no
      estimate error, only the swap-ins of one probe.
    * While it runs (``shrink_swapin_window`` seconds) the balloon is
      held at that size. Swap-ins end it (:func:`probe_answered`; with
      ``probe_answer_rate`` only read back faster than
      ``swapin_bound_kb_s`` since it began), the correction kept (it was
      needed; the next probe waits twice as long, up to 16 times); with
      ``probe_burst_s``, for a probe that is the guest's first reclaim,
      only swap-ins that many seconds after its first, or in its last
      round, do (the first reclaim after a load is blind and read back
      in one burst).
      Swap-outs at an allocation below the estimate it started from,
      even fast enough to count as swap pressure, are the guest giving
      up pages (cold data, not pinned): what the probe looks for (stop
      35: the pressure used to end it, on TCG at 155 MiB for a 116 MiB
      need).
    * The balloon goes one step below what the guest uses when that is
      lower (``used_kb``, balloon statistics): the correction tested is
      lowered by as much, since a balloon above it evicts nothing.
    * At its end the lower correction is kept only if the guest so
      evicted (or, with ``probe_in_use_evidence``, gave up memory in use
      without writing it: :func:`_dropped_in_use`) and read nothing
      back; otherwise (no evictions: the balloon did not get there, or
      the guest had free memory) the correction stays and the next probe
      waits twice as long.

    With ``calibration_probe`` (and not ``pinned_probe``) only a
    correction still unconfirmed (``pinned_unconfirmed``: the first-sample
    calibration, or a probe's lowering of it) is probed, until a probe is
    answered by swap-ins or a VG round learns the correction: the
    calibration reads balloon statistics, which count data the guest
    loaded and left cold as in use exactly like pinned pages (issue 13:
    load_idle from boot, 50 -> 190 MiB), and only the balloon tells them
    apart. One probe's swap-ins per VM, not one per period.

    Returns a :class:`_Probe`."""
    fields = {k: getattr(state, k) for k in _PROBE_FIELDS}
    if state.probe_pinned_kb is None and state.probe_debt_kb:
        fields['probe_debt_kb'] = (
            0 if obs.evicted_kb > BALLOON_SLACK_KB else
            max(0, state.probe_debt_kb - obs.swapin_kb))
    if obs.warm_kb is not None:
        fields.update(warm_wanted=False, warm_kb=obs.warm_kb,
                      warm_slope_kb_s=obs.warm_slope_kb_s,
                      warm_at=obs.timestamp, warm_fresh=True,
                      warm_low_kb=None)
    if not _probes(state, params):
        return _Probe(pinned, None, fields)

    def ended(wait, streak=0, estimate_kb=None):
        # (probe_owns_readback: what the probe left in swap, and the
        # estimate its read-back is taken at)
        debt = 0
        if params.probe_owns_readback:
            debt = max(0, state.probe_out_kb + obs.evicted_kb -
                       state.probe_in_kb - obs.swapin_kb)
        return dict(fields, probe_pinned_kb=None, probe_size_kb=0,
                    probe_from_kb=0, probe_at=None, probe_seen_evict=False,
                    probe_end_at=obs.timestamp, probe_wait=wait,
                    probe_streak=streak, probe_in_kb=0, probe_out_kb=0,
                    probe_swap_at=None, probe_blind=False,
                    probe_in_use_kb=None, probe_debt_kb=debt,
                    probe_readback_kb=(state.probe_from_kb
                                       if estimate_kb is None
                                       else estimate_kb))

    longer = min(16, state.probe_wait * 2)
    low = state.probe_pinned_kb
    if low is not None:
        read_kb = state.probe_in_kb + obs.swapin_kb
        out_kb = state.probe_out_kb + obs.evicted_kb
        first = state.probe_swap_at
        if first is None and obs.swapping:
            first = obs.timestamp
        fields.update(probe_in_kb=read_kb, probe_out_kb=out_kb,
                      probe_swap_at=first)
        over = (obs.timestamp - state.probe_at >=
                params.shrink_swapin_window)
        burst = params.probe_burst_s if state.probe_blind else 0.0
        if (obs.swapping and
                probe_answered(read_kb, out_kb, params,
                               obs.timestamp - state.probe_at) and
                (over or obs.timestamp - first >= burst)):
            # (probe_burst_s: the guest's first reclaim is blind, every
            # page having been touched by the load, and the guest reads
            # back the hot pages it took in one burst, then evicts cold
            # ones; TCG, slow hot set: 40 of the 57 MiB a 18 MiB probe
            # made it write, within a second. Read-backs that go on past
            # the burst, or into the probe's last round, are the
            # allocation's; once the guest has reclaimed, its accessed
            # bits tell hot from cold and the first swap-in answers.)
            # read back: the pages were needed (swap growth alone is the
            # guest evicting to meet the probe's balloon: what it is for);
            # what it reads back next is the probe's doing too
            answers = (state.probe_answers + 1
                       if state.probe_answer_pinned_kb == pinned else 1)
            return _Probe(pinned, None, dict(
                ended(longer),
                probe_readback_until=(obs.timestamp +
                                      params.shrink_swapin_window),
                probe_answers=answers, probe_answer_pinned_kb=pinned,
                probe_answer_sample_kb=state.probe_from_kb - pinned),
                          confirmed=True,
                          event=(
                'balloon probe of a pinned-page correction of %s ended by '
                'swap-ins at %s: %s kept'
                % (_mib(low), _mib(obs.m_cur_kb), _mib(pinned))))
        dropped = _dropped_in_use(state, obs, params)
        # (below the estimate it started from, or at its balloon when
        # that is above the estimate: probe_evicts_one_step)
        reach = max(state.probe_from_kb - BALLOON_SLACK_KB,
                    state.probe_size_kb + BALLOON_SLACK_KB)
        evicted = state.probe_seen_evict or (
            (obs.evicted_kb > 0 or obs.pressure_kb > 0 or dropped) and
            obs.m_cur_kb < reach)
        if not over:
            fields.update(probe_seen_evict=evicted)
            return _Probe(pinned, None, fields,
                          probe_kb=state.probe_size_kb)
        held = max(state.probe_size_kb, obs.m_cur_kb)
        short = (params.probe_lowers_to_reached and
                 held > state.probe_size_kb + BALLOON_SLACK_KB)
        if short:
            # The balloon stopped short of the probe's size (the guest
            # could not give more in time): living at the balloon it got
            # to shows a correction lower by that much less, not the one
            # asked for. TCG, load_idle from a loaded start (stop 90's
            # CI): a probe asked 69 MiB, the balloon stopped at 96, the
            # guest's base and hot set, and the correction taken to the
            # probe's left the estimate 23 MiB under them. (By the
            # shortfall, not from the estimate: a probe sized one step
            # under what the guest uses asked for the lower correction's
            # headroom too.)
            low = min(pinned, low + held - state.probe_size_kb)
        if evicted and low >= pinned and params.probe_lowers_to_reached:
            # the correction is already at or under what the probe
            # showed (a bound lowered it meanwhile): nothing to lower
            return _Probe(pinned, None, ended(1, state.probe_streak),
                          event=(
                'balloon probe of a pinned-page correction of %s: the '
                'guest evicted at %s, the correction already at %s'
                % (_mib(low), _mib(held), _mib(pinned))))
        if evicted:
            read = ('without swap-ins' if not read_kb else
                    'reading back %s of the %s it evicted'
                    % (_mib(read_kb), _mib(out_kb)))
            if dropped:
                read = ('giving up %s of memory in use, %s of it written '
                        'to swap, %s' % (_mib(dropped), _mib(out_kb), read))
            at = _mib(state.probe_size_kb)
            if short:
                at = '%s (asked %s)' % (_mib(held), at)
            return _Probe(low, (
                _PROBE_NOTE + ': the guest evicted at a balloon of %s '
                '(estimate %s) %s for %gs'
                % (at, _mib(state.probe_from_kb), read,
                   params.shrink_swapin_window)),
                ended(1, state.probe_streak + 1,
                      estimate_kb=state.probe_from_kb - (pinned - low)),
                quiet_at_kb=held)
        return _Probe(pinned, None, ended(longer), event=(
            'balloon probe of a pinned-page correction of %s: no '
            'evictions at %s, %s kept'
            % (_mib(low), _mib(obs.m_cur_kb), _mib(pinned))))
    floor = state.pinned_floor_kb
    if params.pinned_probe:
        step_kb = max(params.pinned_probe_step_kb,
                      int(params.pinned_decay * (pinned - floor)))
    else:
        # calibration_probe: the smallest step first, since a right
        # calibration costs the read-back of one step (TCG: a 16 MiB step
        # cost 26-50 MiB of swap-ins), doubled after each step that
        # lowered it (a cold 140 MiB is given back in six probes)
        step_kb = params.pinned_probe_step_kb << min(state.probe_streak, 16)
        if params.calibration_probe_max_gap_fraction < 1:
            # the doubling overshoots the need by up to its last step: on
            # load-then-idle from a loaded start (paged guest model) the
            # sixth step, 57 MiB, took the balloon 21 MiB under the need
            # and the guest read 30 MiB back, all the swap-ins of its
            # run. A cap at a fraction of the gap bisects what is left.
            step_kb = min(step_kb, max(
                params.pinned_probe_step_kb,
                int(params.calibration_probe_max_gap_fraction *
                    (pinned - floor))))
    if (not params.pinned_probe and params.calibration_probe_min_fraction
            and pinned - floor < params.calibration_probe_min_fraction *
            obs.booked_kb):
        # all a series of probes could give back is the gap above the
        # floor; under this fraction of the booking one probe answered by
        # swap-ins costs more than the gap is worth (TCG and the paged
        # guest model, phases: a 21 MiB gap, one 4 MiB probe cost the
        # guest 14-21 MiB of swap-ins, 1-2 % of its run)
        return _Probe(pinned, None, fields)
    held = demand > wss.wss_kb + params.pinned_probe_step_kb
    # (probe_over_demand: only a demand the max-average holds; one a
    # slow start paces, or a hold keeps, is a shrink still to come)
    by_max_avg = (params.probe_over_demand and max_avg_kb is not None and
                  demand <= max_avg_kb)
    if (mode is not Mode.V or obs.sampled is None or not obs.steady or
            obs.short or guarded or pinned <= floor or
            (held and not by_max_avg) or
            not (_probe_due(state, obs, params) or
                 _fell_since_spared(state, obs, params, wss.wss_kb,
                                    pinned)) or
            _answered_enough(state, params, wss.wss_kb, pinned)):
        return _Probe(pinned, None, fields)
    # (the read is used up only by a probe that starts: one refused
    # below, by a hindsight floor, leaves it for the next round; TCG,
    # load-then-idle: three reads in a row, badis51 tcg120_2)
    warm, floor = _probe_warm(fields, obs, params, pinned, floor, longer,
                              wss.wss_kb)
    if warm is not None:
        return warm
    # probe_over_demand: tested one step below the demand the
    # max-average holds, not below the round's estimate (a shrink past
    # what the max-average allows)
    base = demand if held else wss.wss_kb
    low = max(floor, pinned - step_kb)
    size = max(0, base - (pinned - low))
    if obs.used_kb is not None and obs.used_kb - step_kb < size:
        # A balloon above what the guest uses evicts nothing and tests
        # nothing (TCG, load_idle from boot: 4 MiB probes at 228 MiB
        # for a guest using about 210 MiB, the cold 140 MiB kept): go one
        # step below what it uses; the correction tested is lowered by
        # as much, not below its floor.
        size = max(base - (pinned - floor), obs.used_kb - step_kb, 0)
        low = pinned - (base - size)
    elif (params.probe_evicts_one_step and obs.used_kb is not None and
            obs.used_kb - (pinned - low) > size):
        # The guest uses more than the estimate (memory the calibration
        # stopped following, page cache): a balloon a step under the
        # estimate would make it give up that excess too. TCG, sqlite3
        # paced (badis89 tcg_noslope): a 4 MiB step took the balloon 21
        # MiB down, the guest wrote 13-17 MiB to swap and read back what
        # answered the probe. It is asked for one step of what it uses,
        # at most the allocation the lower correction would be given
        # (its estimate and headroom): living there is what lowering the
        # correction needs shown.
        size = min(obs.used_kb - (pinned - low), size + sizing.headroom(
            size, params.headroom_kb, params.headroom_fraction))
    if size < above_kb:
        # a floor the guest's read-backs put there (hindsight): a probe
        # below it would take what it was shown to use. At the floor it
        # still tests a step when the guest uses more than that (it then
        # evicts), and a probe it lives through there, at or below where
        # it read back, releases the floor (shrink_floor.disproved). TCG,
        # load-then-idle (badis45): the first probe was read back at 236
        # MiB, the floor stepped down to 224 and every probe, one step
        # under the 225 MiB in use, was refused until it lapsed 60 s on.
        if (base - above_kb < params.pinned_probe_step_kb or
                (obs.used_kb is not None and
                 obs.used_kb <= above_kb + BALLOON_SLACK_KB)):
            return _Probe(pinned, None, fields)
        size = above_kb
        low = pinned - (base - size)
    fields.update(probe_pinned_kb=low, probe_size_kb=size,
                  probe_from_kb=base, probe_at=obs.timestamp,
                  probe_seen_evict=False, probe_in_kb=0, probe_out_kb=0,
                  probe_swap_at=None, probe_blind=not state.evicted_once,
                  probe_in_use_kb=obs.in_use_kb,
                  warm_spared_sample_kb=None, warm_fresh=False)
    return _Probe(pinned, None, fields, probe_kb=size, event=(
        'balloon probe of a pinned-page correction of %s (now %s): '
        'balloon %s, estimate kept at %s'
        % (_mib(low), _mib(pinned), _mib(size), _mib(wss.wss_kb))))


# how long a read over rounds stays good for a probe decision, in the
# probes' units of wait (time_slice + shrink_swapin_window)
WARM_FRESH_UNITS = 4


def _probe_warm(fields, obs, params, pinned, floor, longer, wss_kb):
    """With ``calibration_probe_warm_rounds``, a probe due: (the
    :class:`_Probe` that waits for a read over that many rounds, or ends
    the decision because the correction above its floor is touched
    within them, or None to go on; the floor the probe goes on with:
    ``floor`` plus what the read saw touched, or ``floor`` when the
    option is off or the back-end cannot read over rounds).

    Why: the correction counts what the guest uses and one round's
    sample did not see. Data the guest loaded and left cold (what the
    probe is for) is not touched in any number of rounds; the tail of a
    skewed pattern, or the rest of a hot set that moves, is, only less
    often than once a round. A probe of such a correction is answered by
    the read-back of everything it made the guest evict (the paged guest
    model, Zipf 0.8: 14 MiB a probe, a 256 MiB guest losing 4 % of its
    throughput over 120 s for 1 % of its memory). Read over several
    rounds (the accessed state not cleared between them), the part of
    the correction the guest touched is seen, and it becomes a floor for
    this probe: only the rest, cold, is tested, and when the rest is not
    worth a probe (``calibration_probe_min_fraction``, at least a step)
    there is none: the wait before the next decision doubles as after a
    probe answered by swap-ins, unless the sampled part of the estimate
    falls by a step (:func:`_fell_since_spared`). Measured anew before
    each series of probes, so it holds nothing learned for good. With
    ``calibration_probe_warm_slope``, no probe either when at the read's
    end the guest was still touching memory it had not touched within
    it faster than ``swapin_bound_kb_s`` (``warm_slope_kb_s``): what the
    read saw is then short of the working set under that bound.

    ``calibration_probe_warm_budget`` (in place of that test when the
    slope is known): the slope is not the read-back of one step, it is
    the read-back of giving up everything the read did not see touched.
    The series of probes after a read may lower the correction by
    :func:`warm_budget_kb` of the untouched gap, no more (the later
    probes' steps are cut to what is left of it); when less than the
    first probe's least is left, no probe, and the next decision takes a
    new read. TCG, sqlite3 paced (badis89): the guest touched new memory
    at 2.2-2.6 MiB/s after four rounds, every probe was refused, and the
    reference let 74 % of the 105 MiB table out; redis read at random,
    4-7 MiB/s over a gap of about 50 MiB, has less than a probe's worth."""
    if not (params.calibration_probe_warm_rounds and obs.can_read_warm):
        return None, floor
    fresh = (fields['warm_at'] is not None and (
        # a series of probes that each lowered the correction goes on
        # without a new read (each would delay the next step by as many
        # rounds: load-then-idle gave up its cold data in six probes)
        fields['probe_streak'] > 0 or
        # a read is good for one decision within four of the probes'
        # units of wait: rounds in which no probe may start (VG, a
        # demand above the estimate: sampled pages cross those lines by
        # noise) between it and the next that can must not send it for
        # another read, and another, with no probe ever starting (the
        # paged guest model at 512 MiB, W4 with sampled pages: within
        # one unit, reads one after the other and no probe in the run)
        (fields['warm_fresh'] and obs.timestamp - fields['warm_at'] <=
         WARM_FRESH_UNITS * (params.time_slice +
                             params.shrink_swapin_window))))
    if not fresh:
        fields.update(warm_wanted=True, warm_fresh=False)
        return _Probe(pinned, None, fields), floor
    # the part touched is in the correction above its floor (the guest
    # kernel's reservation): one round's sample did not see it
    warm_floor = min(pinned, floor + fields['warm_kb'])
    gap = pinned - warm_floor
    least = params.pinned_probe_step_kb
    if not params.pinned_probe:
        least = max(least,
                    params.calibration_probe_min_fraction * obs.booked_kb)
    slope = fields['warm_slope_kb_s']
    budget = params.calibration_probe_warm_budget and bool(slope)
    if budget and fields['warm_low_kb'] is None:
        fields['warm_low_kb'] = pinned - warm_budget_kb(
            gap, slope, params.swapin_bound_kb_s)
    if gap < least:
        why = ('the guest touched %s of it within %d rounds, %s is left to '
               'test' % (_mib(fields['warm_kb']),
                         params.calibration_probe_warm_rounds, _mib(gap)))
    elif budget:
        budget_floor = max(warm_floor, fields['warm_low_kb'])
        # (the first probe of a series needs as much as any; the later
        # ones go on while a step is left)
        if pinned - budget_floor >= (params.pinned_probe_step_kb
                                     if fields['probe_streak'] else least):
            return None, budget_floor
        why = ('the guest touched memory it had not touched within %d '
               'rounds at %s/s at their end: giving up more than %s of '
               'the %s left untouched would be read back faster than '
               'the swap-in bound of %s/s' % (
                   params.calibration_probe_warm_rounds, _mib(int(slope)),
                   _mib(pinned - budget_floor), _mib(gap),
                   _mib(params.swapin_bound_kb_s)))
        # the series is over: the next decision takes a new read
        fields.update(probe_streak=0)
    elif (params.calibration_probe_warm_slope and slope is not None and
            slope > params.swapin_bound_kb_s):
        # Denning: shrunk to what it touched within the read, the guest
        # would read back about this much a second, so the correction
        # above that is in use by the definition of a working set under
        # the swap-in bound (redis on TCG: 20 000 keys read at random,
        # 40-57 MiB touched in four rounds and 4-7 MiB/s more at their
        # end; its probes were answered by 7-30 MiB read back, badis52)
        why = ('the guest touched %s of it within %d rounds and memory '
               'it had not touched before at %s/s at the end, above the '
               'swap-in bound of %s/s' % (
                   _mib(fields['warm_kb']),
                   params.calibration_probe_warm_rounds, _mib(int(slope)),
                   _mib(params.swapin_bound_kb_s)))
    else:
        return None, warm_floor
    fields.update(warm_fresh=False, probe_end_at=obs.timestamp,
                  probe_wait=longer, warm_spared_sample_kb=wss_kb - pinned)
    return _Probe(pinned, None, fields, event=(
        'no balloon probe of the pinned-page correction of %s: %s'
        % (_mib(pinned), why))), warm_floor


def warm_budget_kb(untouched_kb, slope_kb_s, bound_kb_s):
    """How much of ``untouched_kb`` (memory in use that a read over
    rounds did not see touched) the guest may give up and read back at
    most ``bound_kb_s``, when at the read's end it touched memory the read
    had not seen at ``slope_kb_s``: ``untouched * bound / slope``.

    Why: the slope is the rate at which the untouched memory is touched,
    so each KiB of it is touched at ``slope / untouched`` a second on
    average; evicted, a KiB costs as much in read-backs (Denning: the
    slope of the working-set curve is the fault rate). The average is
    the pessimist's: the guest evicts what it touched longest ago, the
    colder part, first."""
    if not slope_kb_s or slope_kb_s <= 0:
        return untouched_kb
    return min(untouched_kb, int(untouched_kb * bound_kb_s / slope_kb_s))


def _fell_since_spared(state, obs, params, wss_kb, pinned):
    """Whether the sampled part of the estimate (``wss_kb`` less the
    correction) fell by at least ``pinned_probe_step_kb`` since a read
    over rounds last spared the probe: what the read saw touched may
    have gone cold with it, so the next read and decision need not wait
    out the doubled wait (the paged guest model at 512 MiB, W2 and W4:
    a sweep slower than a round read as touched, the probe spared, and
    after the sweep's fall the correction stayed high for the wait:
    +2 points of W1-W5 error with sampled pages)."""
    # still paced as a first probe would be (one unit of wait since the
    # correction, swap activity and that decision), only not doubled
    return (state.warm_spared_sample_kb is not None and
            wss_kb - pinned <= state.warm_spared_sample_kb -
            params.pinned_probe_step_kb and
            _probe_due(dataclasses.replace(state, probe_wait=1), obs,
                       params))


def _answered_enough(state, params, wss_kb, pinned):
    """Whether ``calibration_reprobe_answers`` probes in a row were
    answered by swap-ins at this correction and the sampled part of the
    estimate has not fallen a step below what it was when the last of
    them began.

    Why: a probe is an experiment, and the same one under the same
    conditions gives the same answer at the price of the same
    read-backs. On a skewed guest (Zipf 0.8, paged guest model) the
    correction holds the rarely touched tail; every probe of it was
    answered, each costing 14 MiB of read-backs, and at the doubling
    wait's cap they go on for the guest's life. A sampled working set
    that fell (data left cold since: load-then-idle, a hot set that
    shrank) is a new experiment, as is a correction changed otherwise.
    """
    n = params.calibration_reprobe_answers
    return bool(n and state.probe_answers >= n and
                state.probe_answer_pinned_kb == pinned and
                wss_kb - pinned > state.probe_answer_sample_kb -
                params.pinned_probe_step_kb)


def probe_answered(read_kb, out_kb, params, elapsed_s=None):
    """Whether a running probe's swap activity says the correction is
    needed: the guest read back at least ``probe_readback_fraction`` of
    what it evicted since the probe began (any read-back when it is 0 or
    nothing evicted was counted), and, with ``probe_answer_rate`` and
    ``elapsed_s`` (seconds since the probe began) known, faster than
    ``swapin_bound_kb_s`` over that time.

    A right correction leaves the probe only pages in use to evict, and
    the guest reads them back within a round or two (TCG, phases: 8 MiB
    within a second of a probe that took the balloon 21 MiB down, 14-23
    MiB in all). Cold data counted as pinned is evicted and stays out: a
    load-then-idle guest from boot read back 3 MiB after a probe that took
    the balloon 26 MiB down (stop 44); its first page read back had ended
    the probe, and a 140 MiB cold correction was kept for good.

    The rate: a balloon at which the guest reads back under the bound
    holds its working set by the definition Badis uses (issue 13, item
    3), and the guest has lived through the probe. A hot set moving
    every 15 minutes (paged guest model at production's clock) read
    back, at its move, 80 of the 90 MiB a probe had made it evict over
    the probe's 3 minutes (0.45 MiB/s); taken as an answer, that kept a
    correction holding the loaded data as pinned."""
    if (params.probe_answer_rate and elapsed_s is not None and
            read_kb <= params.swapin_bound_kb_s * max(elapsed_s, 1e-9)):
        return False
    fraction = params.probe_readback_fraction
    return fraction <= 0 or out_kb <= 0 or read_kb >= fraction * out_kb


def _forced(state, obs):
    """Whether the balloon is below what the last round asked for: the
    host's allocator (Algorithm 1, another VM's borrowing) took it
    there, not Badis."""
    return (state.last_asked_kb is not None and
            obs.m_cur_kb < state.last_asked_kb - BALLOON_SLACK_KB)


def _probe_answer(state, obs, params):
    """Whether this round's swap activity may be a balloon probe's
    answer: a probe runs, or one ended within ``shrink_swapin_window``
    (or the read-back window of one answered by swap-ins). Such a
    shortage is not a recurrence of the working set for the VM's own
    time slice (:mod:`.adaptive_slice`). TCG, slow hot set from a loaded
    start (stop 74): the first probe's swap-ins and, 28 s later, the
    read-back of what the last probe of the series made the guest evict
    (2 s after it ended) lengthened the slice to 42 s, and the read-back's
    peak at the booking held the balloon there for as long."""
    if state.probe_pinned_kb is not None:
        return True
    if _in_probe_readback(state, obs, params):
        return True
    return (state.probe_end_at is not None and
            obs.timestamp - state.probe_end_at <= params.shrink_swapin_window)


def _in_probe_readback(state, obs, params):
    """Whether this round's swap-ins are the read-back of what the last
    probe made the guest evict: within the read-back window of a probe
    answered by swap-ins, or (:func:`_debt_read`) of its pages."""
    if (state.probe_readback_until is not None and
            obs.timestamp <= state.probe_readback_until):
        return True
    return _debt_read(state, obs, params)


# the share of a round's swap-ins that must be of a probe's pages for the
# round to be the probe's read-back (histogram buckets straddle the line)
DEBT_SHARE = 0.9


def _debt_read(state, obs, params):
    """With ``probe_owns_readback``: whether this round's swap-ins are
    pages the last probe made the guest evict (memstore's reuse distance
    of each is under what the probe left in swap, ``probe_debt_kb``,
    since the guest has written nothing after it: hindsight.recent_kb)
    and the guest writes nothing this round either.

    Why: a page evicted at the probe's balloon and read back at a larger
    one says nothing of the larger one. TCG, sqlite3 paced (badis90): a
    4 MiB step made the guest write 11 MiB (its reclaim frees past its
    watermarks), it read it all back over the next 12 s, long after the
    probe's read-back window; read as a shortage, the balloon went to the
    booking and a floor held it there for 40 s, and the pages still in
    swap read back at 212 MiB half a minute later raised the floor to
    the booking again. Without reuse distances (the balloon-statistics
    monitor) only the read-back window applies."""
    if not (params.probe_owns_readback and state.probe_debt_kb > 0 and
            state.probe_pinned_kb is None and obs.swapin_kb > 0 and
            obs.swapin_distances is not None and
            obs.evicted_kb <= BALLOON_SLACK_KB):
        return False
    recent = hindsight.recent_kb(obs.swapin_distances, state.probe_debt_kb)
    return recent >= DEBT_SHARE * obs.swapin_kb


def _probe_swap_kb(state, obs, params):
    """The estimate a probe started from when this round's swap
    activity is the probe's doing (see step()), else 0. While the probe
    runs, Geiger's WSS more than what the probe took above that estimate
    is a rise (a shortage as usual); during the read-back window every
    swap-in is the probe's: Geiger's WSS is taken from an allocation
    that grew back meanwhile and reads high (TCG: 200-256 MiB for a
    156 MiB guest), so a real rise then waits out the window.

    ``probe_rise_written``: what the probe took is also what the guest
    wrote to swap since it began. A balloon above the estimate (its
    headroom) and the kernel's reclaim, which frees more than asked,
    make the guest evict far more than the step (TCG, slow hot set: 57
    MiB written for a 4 MiB step from an estimate 14 MiB under the
    balloon); a page read back from among them has a reuse distance up
    to that much, and Geiger's WSS (the allocation plus a distance)
    read as a rise: the swap-ins then counted as a bad shrink, a floor
    and a recurrence beside the probe's own answer."""
    if not obs.short:
        return 0
    if state.mode is not Mode.V:
        # (a sample at the allocation's edge, VG, then the probe's pages
        # read back took the balloon to G and the booking: TCG, sqlite3
        # paced, 20 s after a probe; the pages say whose they are)
        if state.mode is Mode.VG and _debt_read(state, obs, params):
            return state.probe_readback_kb
        return 0
    if state.probe_pinned_kb is not None:
        # a reuse distance beyond what the probe took is a rise; taken
        # down to the allocation the balloon reached, which can be below
        # the probe's target (TCG: 4 MiB, with a 4 MiB step)
        low = min(state.probe_size_kb, obs.m_cur_kb)
        limit = state.probe_from_kb + (state.probe_from_kb - low)
        if params.probe_rise_written:
            # the allocation plus every distance the probe's writes span
            limit = max(limit, low + state.probe_out_kb + obs.evicted_kb)
        if obs.ghost is not None and obs.ghost.wss_kb > limit:
            return 0
        return state.probe_from_kb
    if _in_probe_readback(state, obs, params):
        return state.probe_readback_kb
    return 0


# Balloon sizes closer than this are the same (observation.py).
BALLOON_SLACK_KB = floors.SLACK_KB


def held_shortage(floor, obs, sample_kb=None):
    """Whether this round's swap-ins are a shortage of a floor that held
    the demand (``shrink_floor_held_shortage``): the guest swapped at an
    allocation the balloon did not shrink to since the last round, below
    the booking, while the floor (no longer in the shortage that set it)
    put the balloon there and the guest's own sample (``sample_kb``, with
    the pinned-page correction; the last one in a round not sampled)
    asked for less than the floor, whether or not its statistics showed
    memory free.

    Why: the steady-shortage rule needs a round sampled at a steady
    allocation, and the guard counts a bad shrink only when Geiger does
    not read a rise; a moving hot set, whose Geiger reads its whole data
    and whose swap-ins wake a round between two sampled ones, met
    neither at its floor and went through one more shrink-and-swap cycle
    per miss (TCG, badis34, hotset once loaded: shortages at 12 s and 26 s
    left the floor at 192-204 MiB for a need of 236; the raise came at
    57 s). Free memory does not excuse it: the pages read back at a floor
    that held for quiet rounds were evicted at or above it and touched
    again since, and the balloon statistics are up to a period old (TCG,
    badis35: 12 MiB free by them at 204 MiB, 22 MiB read back in the
    round, Geiger 56 MiB beyond the allocation; with the free-memory test
    five such shortages in 100 s raised nothing).

    Why the sample: a working set that rises past the floor is sampled
    above it while the max-average still lags under it; its swap-ins are
    the rise's, which the shortage rules grow for, not a sign that the
    floor is too low, and a doubling raise of the floor overshot the
    rise (TCG, badis36, W1 on steps: a raise of 64 MiB to 240 MiB for a
    working set of 180, sampled at 164 above a floor of 160)."""
    return bool(floors.tested(floor) and obs.swapping and
                not obs.shrunk and
                obs.m_cur_kb < obs.booked_kb - BALLOON_SLACK_KB and
                (sample_kb is None or
                 sample_kb < floor.kb - BALLOON_SLACK_KB))


def _rise_demands(state, obs, params, r, wss):
    """``(demand, log line)`` of each rule for a rising working set that
    applies to this round, in order: the shortage jump
    (:func:`shortage_demand`), the ramp (:func:`shortage_ramp_demand`)
    and the rise seen by sampling (:func:`reached_demand`). Each that
    asks more than the demand so far raises it, for this round only."""
    if (params.shortage_grow_fraction and obs.short and
            wss.source in SHORTAGE_SOURCES and
            fresh_allocation(obs, params.shortage_grow_out_ratio)):
        jump = shortage_demand(obs, params.shortage_grow_fraction)
        yield jump, ('shortage: demand %s, %d%% of the way from %s to the '
                     'booking (estimate %s)'
                     % (_mib(jump),
                        round(100 * params.shortage_grow_fraction),
                        _mib(obs.m_cur_kb), _mib(wss.wss_kb)))
    if (params.shortage_ramp and obs.short and state.last_short and
            wss.source in SHORTAGE_SOURCES):
        ahead = shortage_ramp_demand(obs, wss.wss_kb)
        yield ahead, ('rise: demand %s, one more round of growth ahead of '
                      'the estimate %s (allocation %s)'
                      % (_mib(ahead), _mib(wss.wss_kb), _mib(obs.m_cur_kb)))
    if params.vg_entry_grow and r.reached:
        ahead = reached_demand(obs, wss.wss_kb,
                               state.recent[-1] if state.recent else None)
        yield ahead, ('rise seen by sampling: demand %s, the estimate %s '
                      'and its rise once more (allocation %s)'
                      % (_mib(ahead), _mib(wss.wss_kb), _mib(obs.m_cur_kb)))


def step(state, obs, params=None):
    """One Badis round for one VM: ``(new_state, result)``.

    ``state`` may be ``None`` for a VM seen for the first time.
    """
    params = params or BadisParams()
    if state is None:
        state = BadisState.initial(params)
    real = obs
    probe_kb = _probe_swap_kb(state, obs, params)
    if probe_kb:
        # Swap activity while a balloon probe holds the guest below the
        # estimate, or while it reads back what a probe answered by
        # swap-ins made it evict (shrink_swapin_window): our doing, not a
        # shortage, a bad shrink, a floor nor a recurrence. The round is
        # read as quiet, in V, at the estimate the probe started from;
        # only the probe itself (_probe) and the pacing see the swap
        # activity. TCG (stop 35): read as a shortage, one 16 MiB probe
        # of a right correction took the balloon to the booking.
        obs = dataclasses.replace(obs, swapping=False, pressure_kb=0)
    r = _fsm(state, obs, params)
    if probe_kb:
        r = _Round(Mode.V, techniques.TechniqueEstimate(
            probe_kb, SOURCE_PROBE), pinned_kb=r.pinned_kb)
    g = _guard(state, obs, params, r.wss)
    wss = techniques.TechniqueEstimate(
        max(0, min(g.wss.wss_kb, obs.booked_kb)),
        g.wss.source)
    events = list(g.events)
    floor, floor_event = state.floor, None
    ledger = state.ledger
    lifted = False
    # the host's allocator, not Badis, took the balloon below what the
    # last round asked for (hindsight and the VM's own time slice)
    forced = _forced(state, obs)
    if params.shrink_floor:
        sample = _sampled_wss(state, obs)
        # the swap-ins of a round were mostly at its start: a balloon
        # grown since the last round (a VG round's estimate) hides the
        # allocation that was too small
        swapped_at = min(x for x in (obs.m_cur_kb, obs.grew_from_kb,
                                     state.last_m_cur_kb) if x is not None)
        bad_shrink = g.bad_shrinks > state.bad_shrinks
        # a hot set that moves every 4 s swapped at steady allocations the
        # shrinks had reached 4-6 s before, outside the guard's window:
        # the floor came up by one bad shrink a cycle, the balloon went
        # to the booking and back down every 15 s (TCG, stop 37)
        below_booking = obs.m_cur_kb < obs.booked_kb - BALLOON_SLACK_KB
        shortage = not bad_shrink and (
            (params.shrink_floor_steady and obs.swapping and obs.full and
             obs.steady and below_booking) or
            (params.shrink_floor_held_shortage and
             held_shortage(state.floor, obs,
                           _last_sample_kb(state, obs, sample))))
        floor, floor_event = floors.update(
            state.floor, bad_shrink=bad_shrink, shortage=shortage,
            m_cur_kb=swapped_at,
            sample_kb=sample.wss_kb if sample is not None else None,
            short=obs.short, full=obs.full, used_kb=obs.used_kb,
            params=params.floor_params, booked_kb=obs.booked_kb,
            in_use_kb=obs.in_use_kb, out_kb=obs.evicted_kb,
            in_kb=obs.swapin_kb)
        if floor_event:
            events.append(floor_event)
        ledger, bad_from, hind_event = hindsight.update(
            state.ledger, shrunk=obs.shrunk,
            shrunk_from_kb=obs.shrunk_from_kb, m_cur_kb=obs.m_cur_kb,
            out_kb=obs.evicted_kb, in_kb=obs.swapin_kb,
            in_distances=obs.swapin_distances,
            params=params.hindsight_params,
            # (a probe's shrink is judged here too: a hot set that moves
            # every few seconds reads back after the probe's window, and
            # only hindsight sees it; left to the probe alone, the paged
            # guest model's hotset from a loaded start walked its
            # correction down and lost 11 % instead of 1 %, badis90)
            forced=forced)
        if hind_event:
            events.append(hind_event)
        if bad_from:
            floor, floor_event = floors.hindsight(
                floor, bad_from, obs.booked_kb, params.floor_params,
                sample.wss_kb if sample is not None else None,
                out_kb=max(0, ledger.out_kb - ledger.in_kb),
                # where the guest read back (the ledger ends at its
                # horizon in the round it asks for the floor)
                read_at_kb=ledger.low_kb or min(
                    state.ledger.low_kb or obs.m_cur_kb, obs.m_cur_kb))
            if floor_event:
                events.append(floor_event)
        floored = floors.apply(
            floor, wss.wss_kb, obs.booked_kb,
            evidence=not params.shrink_floor_estimate_raise)
        counted = params.shrink_floor_estimate or (
            params.shrink_floor_estimate_confirmed and floor.confirmed)
        lifted = counted and floored > wss.wss_kb
        if lifted:
            # the guest swapped at that allocation: a lower bound of its
            # working set that the sample missed; in WSS^max_avg too, so
            # the controller packs the VM at the size its balloon is held
            wss = techniques.TechniqueEstimate(floored, SOURCE_SHRINK_FLOOR)
    floor_note = floor_event

    recent = (state.recent + (wss.wss_kb,))[-params.average_window:]
    avg = sum(recent) // len(recent)

    # Sliding maximum of the moving average over the last time slice:
    # a monotonic queue, so the state stays small whatever the round rate.
    slice_params = params.slice_params
    probed = _probe_answer(state, obs, params)
    time_slice, slice_event = adaptive_slice.update(
        state.slice, now=obs.timestamp, short=obs.short,
        last_short=state.last_short, m_cur_kb=obs.m_cur_kb,
        params=slice_params, probe=probed, forced=forced, avg_kb=avg)
    if slice_event:
        events.append(slice_event)
    horizon = obs.timestamp - time_slice.length(slice_params)
    window = [(t, a) for t, a in state.window if t > horizon and a > avg]
    window.append((obs.timestamp, avg))
    max_avg = window[0][1]

    demand = max_avg
    if wss.source in SHORTAGE_SOURCES:
        demand = max(demand, wss.wss_kb)
    # the guard holds the demand too: the moving average still carries
    # the low samples of the rounds before the swap-ins
    demand = max(demand, min(g.floor_kb, obs.booked_kb))
    if params.no_shrink_below_estimate:
        held = hold_at_estimate(demand, wss.wss_kb, obs.m_cur_kb, params)
        if held > demand:
            events.append('estimate %s above the max-average %s: no shrink '
                          'below it' % (_mib(wss.wss_kb), _mib(max_avg)))
            demand = held

    first_at = state.first_at if state.first_at is not None else \
        obs.timestamp
    warmup = params.warmup_slices * params.time_slice
    if warmup and obs.timestamp - first_at < warmup:
        # the max-average is a maximum over one time slice: until one
        # slice of rounds is seen, it is the maximum of whatever moment
        # the agent or the VM started in (a guest loading its data, a
        # sample of its first second). No shrink on that.
        hold = hold_demand(obs.m_cur_kb, params)
        if hold > demand:
            if state.first_at is None:
                events.append('warm-up: no shrink below %s for %gs (one '
                              'time slice x %g)' % (
                                  _mib(obs.m_cur_kb), warmup,
                                  params.warmup_slices))
            demand = hold
    if params.vg_no_shrink and r.mode is Mode.VG:
        # VG means the sample reached the allocation (or the guest
        # swaps): the max-average still carries the lower samples before
        # a rise, and shrinking on it shrinks into the rise. VG -> V
        # (quiet rounds, sample under the threshold) lets it shrink.
        demand = _no_shrink(demand, obs, params, events,
                            'VG: no shrink below %s (max-average %s lags '
                            'the sample %s)' % (
                                _mib(obs.m_cur_kb), _mib(max_avg),
                                _mib(wss.wss_kb)))
    if params.no_shrink_while_allocating and obs.allocating:
        # the sample and the moving average are of the memory the guest
        # had; it is taking more (badis33: Zipf from boot shrank 256 ->
        # 190 MiB in the three rounds its data was still loading, and
        # read 9 MiB back)
        demand = _no_shrink(demand, obs, params, events,
                            'allocating: no shrink below %s (memory in use '
                            'rose during the sampled interval)'
                            % _mib(obs.m_cur_kb))
    jumped_at = state.jumped_at
    if (jumped_at is not None and
            obs.timestamp - jumped_at <= params.time_slice):
        # after a shortage jump, the moving average still lags the rise
        # the jump covered: give the excess back down to this round's
        # estimate, not below it
        demand = after_rise_demand(demand, wss, obs, params)
    for ask, event in _rise_demands(state, obs, params, r, wss):
        if ask > demand:
            events.append(event)
            demand = ask
            jumped_at = obs.timestamp
    if r.skipped:
        events.append(r.skipped)
    floor_held_kb = 0
    if params.shrink_floor:
        # the moving average still carries the rounds before the floor
        floored, floor = floors.holding(
            floor, demand, obs.booked_kb, lifted=lifted,
            at_demand=params.shrink_floor_hold_at_demand)
        floor_held_kb, demand = floored - demand, floored
    budget, budget_event = swapin_budget.update(
        state.budget, swapin_kb=obs.swapin_kb, interval_s=obs.interval_s,
        rise=g.rise,
        limit_kb_s=params.swapin_budget_kb_s,
        window_s=params.swapin_budget_rounds * params.round_interval)
    if budget_event:
        events.append(budget_event)
    hold_kb = hold_demand(obs.m_cur_kb, params)
    if budget.over:
        demand = max(demand, hold_kb)
    if obs.hold:
        # before the slow start, which then sees no descent: a paced
        # demand the hold masked was logged as a shrink that never came
        demand = _no_shrink(demand, obs, params, events,
                            'shrink held: %s' % obs.hold_reason)
    demand, descent, pace_event = slow_start.pace(
        state.descent, demand_kb=demand, hold_kb=hold_kb,
        swapping=obs.swapping or obs.short, shrunk=obs.shrunk,
        first_kb=params.shrink_slow_start_kb,
        min_move_kb=params.balloon_min_change_kb)
    if pace_event:
        events.append(pace_event)
    demand, time_slice = adaptive_slice.hold(
        time_slice, now=obs.timestamp, demand_kb=demand, short=obs.short,
        last_short=state.last_short, params=slice_params, probe=probed,
        forced=forced)
    pinned, note = r.pinned_kb, r.pinned_note
    decayed_from = state.pinned_peak_kb
    floor_kb = state.pinned_floor_kb
    step_from = state.step_from_kb
    if params.pinned_decay_evidence:
        decayed_from = step_from
    if params.pinned_relearn and note is None and (
            g.bad_shrinks > state.bad_shrinks and pinned < decayed_from):
        # a shrink followed by swap-ins after the correction decayed:
        # the decay went too far; take it back and slow it down
        pinned, note = decayed_from, 'restored: shrink followed by swap-ins'
        if params.pinned_decay_evidence:
            # the step below it was shown to swap: not again
            floor_kb = max(floor_kb, pinned)
            note += ' (kept as its floor)'
    probing, evicted = state.probing, state.probe_evicted
    probe_wait = state.probe_wait
    if params.pinned_decay_evidence and probing:
        evicted = evicted or _evicted_below(state, obs)
        if note is not None:
            probing = False              # restored or learned: judged
        elif (params.pinned_relearn and not evicted and
              _decay_due(state, obs, params)):
            # the step made the guest evict nothing below the old
            # estimate: no sign of cold data; take it back, wait longer
            probing = False
            if pinned < step_from:
                pinned = step_from
                note = ('restored: no evictions below the old estimate '
                        'since the last step')
                probe_wait = min(16, probe_wait * 2)
    if (note is None and params.pinned_relearn and
            not params.pinned_probe):
        pinned, note = _recheck_pinned(state, obs, params, pinned, g.active)
        if note is not None and params.pinned_decay_evidence:
            if probing and evicted:
                probe_wait = 1           # the last step was right
            probing, evicted = True, False
    used_skip = _used_bound_skip(obs, g.active)
    used_bounds = (_used_bounds(state, obs, used_skip)
                   if params.pinned_used_bound else ())
    if note is None and params.pinned_used_bound:
        pinned, note = _bound_by_used(state, obs, pinned, used_bounds)
    # a shrink floor does not hold the probe back: a probe below it that
    # the guest lives through shows it wrong (below)
    pr = _probe(state, real, params, wss, r.mode, g.active, pinned,
                demand - floor_held_kb,
                above_kb=floor.kb if floor.evidenced else 0,
                max_avg_kb=max_avg)
    floor, floor_event = floors.disproved(floor, pr.quiet_at_kb,
                                          params.shrink_swapin_window)
    if floor_event:
        events.append(floor_event)
        floor_note = floor_event
    if note is None and pr.note is not None:
        pinned, note = pr.pinned_kb, pr.note
    elif (note is not None and pr.fields['probe_pinned_kb'] is not None
          and state.probe_pinned_kb is not None):
        # the correction changed otherwise (learned in VG...) while a
        # probe ran: the probe of the old one is moot (one that starts
        # this round was sized on the new one). Lowered to at most what
        # it tested (pinned_used_bound: the guest gave up cold pages to
        # it and its statistics say so) it went as a probe that lowered
        # it would: the next step is twice as long (TCG, stop 36: the cap
        # ended every probe of a cold calibration and the step stayed 8
        # MiB)
        done = pinned <= pr.fields['probe_pinned_kb']
        pr = dataclasses.replace(pr, probe_kb=None, fields=dict(
            pr.fields, probe_pinned_kb=None, probe_size_kb=0,
            probe_from_kb=0, probe_at=None, probe_seen_evict=False,
            probe_end_at=obs.timestamp,
            probe_wait=1 if done else pr.fields['probe_wait'],
            probe_streak=pr.fields['probe_streak'] + done))
    if pr.event:
        events.append(pr.event)
    if _probes(state, params):
        # the probe paces itself; otherwise the decay's pace stands
        # (pinned_relearn with the calibration confirmed or never set)
        probe_wait = pr.fields['probe_wait']
    unconfirmed = state.pinned_unconfirmed and not (
        pr.confirmed or r.learned or
        (note is not None and pinned > state.pinned_kb))
    calibrated = state.pinned_calibrated_kb
    if note is not None and note.startswith(_PROBE_NOTE):
        # the calibration was shown to count data the guest gives up: no
        # longer a floor of pinned_used_bound's cap (which then removes
        # the rest at once when the guest has that much free)
        calibrated = 0
    decay_scale = state.decay_scale
    if note is not None and note.startswith(_DECAY_NOTES):
        step_from = state.pinned_kb
    elif note is not None and pinned > state.pinned_kb:
        step_from = pinned
    if note is not None and pinned != state.pinned_kb:
        events.append('pinned-page correction %s -> %s, %s'
                      % (_mib(state.pinned_kb), _mib(pinned), note))
        if (params.pinned_drop_rebase and pinned < state.pinned_kb and
                note.startswith(_EVIDENCE_NOTES)):
            drop = state.pinned_kb - pinned
            seen = (obs.sampled.wss_kb if obs.sampled is not None
                    else state.last_sampled_kb or 0)
            now_kb = _corrected(state, obs, seen, pinned_kb=pinned)
            recent, window = rebase_estimates(recent, window, -drop,
                                              obs.booked_kb, low_kb=now_kb)
            if pr.probe_kb is None and demand > hold_kb:
                # this round's demand came from the same averages; the
                # floors it may hold were tested by the probe (above)
                demand = max(hold_kb, min(demand, max(now_kb,
                                                      demand - drop)))
            events.append('moving average lowered by %s with the '
                          'correction' % _mib(drop))
        if (pinned > state.pinned_kb and
                state.pinned_note.startswith(('decayed', 'lowered'))):
            # learned back above what the decay had left: it was right
            decay_scale = max(1.0 / 16, decay_scale / 2)
    else:
        note = None
    short = wss.wss_kb if (obs.short and
                           wss.source in SHORTAGE_SOURCES) else 0
    new_state = BadisState(mode=r.mode, swap_rounds=r.swap_rounds,
                           quiet_rounds=r.quiet_rounds,
                           pinned_kb=pinned, short_kb=short,
                           learned=state.learned or r.learned, recent=recent,
                           window=tuple(window),
                           pinned_floor_kb=floor_kb,
                           pinned_calibrated_kb=calibrated,
                           pinned_unconfirmed=unconfirmed,
                           used_bounds=used_bounds,
                           swap_at=(obs.timestamp if real.short
                                    else state.swap_at),
                           step_from_kb=step_from,
                           probing=probing, probe_evicted=evicted,
                           probe_wait=probe_wait,
                           decay_scale=decay_scale,
                           pinned_peak_kb=_peak(state, note, pinned),
                           pinned_note=(note if note is not None
                                        else state.pinned_note),
                           pinned_at=(obs.timestamp if note is not None
                                      else state.pinned_at),
                           shrink_at=g.shrink_at,
                           shrink_from_kb=g.shrink_from_kb,
                           shrink_counted=g.shrink_counted,
                           bad_shrinks=g.bad_shrinks,
                           hold_rounds=g.hold_rounds, guard_kb=g.guard_kb,
                           next_hold=g.next_hold,
                           last_sampled_kb=(obs.sampled.wss_kb
                                            if obs.sampled is not None
                                            else state.last_sampled_kb),
                           last_swapin_rate_kb=(
                               (obs.swapin_rate_kb or 0.0)
                               if obs.sampled is not None
                               else state.last_swapin_rate_kb),
                           last_short=obs.short, floor=floor,
                           floor_note=floor_note or state.floor_note,
                           floor_at=(obs.timestamp if floor_note
                                     else state.floor_at),
                           slice=time_slice,
                           jumped_at=jumped_at, first_at=first_at,
                           last_m_cur_kb=obs.m_cur_kb, budget=budget,
                           evicted_once=(state.evicted_once or
                                         real.evicted_kb > 0),
                           descent=descent, ledger=ledger,
                           last_asked_kb=(
                               demand if pr.probe_kb is None
                               else min(demand, pr.probe_kb)),
                           **{k: v for k, v in pr.fields.items()
                              if k != 'probe_wait'})
    return new_state, Result(mode=r.mode, wss=wss, moving_avg_kb=avg,
                             max_avg_kb=max_avg, demand_kb=demand,
                             transition=r.transition,
                             bad_shrinks=g.bad_shrinks, held=g.held,
                             pinned_kb=pinned, events=tuple(events),
                             probe_kb=pr.probe_kb,
                             used_bound_skip=(
                                 used_skip if params.pinned_used_bound and
                                 pinned > max(state.pinned_floor_kb,
                                              calibrated) else None))


class BadisEstimator:
    """Badis for every VM of a host: one :class:`BadisState` per VM.

    Its methods are pure apart from the per-VM state they keep.
    """

    def __init__(self, params=None):
        self.params = params or BadisParams()
        self.states = {}

    def state(self, uuid):
        return self.states.get(uuid) or BadisState.initial(self.params)

    def observe(self, uuid, obs):
        new_state, result = step(self.states.get(uuid), obs, self.params)
        self.states[uuid] = new_state
        return result

    def forget(self, uuid):
        self.states.pop(uuid, None)


# ---------------------------------------------------------------------------
# Balloon target for on-demand allocation


@dataclasses.dataclass(frozen=True)
class TargetParams:
    """How an estimate becomes a balloon target (``[badis]``)."""
    headroom_kb: int = 32 * MiB
    headroom_fraction: float = 0.05
    max_step_fraction: float = 0.25
    min_change_kb: int = 16 * MiB
    floor_kb: int = 128 * MiB
    max_grow_fraction: typing.Optional[float] = None   # None: as shrinking

    def __post_init__(self):
        if self.headroom_kb < 0 or self.headroom_fraction < 0:
            raise ValueError('headroom must not be negative')
        if not 0 < self.max_step_fraction <= 1:
            raise ValueError('max_step_fraction must be in (0, 1]')
        if self.max_grow_fraction is not None and not (
                0 < self.max_grow_fraction <= 1):
            raise ValueError('max_grow_fraction must be in (0, 1]')
        if self.min_change_kb < 0 or self.floor_kb < 0:
            raise ValueError('min_change_kb and floor_kb must not be '
                             'negative')

    @classmethod
    def from_conf(cls, conf):
        return _from_options(cls, conf.badis)

    @property
    def grow_fraction(self):
        if self.max_grow_fraction is None:
            return self.max_step_fraction
        return self.max_grow_fraction


def balloon_target(demand_kb, current_kb, booked_kb, params=None,
                   source=None):
    """Next balloon size for on-demand allocation, or ``None``.

    target = demand + headroom, clamped to [floor, booked]; the move from
    ``current_kb`` is limited to ``max_step_fraction`` × booked per round
    when shrinking and ``max_grow_fraction`` × booked when growing;
    moves smaller than ``min_change_kb`` are ignored (returns ``None``),
    except to bring a balloon that is outside [floor, booked] back inside.
    Returns ``(target_kb, reason)``.
    """
    params = params or TargetParams()
    if booked_kb <= 0:
        raise ValueError('booked_kb must be positive')
    floor = min(params.floor_kb, booked_kb)
    margin = sizing.headroom(demand_kb, params.headroom_kb,
                             params.headroom_fraction)
    wanted = min(booked_kb, max(floor, demand_kb + margin))
    shrink_limit = max(1, int(params.max_step_fraction * booked_kb))
    grow_limit = max(1, int(params.grow_fraction * booked_kb))
    delta = max(-shrink_limit, min(grow_limit, wanted - current_kb))
    target = min(booked_kb, max(floor, current_kb + delta))
    out_of_bounds = not floor <= current_kb <= booked_kb
    if target == current_kb or (
            abs(target - current_kb) < params.min_change_kb and
            not out_of_bounds):
        return None
    what = 'grow' if target > current_kb else 'shrink'
    reason = '%s %s -> %s: demand %s%s + headroom %s' % (
        what, _mib(current_kb), _mib(target), _mib(demand_kb),
        ' (%s)' % source if source else '', _mib(margin))
    notes = []
    if target != wanted and not out_of_bounds:
        notes.append('step limited to %d%% of booked %s'
                     % (round((params.grow_fraction if what == 'grow' else
                               params.max_step_fraction) * 100),
                        _mib(booked_kb)))
    if wanted == booked_kb and demand_kb + margin > booked_kb:
        notes.append('capped at booked %s' % _mib(booked_kb))
    if wanted == floor and demand_kb + margin < floor:
        notes.append('held at floor %s' % _mib(floor))
    if out_of_bounds:
        notes.append('balloon was outside [floor %s, booked %s]'
                     % (_mib(floor), _mib(booked_kb)))
    if notes:
        reason += '; ' + '; '.join(notes)
    return target, reason
