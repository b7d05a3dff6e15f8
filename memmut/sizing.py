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
