"""Denning's working-set function, and the allocation a swap-in bound asks
for (issue 13, item 3).

Why: the "VMware" estimate (pages touched in one interval) depends on the
order of the guest's accesses. A sweep slower than the interval reads as
part of its set, a Zipf-skewed pattern reads as whatever its tail happened
to touch, data loaded and left cold reads as nothing. What the guest cares
about is the swap-in rate an allocation leaves it, and that does not depend
on the order.

Definition. W(w) is the amount of memory touched within the last w
seconds. Under the working-set policy (which the guest's LRU/CLOCK reclaim
approximates), an allocation of W(w) misses on the pages touched now that
were not touched within w, at a rate of about dW/dw (Denning 1968: the
missing-page rate of window w is the slope of the mean working-set size).
For a stationary reference stream W is increasing and concave, so the
slope falls as w grows. The working set under a swap-in bound r (KiB/s) is
W(w*), w* the smallest window whose slope is at most r. It holds for any
access order:

* a sweep of period P: W rises to the whole set at w = P and is flat
  beyond, so it gets the whole set (slope 0);
* Zipf: W is concave, it gets the hot part plus what the bound allows;
* data loaded and then left cold is never touched within any window: not
  counted;
* a hot set drifting at d KiB/s keeps a slope of d: if d > r it gets all
  it touches within the horizon (its faults cannot be kept under r with
  less), else its hot part.

Measuring it. Within one cycle the accessed state is cleared once, then
read without clearing (:meth:`~.sampling.base.Sampler.peek`) at times t
after the clear: the amount touched in [0, t] is W(t) for a stationary
stream. :func:`geometric` keeps reads near tau, 2 tau, 4 tau, ... (tau:
the first read), and :func:`choose` takes the slope at w_i as the backward
difference (W_i - W_{i-1}) / (w_i - w_{i-1}): for a concave W that is at
least dW/dw at w_i, so the chosen allocation's fault rate is at most r.
A window is taken only if no longer window has a steeper backward slope
(one cycle of a hot set that moves every few seconds gives a staircase,
flat between two moves).
When no window of the cycle has a slope under r (the horizon is too short,
or the working set is growing), the allocation is the largest W read and
the choice says it is not bounded; Geiger's reuse distances cover the need
above the allocation.

Sampling statistics. Back-ends that read every page (smaps) measure W(w)
exactly, up to the page size they see (2 MiB for THP). Back-ends that
sample n random pages of a span S (page_idle, kmod, sim) re-check the same
n pages at every read, so the count f(w) is non-decreasing and W(w) = f(w)
/ n x S, a binomial proportion with standard error S sqrt(p (1 - p) / n).
The increment f_i - f_{i-1} counts the sampled pages first touched in
(w_{i-1}, w_i]: binomial with n trials, and :func:`choose` compares the
upper bound of its one-sided Wilson interval (``confidence``, 95 % by
default) with r, so a slope is called under the bound only when the sample
shows it with that confidence; the allocation is the upper limit of W(w*)
too (a sweep given less than its set by sampling error faults on every
reference: LRU's worst case). The smallest slope a sample of n pages can
certify over a window difference dw is wilson_upper(0, n) x S / dw: with n
= 100 and S = 448 MiB, 11.8 MiB / dw, that is under 1 MiB/s only for dw >=
12 s. So the bound a sampled back-end can honour depends on n and the
horizon; :func:`min_certifiable_slope` states it.
"""

import dataclasses
import math
import statistics
import typing

Z_95_ONE_SIDED = 1.6449


@dataclasses.dataclass(frozen=True)
class Read:
    """One cumulative read, ``age_s`` seconds after the clear: ``kb``
    touched since (for a sampled back-end: ``accessed`` of ``sampled``
    pages, ``kb`` = accessed / sampled x span)."""
    age_s: float
    kb: int
    accessed: typing.Optional[int] = None
    sampled: typing.Optional[int] = None


