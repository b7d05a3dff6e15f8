"""The bad-shrink floor: an allocation shown too small is not shrunk to
again until the working set is seen to fall (issue 13).

Why: on the pattern suite (tests/benchmarks/results/badis17/README.md)
most of Badis's throughput loss came from the same cycle repeated. The
sample reads below what the guest needs (pages it touches less often
than once a round: a Zipf tail, the base of a guest whose data sits
idle, a hot set between moves), the balloon shrinks to it, the guest
swaps, the estimate goes up, the swap-ins stop, and a few quiet rounds
later the same sample shrinks the balloon to the same size again. Each
turn costs the guest its swap-ins (10-40 MiB a turn on a 256 MiB TCG
guest, a sawtooth of period 8-10 s in load_idle and hotset). Nothing in
the estimator remembered that this size had swapped.

What it is. When a shrink is followed by swap-ins (the guard of
:mod:`.badis` counts it: a bad shrink), the allocation the guest swapped
at becomes a floor: the demand (hence the balloon, which adds its
headroom above the demand) does not go below it. Until the first round
without swap activity after it, every swapping round raises it to the
allocation of that round: the guest swapped there too, so the floor ends
at the largest allocation that swapped, one growth step below the one
that was quiet. A later bad shrink raises it again. The floor is a
statement about the working set at the time, so it ends when the sampled
working set is seen to fall: a quiet round (no swap activity) whose
corrected sample is at least ``fall`` below the sample of the round that
set it (when that round had none, the first quiet round's sample), or a
quiet round in which the guest left at least ``fall`` of the floor free
(it reports what it does not use through the balloon statistics: a
guest whose program exited or freed its data needs no floor, whatever
its samples read). It also lapses after ``expire_rounds`` rounds without
swap activity, so that nothing learned here stays forever; and
:mod:`.badis` releases it when a balloon probe of the calibration held
the guest below it for a whole swap-in window without a swap-in (stop
37: a floor set from the swap-ins of a guest loading its data held a
load-then-idle guest's balloon 60 rounds above what a probe had just
shown enough). The floor does not stop such a probe from starting.

Why the guest's own word as well: the reference sample can already be
low. A shrink that meets the last swap-ins of a working set on its way
down (a program freeing its memory while the balloon goes down) sets a
floor at the old size while every later sample reads the new, small set:
no sample falls below the reference, and the floor would hold memory the
guest does not use until it lapsed (60 rounds: an hour at production's
round interval). Found by the mutualization functional test on CI
(stop 33).

A floor may also be lowered step by step (``step_kb``; Badis's default
since stop 37, badis25): after ``step_rounds`` rounds without swap
activity in which it held the demand (:func:`holding`) it goes down by
a step, each step twice the last; a shrink it allows that
is followed by swap-ins raises it back to the allocation that swapped
(the rule above) and doubles the rounds before the next step (up to
``expire_rounds``). A floor set while the guest loaded its data (the
swap-ins of a growth, not of a working set the sample misses) then goes
in a few steps, and a right one costs a step's swap-ins now and then
instead of the whole gap at its lapse (TCG, load_idle, stop 37: a floor
at 192 MiB held a 116 MiB guest's balloon at 208 MiB for 60 rounds).

A floor the guest swaps at again may also be raised above the
allocation that swapped (``raise_kb``): a shortage while the floor held
the demand shows the floor itself too low, by an unknown amount. Raised
only to where the guest swapped, it came up one balloon headroom (16
MiB) per shortage: a moving hot set whose sample reads 96 of the 236 MiB
it needs went through 6-7 shortages, each a swap-in burst and a balloon
sent to the booking, before the floor reached it (TCG, hotset, stop 37).
Each such raise is twice the last (an exponential search: as many
shortages as the gap has doublings) for as long as the floor lives; it
overshoots by at most the last raise, which the steps down then take
back. A step down that swapped is raised back without a raise above it
(the level before the step held).

A floor is *confirmed* (:func:`tested`) when a shortage comes while it
held the demand, after the shortage that set it had ended: the guest
swapped at the floor (or at a step below it) although its own sample
asked for less, so its working set is at least the floor. Only then does
:mod:`.badis` count the floor in the working-set estimate (and the
max-average the controller packs on) by default: a floor from one bad
shrink may be the last swap-ins of a working set on its way down (a
W1-W5 sweep's step), and counted in the estimate it held the estimate
above the truth (stop 34-38), while the floors of a guest whose sample
under-reads are confirmed within seconds (stop 39, badis27).

The reference sample is the one taken at the bad shrink, not the highest
one since: samples of a moving hot set or a skewed pattern vary by a
third from round to round, and a maximum would make every low one look
like a fall. A sample taken while the guest stalled on swap reads low,
which only makes the floor harder to release (the safe side).
"""

