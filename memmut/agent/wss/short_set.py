"""The short-cycle sampled set: a recent-activity reading that sees a
working set fall before the working-set curve's next clear (issue 13).

Why: the curve (:mod:`.ws_curve`) reads what was touched since its last
clear, once every ``ws_curve_rounds`` rounds. A working set that shrinks
to pages the running cycle already touched changes none of its reads
until the next clear, so the estimate follows such a fall 0.5 to 1.5
cycles late, and no test on those reads can see it earlier
(:func:`.ws_curve.fell` says so).

What it is. A second set of ``n`` pages, drawn at random from the guest
RAM and disjoint from the curve's own sample (see the back-ends for what
disjoint means), is cleared on its own short cycle of ``k`` rounds and
read at every round without clearing. Its reads are the same kind as the
curve's: after a clear at time c, the fraction of its pages touched by
time c + a estimates W_now(a) / S, the part of the guest memory (span S)
touched within the last a seconds. Only the window [c, c + a] matters, so
a set that shrank at time f shows in full in the first short window that
starts after f: k to 2 k rounds after the fall, against 0.5 to 1.5 long
cycles for the curve.

Statistics. With x of the n pages touched, the estimate of W_now(a) is
x / n x S, a binomial proportion (the pages are drawn uniformly; each is
touched or not), standard error S sqrt(p (1 - p) / n): with n = 200 and S
= 448 MiB at most 15.8 MiB. The test is one-sided at ``confidence``
(95 % by default): the upper limit of the Wilson score interval of x / n
must be below the lower limit of the level the curve predicts at the same
age a (the reference: the last complete cycle's read at or before a; for
a sampled curve the lower Wilson limit of its proportion, for an exact
one its page count less z times its square root, a Poisson spread), and
below it by ``margin`` (10 %) as well. Each limit is one-sided at the
confidence, so the pair is conservative: a stationary stream, read twice
at the same age, almost never passes it. Every read of the short window
from half its length on must pass, and the fall is called only at the
window's end (age k rounds), so that a hot set that moves in steps (whose
level at a given age depends on where the clear fell between two moves)
has to look low over half the window. And the short window's own curve
must not still be rising at its end faster than the swap-in bound
(:func:`growing`, the lower Wilson limit of its last half's increment):
a set that needs longer windows than the short set has (a uniform set
read before its pages are all touched, Zipf, data just loaded and now
worked on in a larger set) has no level the short set can give.

What the estimate becomes. When a fall is called, the allocation is at
most the upper Wilson limit of W_now(k rounds), x / n x S (the cap); the
curve's cycle is cleared at once, and the cycle that saw the old set
stays as the previous one with every level capped (:func:`capped`): the
new running cycle is extended by it as usual, so the estimate stays at
least what the new cycle reads and at most the cap until the running
cycle is half a cycle old and decides alone (it grows again as it reads
longer windows: a rise is followed as before). A pattern whose working
set needs windows longer than k rounds (a sweep slower than that, Zipf's
tail) reads the same at age a in every cycle and does not fire the test
unless it really fell, and a set that fell but still rises at the short
horizon is not capped (:func:`growing`): the fall then shows at the
curve's next clear, as without the short set.

The smallest fall n pages can show: the reference p0 falls to p1 when
wilson_upper(p1 n, n) < (1 - margin) x lower(p0); with n = 200, a level at
50 % of S is seen to fall once it is under about 39 % (n = 100: 36 %,
n = 400: 41 %), one at 25 % once under 17.5 %.
"""

import dataclasses
import math
import typing

from memmut.agent.wss import ws_curve


@dataclasses.dataclass(frozen=True)
class Fall:
    """A fall the short set saw: ``kb`` the upper limit of W_now at
    ``age_s`` (what the allocation may come down to), ``recent_kb`` and
    ``reference_kb`` the two limits the test compared (short set's upper,
    reference's lower, both in KiB)."""
    kb: int
    age_s: float
    recent_kb: int
    reference_kb: int


def recent_upper_kb(read, span_kb, confidence=0.95):
    """Upper limit (one-sided Wilson at ``confidence``) of the memory a
    short-set read says was touched since its clear."""
    z = ws_curve.z_of(confidence)
    return int(ws_curve.wilson_upper(read.accessed or 0, read.sampled, z) *
               span_kb)


