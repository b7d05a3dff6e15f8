"""Per-host summed histories kept between consolidation rounds.

A round sums, for every host running VMs, its VMs' CPU histories and
memory-load histories (right-aligned: :func:`memmut.consolidation.planner.
_host_sums`). With a day of samples per VM that is the largest part of a
round that does not depend on what the round decides, and from one round
to the next almost nothing in it changes: the window slides by the
samples taken in between, and only hosts that gained or lost VMs have a
different set of VMs.

:class:`HistorySums` keeps each host's sums with what they were computed
from (the VMs in order, the number of each VM's newest sample, each
history's length). Next round, a host whose VMs are the same, in the
same order, and whose histories are the previous ones moved on by ``d``
samples gets ``previous[d:]`` followed by the sums of the ``d`` newest
samples; any other host is summed from scratch. Both give the same
arrays bit for bit (so the planner makes the same plans): the sums are
sequential over the VMs in list order, one independent sum per sample
position, and a position keeps the same VMs' same values when the window
moves (see :meth:`HistorySums.host_sums` for the conditions, which the
unit tests check against from-scratch sums over many random rounds).

The caller vouches that each VM's histories are windows of series that
only grow: :attr:`memmut.consolidation.planner.PlannerVM.history_end`
numbers the newest sample of both, and the sample numbered ``k`` of a VM
is the same in every round. VMs without it (``None``) are summed from
scratch every round. The simulator gives it (trace steps); the
controller does not, because it rebuilds histories from the database,
where late reports and rolled-up intervals may change past intervals.
"""

import operator

import numpy as np

_LAST = operator.itemgetter(-1)
_UUID = operator.attrgetter('uuid')
_END = operator.attrgetter('history_end')
_CPU = operator.attrgetter('cpu_history')
_MEM = operator.attrgetter('mem_history')


class _Entry:
    __slots__ = ('uuids', 'end', 'cpu_lens', 'mem_lens', 'cpu', 'mem')

    def __init__(self, uuids, end, cpu_lens, mem_lens, cpu, mem):
        self.uuids = uuids
        self.end = end
        self.cpu_lens = cpu_lens
        self.mem_lens = mem_lens
        self.cpu = cpu
        self.mem = mem


def _moved_on(old_lens, new_lens, d):
    """Whether histories of lengths ``new_lens`` are those of lengths
    ``old_lens`` moved on by ``d`` samples, as far as the sum's positions
    before the ``d`` newest go: position ``r`` counted from the newest
    (``d <= r < n``, ``n`` the longest new length) then holds the same
    VMs' values as position ``r - d`` did.

    A VM contributes to new position ``r`` when its new length exceeds
    ``r`` and contributed to old position ``r - d`` when its old length
    exceeded ``r - d``: the two agree for every such ``r`` exactly when
    ``min(new - d, n - d) == min(old, n - d)``. A new length below
    ``d + 1`` means the VM has fewer samples than were taken: not moved
    on.
    """
    n = max(new_lens)
    if n < 2:
        # A one-sample sum of many VMs is a 1-D reduction, which numpy
        # sums pairwise, not sequentially: never reuse it or build on it.
        return False
    if new_lens == old_lens and new_lens.count(n) == len(new_lens):
        return True         # full windows sliding: the common case
    m = n - d
    for old, new in zip(old_lens, new_lens):
        if new <= d or min(new - d, m) != min(old, m):
            return False
    return True


def _newest_sums(histories, d, sum_from_scratch):
    """Sum of the ``d`` newest samples of the histories (right-aligned),
    added sequentially in list order as the from-scratch sum adds them
    position by position."""
    if d == 1:
        # Python's sum adds left to right in IEEE double, as numpy's
        # sequential reduction does (0 + x is x).
        return np.array([sum(map(float, map(_LAST, histories)))])
    return sum_from_scratch([h[-d:] for h in histories])


class HistorySums:
    """The per-host sums of one planner, kept from round to round.

    Use one instance per sequence of rounds (a simulation, a
    controller's lifetime) and pass it to
    :func:`memmut.consolidation.planner.plan_round` every round.
    ``reused`` and ``computed`` count hosts served each way (for
    benchmarks and tests).
    """

    def __init__(self):
        self._hosts = {}
        self.reused = 0
        self.computed = 0

    def __len__(self):
        return len(self._hosts)

    def host_sums(self, name, vm_list, sum_host, sum_right_aligned):
        """``(CPU, memory-load)`` sums of host ``name`` running
        ``vm_list`` (in the planner's order).

        ``sum_host(vm_list)`` is the from-scratch computation and
        ``sum_right_aligned(histories)`` the one-kind sum it is made of
        (passed in by the planner so both paths share one definition).
        Reuse needs: the same VMs in the same order; one newest-sample
        number shared by all of them, ``d >= 0`` samples after the
        stored one; for each kind, lengths that :func:`_moved_on` accepts
        (or, with ``d == 0``, the same lengths: the same windows).
        """
        uuids = tuple(map(_UUID, vm_list))
        ends = set(map(_END, vm_list))
        end = ends.pop() if len(ends) == 1 else None
        cpus = list(map(_CPU, vm_list))
        mems = list(map(_MEM, vm_list))
        cpu_lens = list(map(len, cpus))
        mem_lens = list(map(len, mems))
        old = self._hosts.get(name)
        result = None
        if (end is not None and old is not None and old.end is not None
                and old.uuids == uuids and end >= old.end):
            d = end - old.end
            if d == 0:
                if cpu_lens == old.cpu_lens and mem_lens == old.mem_lens:
                    result = old.cpu, old.mem
            elif (_moved_on(old.cpu_lens, cpu_lens, d) and
                  _moved_on(old.mem_lens, mem_lens, d)):
                result = tuple(
                    np.concatenate((prev[max(0, len(prev) + d - n):],
                                    _newest_sums(hist, d,
                                                 sum_right_aligned)))
                    for prev, hist, n in (
                        (old.cpu, cpus, max(cpu_lens)),
                        (old.mem, mems, max(mem_lens))))
        if result is None:
            self.computed += 1
            result = sum_host(vm_list)
        else:
            self.reused += 1
        cpu, mem = result
        # Shared with the next round's sums: nobody may write into them.
        cpu.setflags(write=False)
        mem.setflags(write=False)
        # Entries built from one-sample sums are not built upon (see
        # _moved_on), nor are VMs without a sample number.
        self._hosts[name] = _Entry(uuids, end, cpu_lens, mem_lens, cpu,
                                   mem)
        return cpu, mem

    def retain(self, names):
        """Forget the hosts not in ``names`` (they run no VM now)."""
        for name in [n for n in self._hosts if n not in names]:
            del self._hosts[name]