import dataclasses
import typing

from memmut import units

_mib = units.fmt_kb
# Balloon sizes closer than this are the same (observation.py).
SLACK_KB = 1024


@dataclasses.dataclass(frozen=True)
class Floor:
    """The floor of one VM between rounds."""
    kb: int = 0                          # 0: no floor
    ref_kb: typing.Optional[int] = None  # sample it was set at
    quiet_rounds: int = 0                # rounds without swap activity
    open: bool = False                   # the shortage that set it goes on
    step_kb: int = 0                     # its last step down (0: none yet)
    since_step: int = 0                  # quiet rounds since set or stepped
    wait: int = 1                        # step_rounds x this between steps
    held: bool = False                   # it held the demand last round
    raise_kb: int = 0                    # its last raise above a shortage
    swapped_kb: int = 0                  # kb less its raise (0: kb)
    confirmed: bool = False              # a shortage came while it held
    step_swapped: bool = False           # a step down of it swapped
    in_use_held: bool = False            # held by the guest's use (below)
    step_at_kb: int = 0                  # the allocation at its last step
    evidenced: bool = False              # set or raised in hindsight
    out_kb: int = 0                      # left in swap (evidenced only)
    # the lowest allocation at which the read-backs that set or raised it
    # in hindsight came (0: none; see disproved)
    read_at_kb: int = 0


