"""Re-entries: swap-ins of pages the guest evicted long ago are not a
shortage while they stay under the swap-in bound (issue 13).

Why: Geiger (seed 004 §2.4.4) reads every swap-in of page p at reuse
distance D as "with D more pages, this would have been a hit", and Badis
grows the balloon to m_cur + m_ghost. That holds for a guest cycling over
more memory than it has. It does not hold for a guest whose working set
*moved* onto data it left long ago: a hot set that moves to a region that
went to swap while the guest loaded, a job coming back to its data after
an hour. Those pages must be read from swap whatever the allocation (they
are in swap now; more memory later does not bring them back sooner), and
the pages they push out are the ones the guest left. Growing then buys
nothing: the balloon goes to the booking, the swap-ins stop by
themselves, and the estimate comes back down a dozen rounds later (the
paged guest model and TCG alike, the slow hot set of the held-out suite:
each move of its 40 MiB window sent a 256 MiB guest whose working set is
116 MiB to 256 MiB for 6-10 s).

What it is. A swap-in is *recent* when its page was evicted within the
last ``horizon_s`` seconds, a *re-entry* otherwise. memstore's reuse
distance of a swap-in is the number of pages still in swap that were
evicted after it, so a page evicted within the horizon has a distance
below what the guest wrote to swap in the horizon (``line_kb``) and an
older page has at least that; a swap-in memstore has no distance for
(written before its monitor saw it) is a re-entry. A histogram bucket
that straddles the line counts as recent (the safe side).

Recent swap-ins are what Geiger is for (a guest evicting pages it reads
back soon lacks memory) and count as before. Re-entries are left out of
the reading (no swap activity, no Geiger estimate, no read-back) while
their pace is under ``limit_kb_s`` (``[badis] swapin_bound_kb_s``: the
issue's definition of a working set is the smallest allocation at which
the guest's swap-in rate stays under that bound), judged between
episodes and within one (:func:`update`); once over it they count until
their mean rate falls under half of it. Over it is a guest whose hot set
moves faster than the bound (its working set is all it touches), or one
cycling through more memory than it has more slowly than the horizon (a
sweep whose pass takes longer), so that every page it reads back is old.

The round (:mod:`.badis_rounds`) adds two rules that need the access
sample: re-entries count after all when the sample fills the allocation
(a working set rising into data left long ago reads it back like a hot
set moving onto it, but touches all it has while it does), and a round
in which the guest read them back faster than ``[badis]
stall_swapin_rate_kb`` learns nothing from its sample (it reads low
while the guest stalls) and does not shrink.

What it costs. One move cannot tell its pace: the first move of a hot
set that moves faster than the bound is read back without a grow, and
the guest evicts its coldest pages for it; what it needs of those comes
back at short distances (recent) and counts. A slow cycle at twice the
bound counts after about ``window_s``. With the balloon-statistics
monitor (no distances) nothing changes. Measured on the paged guest
model and TCG in tests/benchmarks/results/badis71: off by default.
"""

import dataclasses
import math

from memmut import units

_mib = units.fmt_kb


@dataclasses.dataclass(frozen=True)
class Params:
    horizon_s: float = 0.0      # 0: off (every swap-in counts)
    limit_kb_s: float = 1024.0
    window_s: float = 60.0

    def __post_init__(self):
        if self.horizon_s < 0 or self.limit_kb_s < 0 or self.window_s <= 0:
            raise ValueError('re-entry horizon and limit must not be '
                             'negative, its window must be positive')


@dataclasses.dataclass(frozen=True)
class Budget:
    """Re-entries of one VM between readings."""
    rate_kb_s: float = 0.0      # weighted mean re-entry rate
    counted: bool = False       # over the bound: they count
    # the episodes (readings in a row with re-entries) begun within the
    # window: (start, KiB), the last one open when ``open``
    episodes: tuple = ()
    open: bool = False


def line_kb(writes, now, horizon_s):
    """KiB written to swap within ``horizon_s`` seconds of ``now``;
    ``writes`` are ``(time, KiB written since some origin)`` in time order,
    the last one now's. From the last entry at or before ``now -
    horizon_s`` (the line then covers at least the horizon: more swap-ins
    count as recent), else from the first."""
    if not writes:
        return 0
    start = writes[0]
    for entry in writes:
        if entry[0] > now - horizon_s:
            break
        start = entry
    return max(0, writes[-1][1] - start[1])