@dataclasses.dataclass(frozen=True)
class Choice:
    """The allocation a bound asks for.

    ``kb`` = W(``window_s``); ``slope_kb_s`` the slope there (the upper
    confidence bound of it for a sampled back-end); ``bounded`` False when
    no window had a slope under the bound (then ``kb`` is the largest W
    read and ``slope_kb_s`` the last slope); ``running_only`` True when
    :func:`choose_cycle` took the running cycle's reads alone;
    ``recent_fall`` True when the short-cycle set (:mod:`.short_set`) saw
    the working set fall and capped the allocation."""
    kb: int
    window_s: float
    slope_kb_s: typing.Optional[float]
    bounded: bool
    points: int
    running_only: bool = False
    recent_fall: bool = False


def wilson_upper(k, n, z=Z_95_ONE_SIDED):
    """Upper limit of the one-sided Wilson score interval of a binomial
    proportion, ``k`` successes of ``n`` trials."""
    if n <= 0:
        return 1.0
    p = k / n
    z2 = z * z
    centre = p + z2 / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return min(1.0, (centre + spread) / (1 + z2 / n))


def wilson_lower(k, n, z=Z_95_ONE_SIDED):
    """Lower limit of the one-sided Wilson score interval of a binomial
    proportion, ``k`` successes of ``n`` trials."""
    if n <= 0 or k <= 0:
        return 0.0
    return max(0.0, 1.0 - wilson_upper(n - k, n, z))


def z_of(confidence):
    """One-sided normal quantile of ``confidence`` (0.5 < c < 1)."""
    return statistics.NormalDist().inv_cdf(confidence)


def min_certifiable_slope(sampled, span_kb, dw_s, confidence=0.95):
    """The smallest slope (KiB/s) a sample of ``sampled`` pages over
    ``span_kb`` can show to be under a bound, over a window difference of
    ``dw_s`` seconds (no new page seen in it)."""
    return wilson_upper(0, sampled, z_of(confidence)) * span_kb / dw_s


def monotone(reads):
    """The reads sorted by age, each at least the one before it (a
    cumulative count cannot fall; a smaller read is noise of the source:
    THP splits, a page ballooned out)."""
    out = []
    top = None
    for r in sorted(reads, key=lambda r: r.age_s):
        if r.age_s <= 0:
            continue
        if top is not None and r.kb < top.kb:
            r = dataclasses.replace(r, kb=top.kb, accessed=top.accessed,
                                    sampled=top.sampled)
        out.append(r)
        top = r
    return out


def geometric(reads, ratio=2.0):
    """The reads nearest to tau, ratio x tau, ratio^2 x tau, ... (tau: the
    first read's age), and the last (longest window) read: the first read
    at or past each target. A slope over a short difference of windows is
    mostly noise, so reads in between are not used."""
    reads = monotone(reads)
    if not reads:
        return []
    out = [reads[0]]
    target = reads[0].age_s * ratio
    for r in reads[1:]:
        if r.age_s >= target * 0.999:
            out.append(r)
            target = r.age_s * ratio
    if out[-1] is not reads[-1] and reads[-1].age_s > out[-1].age_s:
        out.append(reads[-1])
    return out


def slope(prev, cur, span_kb=None, z=Z_95_ONE_SIDED, bound=wilson_upper):
    """KiB/s between two reads: exact, or for sampled reads the upper
    (``bound``: or lower) confidence bound of the proportion of pages
    first touched between them."""
    dw = cur.age_s - prev.age_s
    if dw <= 0:
        return math.inf
    if cur.sampled and prev.sampled and span_kb:
        new = max(0, (cur.accessed or 0) - (prev.accessed or 0))
        return bound(new, cur.sampled, z) * span_kb / dw
    return max(0, cur.kb - prev.kb) / dw


def end_slope(reads, span_kb=None, confidence=0.95, ratio=2.0):
    """KiB/s of memory first touched near the longest window read: the
    backward slope between the last two geometric reads, for sampled
    reads the *lower* end of its confidence interval (what the sample
    shows at least). None with fewer than two reads.

    By Denning's relation it is the rate at which an allocation of the
    longest window's W would miss (at least, for a concave W, the slope
    there): what shrinking the guest to the pages it touched within that
    window would make it read back. The lower end, where :func:`choose`
    takes the upper one: here it is the evidence that memory outside the
    window is in use, and only evidence should hold a balloon probe back
    (a probe is a test the guest's swap-ins answer anyway)."""
    pts = geometric(reads, ratio)
    if len(pts) < 2:
        return None
    # (geometric reads have increasing ages: the slope is finite)
    return slope(pts[-2], pts[-1], span_kb, z_of(confidence),
                 bound=wilson_lower)