@dataclasses.dataclass(frozen=True)
class FloorParams:
    fall: float = 0.15
    expire_rounds: int = 60
    step_kb: int = 0                     # 0: no steps down
    step_rounds: int = 4
    raise_kb: int = 0                    # 0: raised to the shortage only
    low_reference: bool = False          # every shortage keeps the lower
    step_back: bool = False              # any swap-ins take a step back
    hold_in_use: bool = False            # no step nor lapse while used
    step_moved: bool = False             # double a step only if it moved

    def __post_init__(self):
        if not 0 < self.fall < 1:
            raise ValueError('fall must be in (0, 1)')
        if self.expire_rounds < 0:
            raise ValueError('expire_rounds must not be negative')
        if self.step_kb < 0 or self.step_rounds < 1:
            raise ValueError('step_kb must not be negative and step_rounds '
                             'must be at least 1')
        if self.raise_kb < 0:
            raise ValueError('raise_kb must not be negative')

    @property
    def max_wait(self):
        """The longest pace of the steps, in units of step_rounds."""
        if not self.expire_rounds:
            return 16
        return max(1, min(16, self.expire_rounds // self.step_rounds))


def update(floor, *, bad_shrink, m_cur_kb, sample_kb, short, full=True,
           used_kb=None, params=None, shortage=False, booked_kb=None,
           in_use_kb=None, out_kb=0, in_kb=0):
    """One round: ``(new_floor, event)``; ``event`` is a log line or None.

    ``bad_shrink``: a shrink was followed by swap-ins this round (counted
    by the guard); ``m_cur_kb``: the allocation the guest swapped at (the
    smallest it had over the round: a balloon grown during the round
    read back what was evicted below); ``sample_kb``: this round's
    corrected sample (None: none taken); ``short``: swap activity this
    round; ``full``: the guest had no free memory to speak of. A swapping
    round with free memory reads back what was evicted before: it does
    not show that this allocation is too small, and raises nothing.
    ``used_kb``: what the guest did not have free over the round (balloon
    statistics; None: unknown or moving). ``shortage``: swap-ins at an
    allocation that did not move over the round, below the booking, with
    no memory free (``shrink_floor_steady``): the allocation the shrinks
    before it reached is too small as well, and counts as a bad shrink.
    ``booked_kb``: the booking, above which no floor is raised (None:
    no bound). ``in_use_kb``: what the guest reports in use now, page
    cache not counted (balloon ``actual`` - ``usable``; None: unknown),
    for ``hold_in_use``. ``out_kb``/``in_kb``: what the guest wrote to
    swap and read back over the round (a floor set in hindsight counts
    what is left out).
    """
    params = params or FloorParams()
    if floor.evidenced:
        floor = dataclasses.replace(floor, out_kb=max(
            0, floor.out_kb + (out_kb or 0) - (in_kb or 0)))
    if bad_shrink or shortage:
        kb = max(floor.kb, m_cur_kb)
        extra = _raise(floor, params)
        if booked_kb is not None:
            extra = max(0, min(extra, booked_kb - kb))
        kb += extra
        ref = sample_kb if floor.kb == 0 or floor.ref_kb is None else (
            floor.ref_kb if sample_kb is None else sample_kb)
        if ((extra or params.low_reference) and floor.ref_kb is not None
                and sample_kb is not None):
            # the sample of a round that swapped in heavily counts the
            # pages it brought back (TCG, hotset: 138 MiB against 95 the
            # round after, which then read as a fall and released a
            # floor just raised to the need): keep the lower reference.
            # After a raise, or on every shortage of a live floor with
            # low_reference (stop 40: a confirmed floor of the hot set
            # released by "sampled 91 MiB fell from 109")
            ref = min(floor.ref_kb, sample_kb)
        # a step down that swapped: the next waits twice as long
        wait = (min(params.max_wait, floor.wait * 2) if floor.step_kb
                else floor.wait)
        event = ('shrink floor %s: swapped in at %s %s%s%s'
                 % ('raised to %s' % _mib(kb) if floor.kb else
                    'set at %s' % _mib(kb), _mib(m_cur_kb),
                    'after a shrink' if bad_shrink else
                    'held since a shrink',
                    ' where the floor held it (%s above)' % _mib(extra)
                    if extra else '',
                    '' if ref is None else ', sampled %s' % _mib(ref)))
        # the raises grow for as long as the floor lives: the steps down
        # between the shortages of a hot set that moves every 15 s came
        # every 2 s and, restarting them, kept each raise at its first
        # (TCG, stop 38)
        raised = extra or floor.raise_kb
        return Floor(kb=kb, ref_kb=ref, quiet_rounds=0, open=True,
                     wait=wait, raise_kb=raised,
                     swapped_kb=kb - extra if extra else 0,
                     confirmed=floor.confirmed or tested(floor),
                     step_swapped=floor.step_swapped or bool(
                         floor.kb and floor.step_kb),
                     evidenced=floor.evidenced, out_kb=floor.out_kb,
                     # a swap-in after a shrink is a read-back at this
                     # allocation: the lowest stays the test (disproved;
                     # TCG, badis46: a raise that dropped it kept a floor
                     # a probe 30 MiB under the read-backs lived through
                     # until it lapsed 32 s later)
                     read_at_kb=min(floor.read_at_kb, m_cur_kb)
                     if floor.read_at_kb else 0), event
    if not floor.kb:
        return floor, None
    if short and params.step_back and floor.step_kb and floor.held:
        # swap-ins after a step down that held the demand answer the
        # step, whether or not the guest has memory free now: a moving
        # hot set reads back, at an allocation the balloon already grew,
        # the pages evicted at the step (TCG, hotset, badis30: steps of
        # 4, 8, 16, 32 and 64 MiB went on through two such rounds, down
        # to 71 MiB for a 236 MiB need). Taken back, the next step
        # starts small again and waits twice as long.
        kb = floor.kb + floor.step_kb
        if booked_kb is not None:
            kb = min(kb, booked_kb)
        return dataclasses.replace(
            floor, kb=kb, quiet_rounds=0, since_step=0, step_kb=0,
            wait=min(params.max_wait, floor.wait * 2)), (
            'shrink floor back to %s: swapped in after its step down'
            % _mib(kb))
    if short:
        kb = max(floor.kb, m_cur_kb) if floor.open and full else floor.kb
        event = None
        if kb > floor.kb:
            event = ('shrink floor raised to %s: still swapping in'
                     % _mib(kb))
        return dataclasses.replace(floor, kb=kb, quiet_rounds=0,
                                   since_step=0), event
    quiet = floor.quiet_rounds + 1
    ref = floor.ref_kb
    # against where the guest swapped, not the raise above it: the
    # balloon just grown by the raise is free until the guest swaps its
    # pages back in (TCG, hotset: a floor raised to 150 MiB released two
    # rounds later, the guest using 127 MiB of it)
    # A floor set in hindsight counts what the guest has in swap with
    # what it uses (the pages it reads back are still out; used alone
    # released such a floor on a Zipf tail), against twice the fall: a
    # page read back and evicted again clean is not written twice, so
    # the swap counters under-count what is out. A guest that freed its
    # data still releases it (stop 50: a working set down from 280 to
    # 24 MiB held at the booking for two minutes).
    out = floor.out_kb if floor.evidenced else 0
    fall = params.fall * (2 if floor.evidenced else 1)
    if used_kb is not None and used_kb + out <= (1 - fall) * (
            floor.swapped_kb or floor.kb):
        return Floor(), ('shrink floor %s released: the guest used %s of '
                         'it%s' % (_mib(floor.kb), _mib(used_kb),
                                   ', %s more in swap' % _mib(out)
                                   if floor.evidenced else ''))
    if sample_kb is not None:
        if ref is None:
            return dataclasses.replace(
                floor, ref_kb=sample_kb, quiet_rounds=quiet, open=False,
                since_step=floor.since_step + floor.held), None
        if sample_kb <= (1 - params.fall) * ref:
            return Floor(), ('shrink floor %s released: sampled %s fell '
                             'from %s' % (_mib(floor.kb), _mib(sample_kb),
                                          _mib(ref)))
    if params.hold_in_use:
        held, event = _held_in_use(floor, in_use_kb, params)
        if held:
            # neither older nor nearer its next step: the guest's own
            # figure re-reads it every round, no swap-in need test it
            return dataclasses.replace(floor, open=False,
                                       in_use_held=True), event
        if floor.in_use_held:
            floor = dataclasses.replace(floor, in_use_held=False)
    if params.expire_rounds and quiet >= params.expire_rounds:
        return Floor(), ('shrink floor %s lapsed: %d rounds without swap '
                         'activity' % (_mib(floor.kb), quiet))
    # only rounds in which the floor held the balloon count towards a
    # step: a step of a floor that holds nothing tests nothing (TCG,
    # stop 37: a hot set's floor stepped down to nothing while its
    # shortage held the balloon at the booking)
    since = floor.since_step + floor.held
    if params.step_kb and since >= params.step_rounds * floor.wait:
        step = (floor.step_kb * 2 if _moved(floor, m_cur_kb, params)
                else floor.step_kb or params.step_kb)
        if step >= floor.kb:
            return Floor(), ('shrink floor %s released: stepped down to '
                             'nothing' % _mib(floor.kb))
        kb = floor.kb - step
        # where the guest swapped stays the test of its free memory: a
        # raised floor stepped down was released by the guest's use
        # (TCG, hotset, stop 40: 162 MiB used of a floor of 192 MiB raised
        # from 132, while pages swapped out at 132 were still out)
        swapped = min(floor.swapped_kb, kb) if floor.swapped_kb else 0
        return Floor(kb, ref, quiet, step_kb=step, wait=floor.wait,
                     held=floor.held, raise_kb=floor.raise_kb,
                     swapped_kb=swapped,
                     confirmed=floor.confirmed,
                     step_swapped=floor.step_swapped,
                     step_at_kb=m_cur_kb, evidenced=floor.evidenced,
                     out_kb=floor.out_kb, read_at_kb=floor.read_at_kb), (
            'shrink floor lowered to %s: %d rounds without swap activity'
            % (_mib(kb), since))
    return dataclasses.replace(floor, ref_kb=ref, quiet_rounds=quiet,
                               open=False, since_step=since), None


def _moved(floor, m_cur_kb, params):
    """Whether the next step down may be twice the last: there was one,
    and (``step_moved``) the balloon went down since it was taken.

    Why: a floor whose headroom puts the balloon at the booking, or one
    under a guard's hold, holds the demand while the balloon stays where
    it was; its steps test nothing, yet doubled every ``step_rounds``
    they took a floor raised to the booking down 4, 8, 16, 32 and 64 MiB
    with the balloon still there, and the balloon then fell 100 MiB in
    six rounds into a swap-in burst (TCG, hotset, badis35)."""
    if not floor.step_kb:
        return False
    return not (params.step_moved and floor.step_at_kb and
                m_cur_kb >= floor.step_at_kb - SLACK_KB)


def _held_in_use(floor, in_use_kb, params):
    """``(held, event)``: whether the floor holds without ageing or
    stepping down this quiet round (``hold_in_use``): a step down of it
    swapped before, and the guest uses more than ``1 - fall`` of it
    (``in_use_kb``, page cache not counted). ``event`` when the hold
    begins.

    Why: a floor the steps down have found keeps being tested, a step
    every few rounds and a lapse after ``expire_rounds``, and each test
    of a right floor is a swap-in burst (TCG, badis33: load-then-idle's
    floor at 118-121 MiB, the guest using 117 of them, stepped down and
    swapped back every 30-40 s, 10-20 MiB read back each time; on the
    bench's 1 s rounds 60 times as often as at production's 60 s, while a
    swap-in costs the guest as long). What the guest reports in use
    re-reads the floor every round instead: when the guest no longer
    uses it, the steps and the lapse resume (and below ``1 - fall`` of
    it, by memory not free, the floor is released as before)."""
    if (not floor.step_swapped or in_use_kb is None or
            in_use_kb <= (1 - params.fall) * floor.kb):
        return False, None
    event = None
    if not floor.in_use_held:
        event = ('shrink floor %s held: the guest uses %s of it and a '
                 'step down of it swapped' % (_mib(floor.kb),
                                              _mib(in_use_kb)))
    return True, event


def tested(floor):
    """Whether a shortage now tests the floor itself: one that held the
    demand (the balloon sat where the floor put it, not where the
    estimate did) after the shortage that set or raised it had ended.
    A shortage then shows the guest needs at least the floor: what a
    floor only learned from one bad shrink does not show (a sweep whose
    working set stepped down after it, W1-W5)."""
    return bool(floor.kb and floor.held and not floor.open)


def _raise(floor, params):
    """How far above the allocation that swapped a shortage raises the
    floor: nothing for a new floor, a floor still in the shortage that
    set it, one that did not hold the demand (the estimate went low on
    its own) or one just stepped down (the level before the step held);
    else ``raise_kb``, then twice the last raise: a floor the guest keeps
    swapping at is too low by an unknown amount, and doubling finds it in
    as many shortages as the gap has doublings, not headrooms."""
    if not params.raise_kb or not tested(floor) or floor.step_kb:
        return 0
    return floor.raise_kb * 2 if floor.raise_kb else params.raise_kb


def evidence_kb(floor):
    """The floor less its raise (``raise_kb``) above the allocation the
    guest swapped at: what the guest showed it needs more than. The
    raise is a margin for the balloon, not a measurement of the working
    set."""
    return floor.swapped_kb or floor.kb


def apply(floor, demand_kb, booked_kb, evidence=False):
    """The demand with the floor under it (never above the booking);
    ``evidence``: the floor less its raise (:func:`evidence_kb`)."""
    kb = evidence_kb(floor) if evidence else floor.kb
    return max(demand_kb, min(kb, booked_kb))


def holding(floor, demand_kb, booked_kb, lifted=False, at_demand=False):
    """``(demand, floor)``: the demand with the floor under it, and the
    floor marked with whether it raised that demand (its steps count
    only such rounds). ``lifted``: the floor raised this round's
    working-set estimate (counted in it): a demand at the floor, whose
    average carries the floored estimates, is then the floor's doing
    too (else a floor counted in the estimate would never hold, step
    down or be tested again). ``at_demand``: a lifted floor holds only
    while the demand sits at it, not while the max-average above it
    still carries the rounds before (``shrink_floor_hold_at_demand``)."""
    floored = apply(floor, demand_kb, booked_kb)
    # at_demand: a demand above a lifted floor (the max-average still
    # carrying a shortage's estimates) puts the balloon there, and steps
    # of the floor under it test nothing (TCG, hotset, stop 40: stepped
    # 231 -> 104 MiB in 28 s with the balloon at 238-256 MiB, then
    # released to a swap storm); but the steps then wait a time slice,
    # which holds a sweep's stepped-down set up (W5, stop 40)
    held = floored > demand_kb or (lifted and (
        not at_demand or demand_kb <= floor.kb + SLACK_KB))
    if held != floor.held:
        floor = dataclasses.replace(floor, held=held)
    return floored, floor


def hindsight(floor, from_kb, booked_kb, params, sample_kb=None,
              out_kb=0, read_at_kb=0):
    """``(floor, event)``: the floor raised to ``from_kb``, what a shrink
    whose evictions the guest read back asks for (:mod:`.hindsight`). A
    floor it raises waits twice as long before its next step down (a
    step down taken too far, as a bad shrink); the reference sample
    stays. ``out_kb``: what the guest wrote to swap and has not read
    back since the shrink (counted with its use, :func:`update`);
    ``read_at_kb``: the lowest allocation since the shrink, where the
    guest read those pages back (:func:`disproved`)."""
    kb = min(booked_kb, from_kb) if booked_kb else from_kb
    if kb <= floor.kb + SLACK_KB:
        return floor, None
    # twice the wait once per judgement: a new floor or one a step down
    # of which went too far, not every round that adds read-backs
    again = floor.kb and (floor.step_kb or not floor.evidenced)
    wait = min(params.max_wait, floor.wait * 2) if again else floor.wait
    ref = floor.ref_kb if floor.ref_kb is not None else sample_kb
    # open: the read-backs that set it are its own shortage, not a test
    # of it (closed, the guard's shortage of the same round confirmed it
    # and raised it above the booking's reach: W2 in the model)
    return Floor(kb=kb, ref_kb=ref, open=True, wait=wait,
                 raise_kb=floor.raise_kb, confirmed=floor.confirmed,
                 step_swapped=floor.step_swapped or bool(floor.step_kb),
                 evidenced=True, out_kb=max(floor.out_kb, out_kb),
                 read_at_kb=min((a for a in (floor.read_at_kb, read_at_kb)
                                 if a), default=0)), (
        'shrink floor %s %s: the guest read back that much above the '
        'lowest allocation since a shrink' % (
            'raised to' if floor.kb else 'set at', _mib(kb)))


def disproved(floor, quiet_at_kb, seconds):
    """``(floor, event)``: the floor released when the guest held an
    allocation below it for ``seconds`` without a swap-in after evicting
    for it (a balloon probe's whole window: ``quiet_at_kb``, None when no
    probe ended so; a probe met from free memory tested nothing),
    or at or below the allocation where the read-backs that set it came
    (``read_at_kb``), else unchanged with no event.

    Why the second: a floor set in hindsight steps down from above the
    allocation the guest read its pages back at, and while it stands the
    probes stay above it. A probe the guest then lives through at that
    same allocation shows the read-back was not its need (TCG,
    load-then-idle: the first probe of a run evicted by load order, the
    guest read 30 MiB back at 230 MiB; the next, at 230 MiB, evicted cold
    data only, but the floor, stepped down to 224 MiB, kept every later
    probe out for 40 s, and the run saved 14 % of the booking against 32
    % in runs without that first read-back)."""
    if not floor.kb or quiet_at_kb is None:
        return floor, None
    if quiet_at_kb < floor.kb - SLACK_KB:
        where = ''
    elif floor.read_at_kb and quiet_at_kb <= floor.read_at_kb + SLACK_KB:
        where = (', where the read-backs that set it came at %s'
                 % _mib(floor.read_at_kb))
    else:
        return floor, None
    return Floor(), ('shrink floor %s released: a balloon probe held the '
                     'guest at %s for %gs without swap-ins%s'
                     % (_mib(floor.kb), _mib(quiet_at_kb), seconds, where))
