"""A per-VM time slice that grows when shortages recur (issue 13).

Why: Badis's demand is the maximum of the moving average over the last
time slice, so a working set that comes back within one slice keeps its
memory, and one that comes back later finds the balloon shrunk and swaps
back in. A moving hot set is the case the pattern suite shows
(``tests/benchmarks/results/badis21``): the sample sees the hot part, the
balloon shrinks to it one slice after each rise, the set moves, the guest
reads back what the shrink evicted, and this repeats at the period of the
moves, every turn costing the guest its swap-ins. A longer slice for
every VM ends the cycle but holds every fall for as long (half the
memory saved over the suite at 60 rounds). Recurrence is a property of
the VM, so the slice is the VM's own.

What it is. A shortage *starts* in a round with swap activity after one
without. When a shortage starts, the balloon was shrunk since the last
shortage started by at least ``min_shrink`` (10 %) of its largest size
since (the memory the guest now lacks was given back), and the two
starts are more than the VM's slice and at most ``2 * max_s`` apart, the
shortage recurs at that interval and the slice was too short to hold it:
the VM's slice becomes ``factor`` times the interval (never longer than
``max_s``). Starts closer than the slice are one episode (a guest
loading its data at boot swaps, is grown, is trimmed and swaps again
within seconds): a longer slice would not have kept the memory. While it
is longer than the base, the VM's demand stays at least the peak demand
of its last shortage for one slice after that peak (:func:`hold`), and
its max-average is taken over the VM's slice: the peak is held across
the next recurrence. The max-average alone does not do it: a shortage of
a round or two moves the moving average a fraction of the way, and the
demand of those rounds (Geiger's estimate) is not in it. Each recurrence
it still misses lengthens the slice further, by at least ``factor``. The
slice halves back toward the base after twice its length without a
recurrence: a VM whose working set settled gives its memory back at the
base pace again; shortages that start without a shrink before them (a
guest still short at the held size, or reading back what was evicted
long ago) do not count as recurrences and do not keep the slice long.

Two refinements (stop 77). A recurrence held without a shortage
(``reuse``): while the slice is long, the VM's moving average back at
its highest since the last shortage after falling 10 % below it is a
recurrence too; without it the slice that held a periodic job through
its next run halves back twice its length later, since nothing swapped,
and the run after that pays again. The first round as a shortage
(``from_first``, off): the VM's first round stands for a shortage
before its first, so the first shortage after a shrink from what the VM
had then already lengthens the slice; a periodic job then pays only its
first run, every VM that rises once holds its peak longer.

It changes when memory is given back, never what is estimated: the
sample, Geiger's histogram and the corrections are untouched.
"""

import dataclasses
import typing


@dataclasses.dataclass(frozen=True)
class SliceParams:
    base_s: float = 3600.0
    max_s: float = 0.0          # at most base_s: off
    factor: float = 1.5
    # what the balloon must have gone down by, as a fraction of its
    # largest size since the last shortage, for a shortage to recur
    min_shrink: float = 0.1
    # the VM's first round stands for a shortage before the first one:
    # memory it had when the agent first saw it, given back and needed
    # again, is a recurrence (see update)
    from_first: bool = False
    # the working set back at its high after a fall, without a shortage
    # (the slice held it), counts as a recurrence for halving the slice
    # back (see update)
    reuse: bool = False

    def __post_init__(self):
        if self.base_s <= 0:
            raise ValueError('base_s must be positive')
        if self.max_s < 0:
            raise ValueError('max_s must not be negative')
        if self.factor < 1:
            raise ValueError('factor must be at least 1')
        if not 0 <= self.min_shrink < 1:
            raise ValueError('min_shrink must be in [0, 1)')

    @property
    def on(self):
        return self.max_s > self.base_s


@dataclasses.dataclass(frozen=True)
class Slice:
    """One VM's time slice between rounds."""
    seconds: typing.Optional[float] = None    # None: the base
    short_at: typing.Optional[float] = None   # the last shortage's start
    # the balloon's largest size since then, and its smallest since that
    high_kb: int = 0
    low_kb: typing.Optional[int] = None
    # the last recurrence, and when the slice last changed
    recur_at: typing.Optional[float] = None
    changed_at: typing.Optional[float] = None
    # the largest demand of the last shortage (its rounds with swap
    # activity and the one after), and when it was reached
    peak_kb: int = 0
    peak_at: typing.Optional[float] = None
    # the first round the slice saw (SliceParams.from_first)
    first_at: typing.Optional[float] = None
    # the highest round average since the last shortage or reuse, and
    # the lowest since that high (SliceParams.reuse)
    use_high_kb: int = 0
    use_low_kb: typing.Optional[int] = None

    def length(self, params):
        return self.seconds if self.seconds is not None else params.base_s


def _high_low(high, low, value):
    """The highest value so far and the lowest since it, with ``value``."""
    if value > high:
        return value, None
    return high, value if low is None else min(low, value)


def _track(sl, m_cur_kb, forced=False):
    """The balloon's high and its low since the high, with this round;
    a ``forced`` round's allocation is no low (not Badis's give-back)."""
    if forced and m_cur_kb <= sl.high_kb:
        return sl.high_kb, sl.low_kb
    return _high_low(sl.high_kb, sl.low_kb, m_cur_kb)


def _reused(sl, avg_kb, params):
    """``(reused, use_high, use_low)``: the highest round average since
    the last shortage or reuse, the lowest since that high, and whether
    this round's average is back within ``min_shrink`` of the high after
    the low fell below it by as much."""
    if avg_kb is None:
        return False, sl.use_high_kb, sl.use_low_kb
    high, low = _high_low(sl.use_high_kb, sl.use_low_kb, avg_kb)
    floor = high - params.min_shrink * high
    if low is not None and low <= floor <= avg_kb:
        return True, avg_kb, None
    return False, high, low


