"""Slow start for shrinks: a descent of the balloon begins with a small
step and doubles it each round it goes on without swap activity
(issue 13).

Why: an estimate that under-reads (the first samples of a Zipf tail, a
hot set between moves) takes the balloon down as far as the step limit
allows in two or three rounds, and everything evicted on the way is read
back over the next half minute (TCG, badis31: a Zipf guest taken 256 ->
192 MiB in 1.5 s read back 20-40 MiB over the next 30 s, most of its
run's swap-ins, before any shrink floor existed). Started small, a wrong
descent meets its first swap-ins a few MiB down and stops there (the
guard and the floor take over); a right one doubles its step each round
and is slower only by the rounds the doubling takes.

What it is. ``hold_kb`` is the demand that keeps the balloon where it
is (:func:`memmut.agent.wss.badis.hold_demand`). A demand below it by
more than the allowance is raised to ``hold_kb - allowance``; the
allowance starts at ``first_kb``, doubles after each round in which the
balloon did shrink (``shrunk``) without swap activity, and goes back to
``first_kb`` on any swap activity and whenever the demand does not fall
(a new descent starts small). Growth is never limited.

Doubling on the balloon's own move, not on the demand's: Badis hands
the actuator the max-average of its demands over a time slice, so a
paced demand may not move the balloon for rounds; a first version that
doubled on every paced demand reached its largest step before the
balloon moved at all (TCG, badis31 slot 3: 256 -> 192 MiB in 1.5 s
again).
"""

import dataclasses

from memmut import units

_mib = units.fmt_kb


@dataclasses.dataclass(frozen=True)
class Descent:
    """The descent of one VM's balloon between rounds."""
    step_kb: int = 0          # this round's allowance (0: first_kb)


def pace(descent, *, demand_kb, hold_kb, swapping, shrunk, first_kb):
    """One round: ``(demand, new_descent, event)``; ``event`` is a log
    line or None. ``shrunk``: the balloon shrank since the last round.
    ``first_kb`` 0: off (the demand unchanged)."""
    if not first_kb:
        return demand_kb, descent, None
    if swapping or demand_kb >= hold_kb:
        return demand_kb, Descent(), None
    step = descent.step_kb or first_kb
    if shrunk and descent.step_kb:
        step *= 2                # the last step was taken and held
    if hold_kb - demand_kb <= step:
        return demand_kb, Descent(step), None
    paced = hold_kb - step
    return paced, Descent(step), (
        'shrink paced: demand %s instead of %s (slow start, step %s)'
        % (_mib(paced), _mib(demand_kb), _mib(step)))
