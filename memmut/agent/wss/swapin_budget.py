"""The swap-in budget: no shrink while a VM reads back from swap more
than it is allowed to, averaged over a window of rounds (issue 13).

Why: the issue defines the working set of a skewed or moving pattern as
the smallest allocation at which the guest's swap-in rate stays under a
stated bound. Sampling cannot see that bound's side of a hot set that
moves, or of a Zipf tail: it reads what was touched in the last round,
and shrinks to it; the guest swaps, the balloon grows back, and a few
quiet rounds later the same samples shrink it again (TCG, hotset, stop
41: a shrink every 15 s for 120 s, 2.4 MiB/s swapped in, 14 % slower for
11 % of the booking saved, where the one-poll-late oracle saved
nothing). The floor of :mod:`.shrink_floor` remembers *where* the guest
swapped but steps down to test it again; the budget measures *how much*
the shrinks have cost and stops them while the cost is over the bound,
whatever the sample says.

What it is. Each round's swap-in rate (KiB/s over the round) enters an
exponentially weighted mean with a time constant of ``window_s``; rounds
whose swap-ins are a rise of the working set (Geiger above the size
before the last shrink: not a shrink's doing) count as none. While the
mean is above ``limit_kb_s`` the demand is held at the current
allocation (no shrink; growth on shortage goes on); it is released when
the mean falls under half the limit (hysteresis: released at the limit,
the first shrink would put it over again). The time constant is in
rounds (``swapin_budget_rounds`` x ``round_interval``): 30 minutes at
production's 60 s rounds.
"""

import dataclasses
import math

from memmut import units

_mib = units.fmt_kb


@dataclasses.dataclass(frozen=True)
class Budget:
    """The swap-in budget of one VM between rounds."""
    rate_kb_s: float = 0.0     # weighted mean swap-in rate
    over: bool = False         # shrinks held


def update(budget, *, swapin_kb, interval_s, rise, limit_kb_s, window_s):
    """One round: ``(new_budget, event)``; ``event`` is a log line or
    None. ``swapin_kb``: read back from swap over the round, lasting
    ``interval_s`` seconds (None or 0: unknown, nothing changes);
    ``rise``: the swap-ins are a rise of the working set."""
    if not limit_kb_s or not interval_s or interval_s <= 0:
        return budget, None
    rate = 0.0 if rise else max(0.0, swapin_kb or 0) / interval_s
    keep = math.exp(-interval_s / window_s) if window_s > 0 else 0.0
    mean = budget.rate_kb_s * keep + rate * (1.0 - keep)
    over = budget.over
    event = None
    if not over and mean > limit_kb_s:
        over = True
        event = ('swap-in budget: %s/s read back from swap over the last '
                 '%gs, above %s/s: no shrink until it falls under %s/s'
                 % (_mib(int(mean)), window_s, _mib(limit_kb_s),
                    _mib(limit_kb_s // 2)))
    elif over and mean < limit_kb_s / 2.0:
        over = False
        event = ('swap-in budget: %s/s read back from swap over the last '
                 '%gs: shrinks allowed again' % (_mib(int(mean)), window_s))
    return Budget(rate_kb_s=mean, over=over), event