def update(sl, *, now, short, last_short, m_cur_kb, params, probe=False,
           forced=False, avg_kb=None):
    """One round: ``(new_slice, event)``; ``event`` is a log line or None.

    ``short``: swap activity this round; ``last_short``: in the last
    round; ``m_cur_kb``: the allocation this round; ``probe``: a balloon
    probe of the pinned-page correction runs, or the guest reads back
    what one made it evict: its swap activity is the probe's answer, no
    shortage of the working set (TCG, load-then-idle, stop 74: a probe's
    read-back 73 s after the load's swap-ins made a recurrence, and the
    load's peak, held for 60 s, kept the balloon 40 MiB above a guest
    whose data sat cold: 22 % of the booking saved against 34).

    ``forced``: the balloon is below what Badis last asked for: the
    host's allocator (Algorithm 1 lending the memory to another VM) holds
    the VM under its demand. A shortage then is the host's, not a
    working set coming back after Badis gave its memory back, and such
    an allocation is no give-back either (TCG, mutualization functional
    test, stop 75: a lender still in its 280 MiB phase, taken from 372
    to 342 MiB for the borrower, swapped 46 s after its growth's
    shortage; the recurrence held its 384 MiB peak for 69 s and the
    borrower's phase ended before it got the memory).

    ``avg_kb``: the round's moving average of the estimate. With
    ``params.reuse``, while the slice is longer than the base, a round
    without swap activity whose average is back at the highest since the
    last shortage (or reuse) after falling below it, both by
    ``min_shrink`` of that high, is a recurrence the slice held: it
    keeps the slice from halving as a shortage would
    (TCG, periodic, stop 77: the second run of the job found its peak
    held and swapped nothing, the slice halved twice its length after
    the first, and the third run found the balloon shrunk).
    """
    if not params.on:
        return sl, None
    if sl.first_at is None:
        sl = dataclasses.replace(sl, first_at=now)
    length = sl.length(params)
    event = None
    high, low = _track(sl, m_cur_kb, forced)
    start = short and not last_short and not probe
    last_at = sl.short_at
    if last_at is None and params.from_first:
        last_at = sl.first_at
    if start and forced:
        event = ('shortage held under the demand by the host: no '
                 'recurrence for the time slice')
    elif start:
        seconds = sl.seconds
        changed_at, recur_at = sl.changed_at, sl.recur_at
        interval = None if last_at is None else now - last_at
        # a trim of a few MiB is not memory given back (TCG, phases: a
        # 256 -> 251 MiB trim made a phase change a recurrence)
        shrunk = (last_at is not None and low is not None and
                  high - low >= params.min_shrink * high)
        if (interval is not None and shrunk and
                length < interval <= 2 * params.max_s):
            recur_at = now
            new = min(params.max_s, params.factor * interval)
            if new > length:
                seconds, changed_at = new, now
                event = ('time slice %gs: a shortage again %gs after the '
                         '%s, the balloon shrunk between'
                         % (new, round(interval, 1),
                            'last' if sl.short_at is not None
                            else 'first round'))
        return dataclasses.replace(sl, seconds=seconds, short_at=now,
                                   high_kb=m_cur_kb, low_kb=None,
                                   recur_at=recur_at,
                                   changed_at=changed_at,
                                   use_high_kb=0, use_low_kb=None), event
    seconds, changed_at = sl.seconds, sl.changed_at
    use_high, use_low = sl.use_high_kb, sl.use_low_kb
    since = max(x for x in (sl.recur_at, sl.changed_at, float('-inf'))
                if x is not None)
    if params.reuse and not short:
        reused, use_high, use_low = _reused(sl, avg_kb, params)
        if reused and sl.seconds is not None:
            # logged once a slice at most: a working set that dips and
            # comes back every few rounds is one line, not one a dip
            if now - since > length:
                event = ('time slice %gs kept: the working set back at '
                         '%d KiB after a fall, without a shortage'
                         % (round(sl.seconds, 1), avg_kb))
            sl = dataclasses.replace(sl, recur_at=now)
            since = now
    if sl.seconds is not None and now - since > 2 * length:
        half = length / 2
        if half <= params.base_s:
            seconds = None
            event = ('time slice back to %gs: no shortage for %gs'
                     % (params.base_s, round(now - since, 1)))
        else:
            seconds = half
            event = ('time slice %gs: no shortage for %gs'
                     % (half, round(now - since, 1)))
        changed_at = now
    return dataclasses.replace(sl, seconds=seconds, high_kb=high,
                               low_kb=low, changed_at=changed_at,
                               use_high_kb=use_high,
                               use_low_kb=use_low), event


def hold(sl, *, now, demand_kb, short, last_short, params, probe=False,
         forced=False):
    """``(demand, new_slice)``: the round's demand with the last
    shortage's peak under it while the VM's slice is longer than the base
    and the peak is younger than it; and the peak recorded (the round's
    own demand, before the hold: a held peak does not renew itself, in
    a round with swap activity or the one after; not in a probe's nor
    under a ``forced`` balloon, as in :func:`update`)."""
    if not params.on:
        return demand_kb, sl
    held = (sl.seconds is not None and sl.peak_at is not None and
            now - sl.peak_at <= sl.seconds)
    if (short or last_short) and not probe and not forced:
        start = short and not last_short
        if (start and not (held and sl.peak_kb > demand_kb)) or \
                demand_kb >= sl.peak_kb:
            # a new shortage's peak, unless one still held is larger
            sl = dataclasses.replace(sl, peak_kb=demand_kb, peak_at=now)
    if held:
        demand_kb = max(demand_kb, sl.peak_kb)
    return demand_kb, sl
