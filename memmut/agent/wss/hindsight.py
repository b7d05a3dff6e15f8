"""Shrinks judged in hindsight: was the memory we took in use? (issue 13)

Why: the guard of :mod:`.badis` judges a shrink by the swap-ins of the
next ``shrink_swapin_window`` seconds, the shrink floor
(:mod:`.shrink_floor`) by where the guest swapped then. A guest whose
sample misses pages it uses rarely pays for a shrink long after that
window: on a skewed (Zipf) pattern the pages taken are the tail's, each
read back when its turn comes, over tens of seconds at the booking
(TCG and the paged guest model alike, Zipf 1.2: one shrink 256 -> 215
MiB evicted about 35 MiB and the guest read 26 MiB back over the next 45
s, 3-4 % of its run, while the balloon was back at the booking 2 s after
the shrink); a moving hot set reads back what a shrink evicted when the
set comes round to it (a cycle later). Neither shows as a bad shrink,
and the next shrink takes the same memory again.

What it is. A ledger per VM follows a shrink: it opens at a shrink with
the allocation before it (``from_kb``, which the guest had without
swapping), and counts what the guest writes to swap and reads back from
it over the next ``rounds`` rounds (a descent in several steps is one
ledger: shrinks within ``settle`` rounds of the last extend it). Once the
guest has read back at least ``fraction`` of what it wrote (and wrote at
least ``min_kb``), the memory taken was in use: the shrink was bad in
hindsight. From then until the horizon the ledger asks for a shrink
floor of ``low_kb + in_kb``, never above ``from_kb``: the guest needed
at least what it read back on top of the lowest allocation it had, and
the evidence grows while it reads. If the horizon passes first, the
shrink was good (what it evicted stayed out: cold data, a working set
that fell).

Why not the size before the shrink at once: a descent taken in steps
from far above the working set is mostly right; on TCG a load-then-idle
guest descending 185 -> 113 MiB read back 5 MiB of the 16 it wrote (it
needs about 116), and a floor at 185 MiB held 70 MiB it did not use.

The ratio, not an amount, because what a shrink costs is what comes back
of what it took: cold data evicted by a load-then-idle guest's shrink is
never read back (ratio near 0), the tail of a Zipf pattern mostly is
(0.7 above). A working set that rises afterwards also reads back, which
is then a floor at a size the guest needs anyway.

Which read-backs count (``recent_only``). Without it, every swap-in
in the ledger's rounds counts. A guest also reads back pages evicted
long before the shrink: a hot set moving to a region that went to swap
while the guest loaded its data, or at an earlier size. Those are not
the memory the shrink took, yet counted they judged it bad (TCG, the
slow hot set of the held-out suite, stop 65: a window move read back
13.8 MiB where 7.4 MiB had been written since the shrink, and the floor
held 242 MiB for a 120 MiB working set). With it, a swap-in counts only
if the page was evicted after the ledger opened: memstore's reuse
distance of a swap-in is the number of pages still in swap that were
evicted after it (seed 004 §2.4.4), so a page evicted since the ledger
opened has a distance below what the guest wrote since then less what
it read back of it, and an older page has at least that. The
histogram's buckets (``[memstore] histogram_bucket_pages``, 1 MiB by
default) make the test count a bucket that straddles the line (the bad
side); swap-ins of pages memstore never saw written (``cold``) are old.
A reading with no distances (the balloon-statistics monitor) counts
every swap-in as before.

Only Badis's own shrinks are judged. A balloon taken below the demand
Badis asked for (the host reclaiming a VM to its Mem_init under a
shortage, seed 004 ch.3) was known too small when it was taken: its
read-backs say nothing of the estimate, and judged they set a floor at
the booking that outlived the working set (functional mutualization
test, stop 50: a guest whose working set fell from 280 to 24 MiB held
at 376 MiB for two minutes). Such a shrink ends the ledger.
"""

import dataclasses

from memmut import units

_mib = units.fmt_kb


@dataclasses.dataclass(frozen=True)
class Ledger:
    """The shrink under judgement (``from_kb`` 0: none)."""
    from_kb: int = 0        # the allocation before the shrink
    low_kb: int = 0         # the lowest allocation since
    out_kb: int = 0         # written to swap since it began
    in_kb: int = 0          # read back since it began
    age: int = 0            # rounds since it began
    since_shrink: int = 0   # rounds since its last shrink
    bad: bool = False       # judged bad: it asks for a floor


