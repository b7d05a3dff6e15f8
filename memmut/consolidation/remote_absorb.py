"""Memory overload that remote memory absorbs instead of a migration.

Why: a host whose VMs' working sets grow past its memory has two
remedies in memmut. The planner can live-migrate VMs away (minutes per
VM, and the VMs come back, or others move, when the spike ends), or the
host's agent can serve the excess from memory other hosts lend (global
mutualization, seed 004 §4.3: remote swap over the network, at a
fraction of a disk's latency; :doc:`remote-memory`). Where memory spikes
are short and correlated (a group's nightly batch job, backups), moving
VMs for each of them is most of the planner's migrations (the
``memory_spikes`` synthetic profile of issue 19: 95 % of its moves were
caused by memory). With ``[consolidation] remote_memory_fraction`` the
planner leaves such a host alone while its spike stays within what remote
memory can serve, and migrates only beyond that.

What it is. ``fraction`` (0: off) is how much of a host's memory remote
memory may stand in for. A host that only the memory detector found
overloaded is tested again by the same detector (its own state kept
apart) on the host's memory load over ``1 + fraction`` times its memory:
as if the host had that much more. If it is no longer overloaded there,
the host may *absorb* its overload: it reserves from the memory the other
hosts can lend the least extra memory at which the detector stops firing
(found by bisection: the detectors are functions of a load series, so
this holds for any of them, forecasts included; with a threshold of 0.95
it is the forecast excess plus the threshold's margin). The least
loaded hosts absorb first, as long as the lenders' memory covers every
reservation made; the others are overloaded as before and their VMs
move. A host overloaded on CPU is never absorbed
(remote memory gives no CPU), nor is one whose spike would pass the
fraction.

What a lender lends. What its agent reports it can lend (its reservoir,
``GMC_inform``; :attr:`PlannerHost.lendable`), or where no report is
known (the simulator), its memory not promised to its VMs: its memory
less what they are packed on (working sets plus headroom). Only hosts
that are on and neither overloaded, absorbing nor underloaded (which
the round may empty and switch off) lend. Reservations are
the planner's bookkeeping for one round, not allocations: the agents ask
for remote memory themselves (``GMC_alloc``) when their VMs need it.
The round's own placements onto lenders are not taken off what they
lend: the next round sees them.

What it costs the VMs: while a host absorbs, the part of its VMs'
working sets beyond its memory is read from other hosts' memory instead
of its own (the simulator reports how much, how long, and what was left
unserved when the lenders ran short).
"""

import typing


class Candidate(typing.NamedTuple):
    """A host the memory detector found overloaded, CPU not."""
    host: str
    load: float          # its memory load now (fraction of its memory)
    reserve: float       # what it reserves from the lenders (MiB)


def choose(candidates, lendable):
    """Split ``candidates`` into ``(absorbed, refused)``.

    ``absorbed``: host -> its reservation, least loaded first (then by
    name) while the sum of reservations fits in ``lendable`` (MiB the
    lenders have in all); ``refused``: the other hosts, in the same
    order. A host that does not fit does not stop a smaller one after it.
    """
    absorbed, refused = {}, []
    left = max(0.0, float(lendable))
    for c in sorted(candidates, key=lambda c: (c.load, c.host)):
        if c.reserve <= left + 1e-9:
            absorbed[c.host] = c.reserve
            left -= c.reserve
        else:
            refused.append(c.host)
    return absorbed, refused


def least_extra(overloaded, fraction, steps=8):
    """The least extra memory, as a fraction of the host's in
    ``(0, fraction]``, at which ``overloaded(g)`` (the detector on the
    host's load over ``1 + g`` times its memory) no longer fires; it
    must not fire at ``fraction``. Bisection: ``steps`` halvings, the
    result rounded up (never below what the detector needs)."""
    low, high = 0.0, float(fraction)
    for _ in range(steps):
        mid = (low + high) / 2.0
        if overloaded(mid):
            low = mid
        else:
            high = mid
    return high


def lendable(ram, packed, reported=None):
    """MiB one lender can lend: what its agent reported
    (``reported``, MiB), else its memory not promised to its VMs."""
    if reported is not None:
        return max(0.0, float(reported))
    return max(0.0, float(ram) - float(packed))


def check_fraction(fraction):
    if not 0.0 <= fraction <= 1.0:
        raise ValueError('remote_memory_fraction must be in [0, 1], not %r'
                         % (fraction,))
