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
allowance starts at ``first_kb`` (at least the balloon controller's
smallest move: :func:`first_step`), doubles after each round in which the
balloon did shrink (``shrunk``) without swap activity, and goes back to
``first_kb`` on any swap activity (that round's own shrink is held to
it too) and whenever the demand does not fall (a new descent starts
small). Growth is never limited.

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


def first_step(first_kb, min_move_kb):
    """A descent's first step: ``first_kb``, but never less than the
    smallest move the balloon controller makes (``min_move_kb``).

    Why: the step doubles only once the balloon moved, and a controller
    that ignores changes under its ``min_change_kb`` (16 MiB on demand,
    8 MiB with local mutualization, by default) never moves it by a
    smaller step: the descent would stay at its first step, and the
    balloon where it is, for good (the simulated host of
    test_manager_estimation: a 1 GiB VM needing 800 MiB was not shrunk
    in 100 s with a 4 MiB first step)."""
    return max(first_kb, min_move_kb) if first_kb else 0


def pace(descent, *, demand_kb, hold_kb, swapping, shrunk, first_kb,
         min_move_kb=0):
    """One round: ``(demand, new_descent, event)``; ``event`` is a log
    line or None. ``shrunk``: the balloon shrank since the last round.
    ``first_kb`` 0: off (the demand unchanged); ``min_move_kb``: see
    :func:`first_step`."""
    first_kb = first_step(first_kb, min_move_kb)
    if not first_kb:
        return demand_kb, descent, None
    if demand_kb >= hold_kb:
        return demand_kb, Descent(), None
    step = max(descent.step_kb, first_kb)
    if swapping:
        # the smallest step, and the next descent starts from it (TCG,
        # stop 54: a round with 96 KiB of swap-ins, too few for the
        # guard, went unpaced from 228 to 196 MiB and the guest read 80
        # MiB back)
        step, after = first_kb, Descent()
    else:
        if shrunk and descent.step_kb:
            step *= 2            # the last step was taken and held
        after = Descent(step)
    if hold_kb - demand_kb <= step:
        return demand_kb, after, None
    paced = hold_kb - step
    return paced, after, (
        'shrink paced: demand %s instead of %s (slow start, step %s)'
        % (_mib(paced), _mib(demand_kb), _mib(step)))