@dataclasses.dataclass(frozen=True)
class Params:
    rounds: int = 0         # the horizon (0: off)
    fraction: float = 0.25
    min_kb: int = 16 * 1024
    settle: int = 3
    # count only the read-backs of pages evicted since the ledger opened
    recent_only: bool = False

    def __post_init__(self):
        if self.rounds < 0 or self.settle < 0:
            raise ValueError('hindsight rounds and settle must not be '
                             'negative')
        if not 0 < self.fraction <= 1:
            raise ValueError('hindsight fraction must be in (0, 1]')
        if self.min_kb < 0:
            raise ValueError('hindsight min_kb must not be negative')


def recent_kb(distances, queued_kb):
    """KiB of one round's swap-ins whose pages were evicted after the
    ``queued_kb`` most recent still in swap: ``distances`` are
    ``(least distance KiB, KiB read)`` pairs, one per histogram bucket
    (a bucket whose least distance is below the line counts whole)."""
    return sum(kb for least, kb in distances if least < queued_kb)


def update(ledger, *, shrunk, shrunk_from_kb, m_cur_kb, out_kb, in_kb,
           params, forced=False, in_distances=None):
    """One round: ``(ledger, floor_kb, event)``. ``floor_kb`` is the floor
    a shrink judged bad asks for in a round that read back (0: none): the
    lowest allocation since it plus what the guest read back, at most the
    allocation before it; ``event`` a log line when it is judged.
    ``out_kb``/``in_kb``: what the guest wrote to swap and read back
    over the round. ``forced``: the shrink took the balloon below the
    demand Badis had asked for (not judged; it ends the ledger).
    ``in_distances``: the round's swap-ins by reuse distance
    (:func:`recent_kb`; None: unknown), read with ``params.recent_only``.
    """
    if not params.rounds:
        return ledger, 0, None
    if shrunk and forced:
        return Ledger(), 0, None
    event = None
    if shrunk and shrunk_from_kb:
        if ledger.from_kb and ledger.since_shrink <= params.settle:
            ledger = dataclasses.replace(
                ledger, low_kb=min(ledger.low_kb, m_cur_kb), since_shrink=0)
        else:
            ledger = Ledger(from_kb=shrunk_from_kb, low_kb=m_cur_kb)
    elif not ledger.from_kb:
        return ledger, 0, None
    else:
        ledger = dataclasses.replace(
            ledger, low_kb=min(ledger.low_kb, m_cur_kb),
            since_shrink=ledger.since_shrink + 1)
    out_kb = max(0, out_kb or 0)
    in_kb = max(0, in_kb or 0)
    if params.recent_only and in_distances is not None:
        # still in swap of what was evicted since the ledger opened
        in_kb = min(in_kb, recent_kb(
            in_distances, ledger.out_kb + out_kb - ledger.in_kb))
    ledger = dataclasses.replace(
        ledger, out_kb=ledger.out_kb + out_kb,
        in_kb=ledger.in_kb + in_kb, age=ledger.age + 1)
    if (not ledger.bad and ledger.out_kb >= max(1, params.min_kb) and
            ledger.in_kb >= params.fraction * ledger.out_kb):
        ledger = dataclasses.replace(ledger, bad=True)
        event = ('shrink %s -> %s bad in hindsight: the guest read back %s '
                 'of the %s it wrote to swap in %d rounds'
                 % (_mib(ledger.from_kb), _mib(ledger.low_kb),
                    _mib(ledger.in_kb), _mib(ledger.out_kb), ledger.age))
    # asked for in the rounds that read back only: in between, the
    # floor's own steps down test it (asked every round, a step was
    # undone the round after it, and each undoing doubled its wait: W2
    # in the model held the booking for a working set down to 132 MiB)
    floor = (min(ledger.from_kb, ledger.low_kb + ledger.in_kb)
             if ledger.bad and (in_kb or event) else 0)
    if ledger.age >= params.rounds:
        return Ledger(), floor, event
    return ledger, floor, event
