"""What a Badis round observes, from the balloon's recent sizes: pure
functions beside :func:`memmut.agent.wss.badis.step`.

A round reads its sample and swap traffic over an interval during which
the balloon may have moved. What the readings mean depends on it:

* Geiger's WSS is the size the guest evicted at + m_ghost. When the
  balloon grew since the last round, the evictions happened at the
  smaller size (m_cur + m_ghost would count the growth twice).
* A guest made smaller since the last round, or since its sampling
  interval began, evicts because of it: its swap growth is ours, not a
  shortage.
* Badis learns the pinned-page correction as m_cur - sampled, which holds
  only if the guest had m_cur all interval long ("steady"): after a grow
  it had less for part of it (only a lower bound: ``grew_from_kb``),
  after a shrink it touched pages it no longer has.
"""

import dataclasses
import typing

from memmut.agent.wss import badis

# Balloon sizes closer than this are the same size: the guest's balloon
# driver works in pages and libvirt reports what the driver reached, so a
# target is met to within a few pages, not exactly.
BALLOON_TOLERANCE_KB = 1024


@dataclasses.dataclass(frozen=True)
class BalloonSizes:
    """The VM's balloon now, at its last round (None before the first)
    and when its sampling interval began (None: no interval ran)."""
    m_cur_kb: int
    last_round_kb: typing.Optional[int] = None
    interval_start_kb: typing.Optional[int] = None

    @property
    def evicted_at_kb(self):
        """The size the guest evicted at over the interval."""
        if self.last_round_kb is None:
            return self.m_cur_kb
        return min(self.m_cur_kb, self.last_round_kb)

    @property
    def shrunk(self):
        """Made smaller since the last round or the interval's start."""
        return any(b is not None and b > self.m_cur_kb + BALLOON_TOLERANCE_KB
                   for b in (self.last_round_kb, self.interval_start_kb))

    @property
    def shrunk_from_kb(self):
        """The size before the shrink (the larger of the last round's and
        the interval's start), or None when not shrunk."""
        if not self.shrunk:
            return None
        return max(b for b in (self.last_round_kb, self.interval_start_kb)
                   if b is not None)

    @property
    def grown(self):
        """Grown since the last round."""
        return (self.last_round_kb is not None and
                self.m_cur_kb > self.last_round_kb + BALLOON_TOLERANCE_KB)

    @property
    def steady(self):
        """The same size all the sampling interval long."""
        return (self.interval_start_kb is not None and
                abs(self.interval_start_kb - self.m_cur_kb) <
                BALLOON_TOLERANCE_KB)

    @property
    def grew_from_kb(self):
        """The size at the interval's start when the balloon grew since."""
        if (self.interval_start_kb is not None and
                self.interval_start_kb < self.m_cur_kb -
                BALLOON_TOLERANCE_KB):
            return self.interval_start_kb
        return None


def pressure_kb(reading, shrunk):
    """The swap growth of a reading that counts as a shortage: at the
    monitor's rate or faster, at an allocation we did not shrink (a guest
    we shrank evicts because of it)."""
    if shrunk or not reading.pressure:
        return 0
    return reading.grown_kb


def observe(now, booked_kb, sizes, sampled, reading, full, sampled_round,
            used_kb=None, allocating=False, in_use_kb=None, hold=False):
    """The :class:`badis.Observation` of a round.

    ``sampled`` is the access-sampling estimate (None: none this round),
    ``reading`` the swap monitor's, ``full`` whether the guest has no free
    memory to speak of; ``sampled_round`` False for a round run on swap
    activity between two regular rounds (it has Geiger's reading only and
    learns no pinned-page correction); ``used_kb`` what the guest had
    not free over the sampled interval (None: unknown or moving),
    ``allocating`` whether it rose beyond the noise in that interval,
    ``in_use_kb`` what it reports in use now, page cache not counted;
    ``hold`` whether the balloon is held this round (``Observation.hold``).
    """
    return badis.Observation(
        timestamp=now, m_cur_kb=sizes.m_cur_kb, booked_kb=booked_kb,
        sampled=sampled, ghost=reading.ghost, swapping=reading.swapping,
        steady=sampled_round and sizes.steady,
        grew_from_kb=sizes.grew_from_kb if sampled_round else None,
        full=full, pressure_kb=pressure_kb(reading, sizes.shrunk),
        shrunk=sizes.shrunk, shrunk_from_kb=sizes.shrunk_from_kb,
        evicted_kb=reading.out_kb, swapin_kb=reading.in_kb,
        interval_s=reading.seconds, swapin_distances=reading.in_distances,
        used_kb=used_kb if sampled_round else None,
        allocating=allocating and sampled_round, in_use_kb=in_use_kb,
        hold=hold)
