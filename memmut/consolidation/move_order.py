"""The order in which planned live migrations are handed to nova.

Nova runs one live migration per compute host at a time by default
(``max_concurrent_live_migrations``); the others queue. A round's plan
lists its moves host by host, so a move that relieves an overloaded host
can wait behind an underload evacuation that merely saves energy. The
controller's executor and the simulator's migration queue both use this
module, so what the simulator measures is what the controller does.

Orders (``[consolidation] move_order``):

``plan``
    The plan's order (and, in the simulator, rounds first come first
    served): memmut's behaviour before this option.
``priority``
    Overload moves first, the most overloaded source host's first (its
    load at detection, :attr:`memmut.consolidation.planner.Plan.load`),
    then underload evacuations; ties keep the plan's order. An underload
    move sharing a host with an overload move not finished yet waits
    for it (:func:`held_back`).
``priority_drop``
    As ``priority``, but a host's whole underload evacuation is left out
    of the round when any of its moves shares a host with a pending
    overload move (:func:`drop_conflicting`); the next round plans again.
"""

import typing

OVERLOAD = 'overload'
UNDERLOAD = 'underload'

PLAN = 'plan'
PRIORITY = 'priority'
PRIORITY_DROP = 'priority_drop'
ORDERS = (PLAN, PRIORITY, PRIORITY_DROP)


class Entry(typing.NamedTuple):
    """What ordering needs of one move: its ``kind`` (``overload`` or
    ``underload``), its ``source`` and ``destination`` hosts and the
    ``load`` of its source at detection (overload moves; any number)."""
    kind: str
    source: typing.Hashable
    destination: typing.Hashable
    load: float = 0.0


def check(order):
    if order not in ORDERS:
        raise ValueError('move order must be one of %s, not %r'
                         % (', '.join(ORDERS), order))
    return order


def key(entry, seq=0):
    """Sort key: overload before underload, the higher source load
    first among overload moves, then ``seq`` (the planned order)."""
    if entry.kind == OVERLOAD:
        return (0, -float(entry.load or 0.0), seq)
    return (1, 0.0, seq)


def order(entries, how=PRIORITY):
    """Indices of ``entries`` in the order to submit them."""
    check(how)
    idx = range(len(entries))
    if how == PLAN:
        return list(idx)
    return sorted(idx, key=lambda i: key(entries[i], i))


def overload_hosts(entries):
    """Hosts taking part in an overload move of ``entries`` (source or
    destination)."""
    out = set()
    for e in entries:
        if e.kind == OVERLOAD:
            out.add(e.source)
            out.add(e.destination)
    return out


def held_back(entry, busy):
    """Whether ``entry`` must wait: an underload move touching a host in
    ``busy`` (:func:`overload_hosts` of the overload moves not finished).
    Its copy would take that host's migration slot (and CPU) from the
    relief of an overload."""
    return (entry.kind != OVERLOAD and
            (entry.source in busy or entry.destination in busy))


def drop_conflicting(entries, pending=()):
    """``(kept indices, dropped indices)`` for ``priority_drop``: every
    underload move whose source host's evacuation has any move held back
    by the overload moves of ``entries`` and of ``pending`` (earlier
    overload moves not finished) is dropped, so no host is half
    evacuated."""
    busy = overload_hosts(list(entries) + list(pending))
    drop_sources = {e.source for e in entries if held_back(e, busy)}
    kept, dropped = [], []
    for i, e in enumerate(entries):
        if e.kind != OVERLOAD and e.source in drop_sources:
            dropped.append(i)
        else:
            kept.append(i)
    return kept, dropped
