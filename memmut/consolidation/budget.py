"""A migration budget for underload evacuations (issue 19).

Emptying an underloaded host costs one live migration per VM on it, and
on a trace like Bitbrains' a host the planner empties may carry 50-140
small VMs: a few evacuations in a quiet night spend a week's worth of
migrations, and the next busy morning fills the hosts again. The budget
bounds what underload evacuations may spend: over a sliding window
(``window`` seconds, a day by default), all the migrations planned
(overload moves included, since they are paid for too) may reach
``per_vm_day`` per VM and day of the window, plus ``burst`` migrations
(as in a token bucket: a small cloud, whose allowance per VM is less
than one host's VMs, may still empty a host now and then); an
underloaded host is emptied only if its VMs fit in what is left.
Overload moves are never held back by the budget (they protect the VMs'
performance), but they use it up, so a busy day leaves nothing for
evacuations.

The budget keeps no state of its own: the caller counts the migrations
planned in the window before the round (the controller from its
database, the simulator from its rounds), so a controller restart loses
nothing.
"""

import collections

DAY = 86400.0


def allowance(per_vm_day, window, n_vms, burst=0.0):
    """Migrations the window may hold for ``n_vms`` VMs."""
    if per_vm_day < 0 or window <= 0 or burst < 0:
        raise ValueError('need per_vm_day >= 0, window > 0, burst >= 0')
    return per_vm_day * n_vms * window / DAY + burst


def left(per_vm_day, window, n_vms, spent, burst=0.0):
    """What is left of the window's allowance after ``spent``
    migrations (may be negative after a busy spell of overloads)."""
    return allowance(per_vm_day, window, n_vms, burst) - spent


class Ledger:
    """Migrations planned per round, for callers that keep no database
    (the simulator): :meth:`record` each round's count at its time,
    :meth:`spent` sums those within the window before a time."""

    def __init__(self, window):
        if window <= 0:
            raise ValueError('the window must be positive')
        self.window = float(window)
        self._rounds = collections.deque()
        self._total = 0

    def record(self, t, count):
        if count:
            self._rounds.append((float(t), int(count)))
            self._total += int(count)

    def spent(self, t):
        """Migrations recorded at times in ``(t - window, t]``."""
        while self._rounds and self._rounds[0][0] <= t - self.window:
            self._total -= self._rounds.popleft()[1]
        return self._total