def choose(reads, bound_kb_s, span_kb=None, confidence=0.95, ratio=2.0):
    """The allocation that keeps the swap-in rate under ``bound_kb_s``:
    W(w*) for the smallest geometric window w* whose backward slope is at
    most the bound (see the module). None without reads."""
    pts = geometric(reads, ratio)
    if not pts:
        return None
    z = z_of(confidence)
    slopes = [slope(prev, cur, span_kb, z) for prev, cur in
              zip(pts, pts[1:])]
    # The slope at w_i is taken as the largest backward slope from w_i
    # on: for a concave W that is the one at w_i itself, but one cycle of
    # a staircase W (a hot set that moves every few seconds, read from
    # one clear time) is flat between two moves and steep across them.
    after = []
    top = -math.inf
    for s in reversed(slopes):
        top = max(top, s)
        after.append(top)
    after.reverse()
    for cur, s in zip(pts[1:], after):
        if s <= bound_kb_s:
            return Choice(_level(cur, span_kb, z), cur.age_s, s, True,
                          len(pts))
    last = pts[-1]
    return Choice(_level(last, span_kb, z), last.age_s,
                  slopes[-1] if slopes else None, False, len(pts))


def _level(read, span_kb, z):
    """W at a read: exact, or for sampled reads the upper confidence
    limit (an allocation under a sweep's set by the sampling error
    faults on every reference of the sweep)."""
    if read.sampled and span_kb:
        return int(wilson_upper(read.accessed or 0, read.sampled, z) *
                   span_kb)
    return read.kb


def merge(current, previous):
    """The reads of the running cycle, extended beyond its age with the
    previous (complete) cycle's longer windows: W(w) for w past the
    current age is at least what the current cycle already read."""
    current = monotone(current)
    if not previous:
        return current
    age = current[-1].age_s if current else 0.0
    floor = current[-1] if current else None
    out = list(current)
    for r in monotone(previous):
        if r.age_s <= age * 1.001:
            continue
        if floor is not None and r.kb < floor.kb:
            r = dataclasses.replace(r, kb=floor.kb, accessed=floor.accessed,
                                    sampled=floor.sampled)
        out.append(r)
    return out


def _level_at(reads, age_s):
    """The last read at or before ``age_s`` (a cumulative count: the
    lowest level the curve can have at that age), None if none."""
    out = None
    for r in reads:
        if r.age_s <= age_s * 1.001:
            out = r
    return out


def fell(current, previous, span_kb=None, confidence=0.95, margin=0.1,
         page_kb=4):
    """True when the running cycle's level at its latest age is
    significantly below the previous cycle's level at the same age: the
    working set fell (issue 13, the curve's lag after a fall).

    Why the same age: a stationary stream (sweep, uniform, Zipf) has the
    same W(w) in every cycle, and a hot set moving in a staircase has the
    same steps at the same age, so only a set that shrank reads lower.
    One-sided test at ``confidence``: exact reads treat the previous
    level's pages as a Poisson count (a stream's first touches within a
    window spread about sqrt of their mean), and the running level must
    be below it by that spread (z sigma) and by ``margin`` of it; sampled
    reads need the upper Wilson limit of the running proportion under the
    lower Wilson limit of the previous one (each one-sided, so the pair
    is conservative).

    What it cannot see: reads are cumulative since the clear, so a set
    that falls to pages the running cycle already touched shows only in
    the next cycle (at its first reads)."""
    cur = monotone(current)
    prev = monotone(previous)
    if not cur or not prev:
        return False
    last = cur[-1]
    # the previous cycle must have been read at least this old
    if prev[-1].age_s < last.age_s * 0.999:
        return False
    ref = _level_at(prev, last.age_s)
    if ref is None:
        return False
    z = z_of(confidence)
    if last.sampled and ref.sampled and span_kb:
        hi = wilson_upper(last.accessed or 0, last.sampled, z)
        lo = 1.0 - wilson_upper(ref.sampled - (ref.accessed or 0),
                                ref.sampled, z)
        return hi < lo * (1 - margin)
    pages = ref.kb / page_kb
    return last.kb / page_kb < pages * (1 - margin) - z * math.sqrt(pages)


