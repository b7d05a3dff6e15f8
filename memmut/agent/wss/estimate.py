"""The agent's working-set estimate of one VM, as actuators consume it."""

import dataclasses
import typing


@dataclasses.dataclass(frozen=True)
class Estimate:
    """One VM's working-set estimate, as the actuators consume it.

    ``wss_kb`` is this round's (instantaneous) estimate, ``max_avg_kb``
    WSS^max_avg, ``demand_kb`` what the VM should get before headroom,
    ``source`` a short description of where it came from
    (``badis/page_idle+memstore``, ``balloon_stats``...), ``mode`` the
    Badis state (V, VG, G) or None for other estimators. ``fresh`` is False
    when no round ran for the VM at this poll (the last estimate again);
    ``probe_kb`` is set by active estimators (Zballoond, self-ballooning)
    to the exact size they want to set, and by Badis while it probes a
    lower pinned-page correction with the balloon (``[badis]
    pinned_probe``: the estimate is unchanged, the balloon is set to
    what it would be with the lower correction, without headroom).
    """
    uuid: str
    wss_kb: int
    max_avg_kb: int
    demand_kb: int
    source: str
    mode: typing.Optional[str] = None
    timestamp: float = 0.0
    fresh: bool = True
    probe_kb: typing.Optional[int] = None
    transition: typing.Optional[str] = None
    detail: str = ''
    # The inputs of max_avg_kb: a moving average of this many round
    # estimates, its maximum over this many seconds (None: the
    # estimator has no max-average, max_avg_kb is its estimate).
    max_avg_window: typing.Optional[int] = None
    max_avg_slice_s: typing.Optional[float] = None
    # Badis: shrinks of the balloon followed by swap-ins within [badis]
    # shrink_swapin_window (counts against the estimator), and the
    # pinned-page correction with why and when (agent clock, epoch
    # seconds) it last changed.
    bad_shrinks: int = 0
    pinned_kb: typing.Optional[int] = None
    pinned_note: str = ''
    pinned_at: typing.Optional[float] = None
    # Badis: the shrink floor (what the demand may not fall below since a
    # shrink swapped; 0: none), its last change in words and when.
    shrink_floor_kb: typing.Optional[int] = None
    shrink_floor_note: str = ''
    shrink_floor_at: typing.Optional[float] = None
    # Badis: the round's decisions in words (a shrink followed by
    # swap-ins and the hold it set, a pinned-page correction changed or
    # kept, a probe), as logged; ``held``: the shrink guard held the
    # estimate up this round.
    events: tuple = ()
    held: bool = False
