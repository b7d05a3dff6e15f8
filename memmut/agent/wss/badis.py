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

from memmut.agent.wss import techniques
from memmut import sizing
from memmut import units

MiB = units.KIB_PER_MIB

# Sources of estimates Badis makes itself (the others: techniques.SOURCE_*).
SOURCE_SWAPPING = 'swapping'         # swapping, no Geiger estimate: m_cur
SOURCE_HOLD = 'hold'                 # no data this round: last estimate
SOURCE_GEIGER_IDLE = 'geiger-idle'   # G without swap activity: m_cur
SOURCE_SWAP_GROWTH = 'swap-growth'   # m_cur + what went to swap

# Estimates that mean "short of memory now".
SHORTAGE_SOURCES = frozenset((techniques.SOURCE_GEIGER,
                              techniques.SOURCE_SWAP_STATS,
                              SOURCE_SWAPPING, SOURCE_SWAP_GROWTH))


class Mode(str, enum.Enum):
    V = 'V'
    VG = 'VG'
    G = 'G'


def _from_options(cls, group):
    """A parameter dataclass whose fields are options of ``group``."""
    return cls(**{f.name: getattr(group, f.name)
                  for f in dataclasses.fields(cls)})


@dataclasses.dataclass(frozen=True)
class BadisParams:
    """Tuning of the state machine and the max-average (``[badis]``)."""
    vg_threshold: float = 0.95
    vg_to_g_rounds: int = 2
    g_to_v_rounds: int = 2
    vg_to_v_rounds: int = 2
    average_window: int = 5
    time_slice: float = 3600.0
    initial_pinned_kb: int = 0

    def __post_init__(self):
        if not 0 < self.vg_threshold <= 1:
            raise ValueError('vg_threshold must be in (0, 1]')
        for name in ('vg_to_g_rounds', 'g_to_v_rounds', 'vg_to_v_rounds',
                     'average_window'):
            if getattr(self, name) < 1:
                raise ValueError('%s must be at least 1' % name)
        if self.time_slice <= 0:
            raise ValueError('time_slice must be positive')
        if self.initial_pinned_kb < 0:
            raise ValueError('initial_pinned_kb must not be negative')

    @classmethod
    def from_conf(cls, conf):
        return _from_options(cls, conf.badis)


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
    conditions, see :mod:`memmut.agent.wss.pipeline`).
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

    @classmethod
    def initial(cls, params=None):
        params = params or BadisParams()
        return cls(pinned_kb=params.initial_pinned_kb)

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


fmt_kb = units.fmt_kb
_mib = fmt_kb


def _sampled_wss(state, obs):
    """Sampled WSS with the pinned-page correction, capped at m_cur."""
    if obs.sampled is None:
        return None
    wss = min(obs.m_cur_kb, obs.sampled.wss_kb + state.pinned_kb)
    return techniques.TechniqueEstimate(wss, obs.sampled.source)


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
    return wss is not None and wss.wss_kb >= (
        params.vg_threshold * obs.m_cur_kb)


@dataclasses.dataclass(frozen=True)
class _Round:
    mode: Mode
    wss: techniques.TechniqueEstimate
    swap_rounds: int = 0
    quiet_rounds: int = 0
    pinned_kb: int = 0
    learned: bool = False
    transition: typing.Optional[str] = None


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
        # (Swap-ins in an interval during which the balloon moved, while
        # sampling sees a WSS well under the allocation: the guest
        # reclaiming what the balloon took evicts a few hot pages with the
        # cold ones. A real shortage keeps swapping next round.)
        wss = sampled or _hold(state, obs)
        if _close(sampled, obs, params):
            return _Round(Mode.VG, wss, pinned_kb=pinned,
                          transition='V->VG: sampled WSS %s reached %s of '
                                     'allocation %s'
                          % (_mib(wss.wss_kb), pct, _mib(obs.m_cur_kb)))
        return _Round(Mode.V, wss, pinned_kb=pinned)

    if state.mode is Mode.VG:
        if obs.short:
            if obs.sampled is not None and obs.steady and obs.full:
                # Swapping: all of m_cur is in use; what sampling misses
                # now are pinned (unswappable, rarely touched) pages.
                pinned = max(0, obs.m_cur_kb - obs.sampled.wss_kb)
                learned = True
            elif (obs.sampled is not None and obs.grew_from_kb is not None
                  and obs.full):
                # The balloon grew during the interval: the guest swapped
                # at the smaller size, and sampling also counts pages it
                # touched after the grow, so start - sampled is a lower
                # bound of the pinned pages: it may raise the correction,
                # never lower it.
                pinned = max(pinned, obs.grew_from_kb - obs.sampled.wss_kb)
            swaps = state.swap_rounds + 1
            wss = _shortage_wss(state, obs)
            if swaps >= params.vg_to_g_rounds:
                return _Round(Mode.G, wss, pinned_kb=pinned, learned=learned,
                              transition='VG->G: swap activity in %d '
                                         'consecutive rounds' % swaps)
            return _Round(Mode.VG, wss, swap_rounds=swaps, pinned_kb=pinned,
                          learned=learned)
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


def step(state, obs, params=None):
    """One Badis round for one VM: ``(new_state, result)``.

    ``state`` may be ``None`` for a VM seen for the first time.
    """
    params = params or BadisParams()
    if state is None:
        state = BadisState.initial(params)
    r = _fsm(state, obs, params)
    wss = techniques.TechniqueEstimate(
        max(0, min(r.wss.wss_kb, obs.booked_kb)),
        r.wss.source)

    recent = (state.recent + (wss.wss_kb,))[-params.average_window:]
    avg = sum(recent) // len(recent)

    # Sliding maximum of the moving average over the last time slice:
    # a monotonic queue, so the state stays small whatever the round rate.
    horizon = obs.timestamp - params.time_slice
    window = [(t, a) for t, a in state.window if t > horizon and a > avg]
    window.append((obs.timestamp, avg))
    max_avg = window[0][1]

    demand = max_avg
    if wss.source in SHORTAGE_SOURCES:
        demand = max(demand, wss.wss_kb)

    short = wss.wss_kb if (obs.short and
                           wss.source in SHORTAGE_SOURCES) else 0
    new_state = BadisState(mode=r.mode, swap_rounds=r.swap_rounds,
                           quiet_rounds=r.quiet_rounds,
                           pinned_kb=r.pinned_kb, short_kb=short,
                           learned=state.learned or r.learned, recent=recent,
                           window=tuple(window))
    return new_state, Result(mode=r.mode, wss=wss, moving_avg_kb=avg,
                             max_avg_kb=max_avg, demand_kb=demand,
                             transition=r.transition)


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