def reference_lower_kb(read, span_kb, confidence=0.95, page_kb=4):
    """Lower limit of the level of one read of the curve: the lower
    one-sided Wilson limit of a sampled proportion, or for an exact read
    its pages less z x sqrt(pages) (first touches within a window spread
    about the square root of their mean)."""
    z = ws_curve.z_of(confidence)
    if read.sampled:
        lo = 1.0 - ws_curve.wilson_upper(read.sampled - (read.accessed or 0),
                                         read.sampled, z)
        return int(lo * span_kb)
    pages = read.kb / page_kb
    return max(0, int((pages - z * math.sqrt(pages)) * page_kb))


def reference_at(reference, age_s):
    """The reference curve's read at or before ``age_s`` (the lowest
    level a cumulative count can have at that age), None if none."""
    return ws_curve._level_at(ws_curve.monotone(reference), age_s)


def growing(short_reads, span_kb, bound_kb_s, confidence=0.95):
    """Whether the short window's curve is still rising at its end
    faster than ``bound_kb_s``: the lower one-sided Wilson limit of the
    pages first touched between its read nearest half its age and its
    last read, per second. A set that still grows at the short horizon
    needs longer windows than the short set has, so its level there is
    no allocation to come down to."""
    reads = [r for r in ws_curve.monotone(short_reads) if r.sampled]
    if len(reads) < 2:
        return True
    last = reads[-1]
    mid = ws_curve._level_at(reads[:-1], last.age_s / 2) or reads[0]
    dw = last.age_s - mid.age_s
    if dw <= 0:
        return True
    new = max(0, (last.accessed or 0) - (mid.accessed or 0))
    z = ws_curve.z_of(confidence)
    lo = 1.0 - ws_curve.wilson_upper(last.sampled - new, last.sampled, z)
    return lo * span_kb / dw > bound_kb_s


def fell(short_reads, reference, span_kb, window_s, bound_kb_s,
         confidence=0.95, margin=0.1, page_kb=4) -> typing.Optional[Fall]:
    """A :class:`Fall` when the short window (``short_reads``, the short
    set's cumulative reads since its clear) has reached ``window_s``,
    every one of its reads from half the window on is significantly
    below ``reference`` (the curve's reads of one cycle) at the same
    age, and its curve is not still rising faster than ``bound_kb_s``
    at its end (:func:`growing`); else None."""
    reads = [r for r in ws_curve.monotone(short_reads) if r.sampled]
    if not reads or reads[-1].age_s < window_s * 0.999:
        return None
    last = None
    for r in reads:
        if r.age_s < reads[-1].age_s / 2 * 0.999:
            continue            # a short age says little (see the module)
        ref = reference_at(reference, r.age_s)
        if ref is None:
            return None
        hi = recent_upper_kb(r, span_kb, confidence)
        lo = reference_lower_kb(ref, span_kb, confidence, page_kb)
        if not hi < lo * (1 - margin):
            return None
        last = (r, hi, lo)
    if growing(reads, span_kb, bound_kb_s, confidence):
        return None
    r, hi, lo = last
    return Fall(kb=hi, age_s=r.age_s, recent_kb=hi, reference_kb=lo)


def capped(reads, kb):
    """The reads of a cycle that saw the old set, capped at ``kb`` (what
    the short set certified after a fall): they stand in for the previous
    cycle until the running one is old enough to decide alone. Plain
    levels (no sampled counts): the cap is no binomial count of the
    curve's own pages, and slopes against them are taken as exact."""
    return [dataclasses.replace(r, kb=min(r.kb, kb), accessed=None,
                                sampled=None)
            for r in ws_curve.monotone(reads)]


def smallest_detectable(reference_fraction, pages, confidence=0.95,
                        margin=0.1):
    """The largest recent fraction a sample of ``pages`` pages can show to
    be a fall from an exactly known ``reference_fraction`` (for the
    docs and tests: the resolution of the short set)."""
    z = ws_curve.z_of(confidence)
    target = reference_fraction * (1 - margin)
    best = None
    for x in range(pages + 1):
        if ws_curve.wilson_upper(x, pages, z) < target:
            best = x / pages
        else:
            break
    return best
