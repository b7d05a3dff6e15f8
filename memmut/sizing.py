"""What a VM is given: its working set plus headroom, never above its
booking.

The agent sizes balloons and the controller packs VMs by this one rule,
so that the memory a VM is packed on is the memory its balloon will give
it. The headroom is the larger of a fixed amount and a fraction of the
working set (``[badis] headroom_kb`` and ``headroom_fraction``).
"""

import numpy as np


def headroom(wss, headroom_kb=0, headroom_fraction=0.0):
    """The safety margin added to a working set: the larger of the two.

    Works on scalars (an int for an int ``wss``) and on arrays; sizes are
    in whatever unit ``wss`` is in, and ``headroom_kb`` must be in that
    unit too.
    """
    if np.ndim(wss) == 0 and isinstance(wss, (int, np.integer)):
        return max(int(headroom_kb), int(wss * headroom_fraction))
    if np.ndim(wss) == 0:
        return max(float(headroom_kb), float(wss) * headroom_fraction)
    return np.maximum(headroom_kb, np.asarray(wss, dtype=float)
                      * headroom_fraction)


def demand(wss, booked=None, headroom_kb=0, headroom_fraction=0.0):
    """Working set plus headroom, capped at the booked memory when given
    (a balloon never exceeds the booking). Arrays give arrays."""
    d = np.asarray(wss, dtype=float) + headroom(
        np.asarray(wss, dtype=float), headroom_kb, headroom_fraction)
    if booked is not None:
        d = np.minimum(d, booked)
    return d


def packing_kb(max_avg_kb, shrink_floor_kb=None, carry_floor=True,
               booked_kb=None):
    """The working set a VM is packed on: its WSS^max_avg, or the shrink
    floor its agent holds when that is higher and ``carry_floor``
    (``[consolidation] pack_on_shrink_floor``), at most ``booked_kb``
    when given. None when the agent reported no WSS^max_avg.

    Why the floor: the agent keeps the balloon at least at the floor (the
    guest read back from swap after a shrink to below it) whatever the
    sample says, so the VM takes that much of its host. A planner packing
    on the sample alone counts the host as emptier than its balloons
    leave it, and the VM moves with the allocation it has.
    """
    if max_avg_kb is None:
        return None
    kb = max_avg_kb
    if carry_floor and shrink_floor_kb:
        kb = max(kb, shrink_floor_kb)
    return kb if booked_kb is None else min(kb, booked_kb)