def split(histogram, bucket_pages, cold_kb, line):
    """``(recent histogram, re-entry KiB)`` of one reading's swap-ins:
    ``histogram`` is memstore's (bucket -> swap-ins, bucket ``b`` holding
    the distances in ``[b, b + 1)`` x ``bucket_pages`` pages; a bucket
    whose least distance is below ``line`` KiB is recent), ``cold_kb``
    the swap-ins without a distance (re-entries)."""
    recent, old = {}, max(0, cold_kb)
    for b, n in histogram.items():
        if int(b) * bucket_pages * units.PAGE_KIB < line:
            recent[b] = n
        else:
            old += int(n) * units.PAGE_KIB
    return recent, old


# A reading's recent swap-ins are part of the move its re-entries make
# when they are at most this share of them: on TCG a slow hot set's move
# read back 40 MiB of re-entries with a few MiB of pages the last shrinks
# had evicted within the horizon, and those alone (a shortage, Geiger
# from their distances) sent the balloon to the booking (badis71).
MOVE_RECENT_SHARE = 0.25


def part_of_a_move(recent_kb, reentry_kb):
    """Whether a reading's recent swap-ins go with its re-entries (a
    few pages a shrink took, read back as the hot set moves) rather than
    mark a shortage of their own."""
    return reentry_kb > 0 and recent_kb <= MOVE_RECENT_SHARE * reentry_kb


def update(budget, reentry_kb, interval_s, params, now=0.0):
    """One reading ending at ``now``: ``(budget, event)``;
    ``budget.counted`` says whether this reading's re-entries count;
    ``event`` is a log line when that changes.

    An *episode* is a run of readings with re-entries. Two paces, either
    over the bound counts:

    * between episodes, from the second on: the re-entries of the
      episodes begun within ``window_s`` before this one, over the time
      from the first of them to this one (a hot set moving every P
      seconds by B reads B / P: one move alone says nothing of its pace,
      two do);
    * within this episode: more than ``limit_kb_s`` x (its length +
      ``window_s``), a guest re-reading old pages steadily faster than
      the bound (after about window_s x limit / (rate - limit)).

    Once counted, they count until the weighted mean rate (time constant
    ``window_s``) is under half the bound (a guest cycling at the bound
    would otherwise have each burst's first part left out)."""
    if not interval_s or interval_s <= 0:
        return budget, None
    reentry_kb = max(0, reentry_kb)
    keep = math.exp(-interval_s / params.window_s)
    mean = (budget.rate_kb_s * keep +
            reentry_kb / interval_s * (1.0 - keep))
    episodes = list(budget.episodes)
    if episodes and not budget.open:
        episodes = [e for e in episodes if e[0] >= now - params.window_s]
    spaced = within = None
    if reentry_kb:
        if budget.open and episodes:
            start, kb = episodes[-1]
            episodes[-1] = (start, kb + reentry_kb)
        else:
            episodes = [e for e in episodes
                        if e[0] >= now - params.window_s]
            episodes.append((now - interval_s, reentry_kb))
        start, kb = episodes[-1]
        before = episodes[:-1]
        if before:
            spaced = (sum(k for _, k in before) /
                      max(interval_s, start - before[0][0]))
        if kb > params.limit_kb_s * (now - start + params.window_s):
            within = kb / max(interval_s, now - start)
    counted = ((budget.counted and mean > params.limit_kb_s / 2.0) or
               (spaced is not None and spaced > params.limit_kb_s) or
               within is not None)
    event = None
    if counted != budget.counted:
        if not counted:
            why = 'at %s/s over the last %gs, under %s/s' % (
                _mib(int(mean)), params.window_s,
                _mib(int(params.limit_kb_s / 2.0)))
        elif within is not None:
            why = ('%s in one episode (%s/s), more than %gs at the bound '
                   'of %s/s' % (_mib(int(episodes[-1][1])),
                                _mib(int(within)), params.window_s,
                                _mib(int(params.limit_kb_s))))
        else:
            why = ('at %s/s between their last %d episodes, above %s/s'
                   % (_mib(int(spaced)), len(episodes),
                      _mib(int(params.limit_kb_s))))
        event = ('re-entries (swap-ins of pages evicted more than %gs ago) '
                 '%s: they %s' % (params.horizon_s, why,
                                  'count as a shortage again' if counted
                                  else 'no longer count as a shortage'))
    return Budget(rate_kb_s=mean, counted=counted,
                  episodes=tuple(episodes), open=bool(reentry_kb)), event