def _after_fall(cur, previous, bound_kb_s, span_kb, confidence, ratio):
    """The running cycle's own choice when it reads a fall (:func:`fell`)
    and has been flat (bounded) for at least half its age, else None."""
    if not fell(cur, previous, span_kb, confidence):
        return None
    own = choose(cur, bound_kb_s, span_kb, confidence, ratio)
    if own is None or not own.bounded or own.window_s > cur[-1].age_s / 2:
        return None
    return own


def choose_cycle(current, previous, bound_kb_s, min_age_s, span_kb=None,
                 confidence=0.95, ratio=2.0, fall_detect=False,
                 fall_min_age_s=0.0):
    """The allocation of a round within a cycle: ``current`` (the running
    cycle's reads) extended by ``previous`` (the last complete cycle's,
    :func:`merge`), except that once the running cycle is ``min_age_s``
    old (half a cycle) and its own reads meet the bound, they alone decide.

    Why: right after a clear the running cycle has only short windows, and
    a sweep slower than its age would read as part of its set, so the
    previous cycle's longer windows hold the estimate up. But they also
    hold up a working set that shrank: the previous cycle saw the old set,
    and the estimate followed the fall only at the next clear after that
    (one to two cycles late, issue 13). Half a cycle of windows is enough
    to see a sweep of up to that period flatten; a slower sweep's slope
    (its set / its period) is its LRU fault rate, so a running curve under
    the bound is under it for such a sweep too. What the rule cannot
    remove is the wait for the first clear after the fall (up to a
    cycle): the running cycle that saw the old set keeps it.

    With ``fall_detect``, the running cycle also decides alone before
    half a cycle when :func:`fell` shows it significantly below the
    previous cycle at the same age (and its own curve meets the bound):
    then the previous cycle's longer windows hold a set that is gone.
    Only when this holds at the latest read and at the one before, that
    one at least ``fall_min_age_s`` old (the agent: two rounds): a hot set
    that moves reads flat between two moves, and a previous cycle that
    read a load (every page at once, then flat) shows no staircase to
    compare with, so the running cycle must be old enough to have seen a
    move of a hot set that moves faster than that, and its own curve
    must have been flat (bounded) for at least half its age
    (``window_s`` <= age / 2): a step of a staircase shorter than that
    shows as a slope over the bound."""
    cur = monotone(current)
    if not cur:
        return choose(merge(current, previous), bound_kb_s, span_kb,
                      confidence, ratio)
    age = cur[-1].age_s
    if age >= min_age_s * 0.999:
        own = choose(cur, bound_kb_s, span_kb, confidence, ratio)
        if own is not None and own.bounded:
            return dataclasses.replace(own, running_only=True)
    elif (fall_detect and len(cur) >= 2 and
          cur[-2].age_s >= fall_min_age_s * 0.999):
        # the evidence must hold at this read and at the one before
        own = _after_fall(cur, previous, bound_kb_s, span_kb, confidence,
                          ratio)
        if own is not None and _after_fall(cur[:-1], previous, bound_kb_s,
                                           span_kb, confidence, ratio):
            return dataclasses.replace(own, running_only=True)
    return choose(merge(current, previous), bound_kb_s, span_kb, confidence,
                  ratio)


def robust_offset(values):
    """The median of the offsets measured so far (the first-sample
    calibration's over several rounds: one round's reading, taken while
    the guest loads or stalls, must not set it alone)."""
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return int(statistics.median(vals))


def read_of(sample):
    """A :class:`Read` from an access sample
    (:class:`~memmut.agent.wss.sampling.base.AccessSample`) taken
    ``sample.interval_s`` after the clear."""
    if sample.referenced_kb is not None:
        return Read(sample.interval_s,
                    max(0, sample.referenced_kb - sample.offset_kb))
    kb = (sample.accessed * sample.span_kb // sample.sampled
          if sample.sampled else 0)
    return Read(sample.interval_s, kb, sample.accessed, sample.sampled)
