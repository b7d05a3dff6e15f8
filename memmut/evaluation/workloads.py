"""The synthetic working-set shapes W1-W5 of seed 004 (Fig. 2.3).

One definition serves the simulated hypervisor and the real test guests, so a
simulated run and a real run of "W3" ask for the same working set over time.

The seed's figure did not survive OCR; the shapes below are our reading of
"the common memory behaviours of a VM during its lifetime", documented in
doc/source/design.rst:

* W1 rises in steps from low to peak,
* W2 falls in steps from peak to low,
* W3 rises to the peak then falls back (a hill),
* W4 falls to the low then rises back (a valley),
* W5 oscillates between low and high.

Each shape is a list of fractions of the peak, one per step.  Allocation
``s`` (static) allocates the peak once and touches only the current step's
share; ``d`` (dynamic) allocates and frees memory so that the allocation
follows each step (seed 004 §2.5.1, W_i,s and W_i,d).
"""

import dataclasses

SHAPES = {
    'W1': (0.2, 0.35, 0.5, 0.65, 0.8, 1.0),
    'W2': (1.0, 0.8, 0.65, 0.5, 0.35, 0.2),
    'W3': (0.2, 0.5, 0.8, 1.0, 0.8, 0.5, 0.2),
    'W4': (1.0, 0.7, 0.4, 0.2, 0.4, 0.7, 1.0),
    'W5': (0.25, 1.0, 0.25, 1.0, 0.25, 1.0),
}
ALLOCATIONS = ('s', 'd')


@dataclasses.dataclass(frozen=True)
class Step:
    """Keep ``mib`` MiB of working set for ``seconds`` seconds."""
    mib: int
    seconds: float


class ScheduleError(ValueError):
    """A schedule or shape that cannot be used."""


def shape_schedule(shape, peak_mib, step_seconds):
    """Expand a named shape into steps of ``step_seconds`` each."""
    try:
        fractions = SHAPES[shape]
    except KeyError:
        raise ScheduleError('unknown workload shape %r (known: %s)'
                            % (shape, ', '.join(sorted(SHAPES))))
    if peak_mib <= 0 or step_seconds <= 0:
        raise ScheduleError('peak and step duration must be positive')
    return [Step(max(1, round(f * peak_mib)), float(step_seconds))
            for f in fractions]


def encode(steps):
    """Encode steps for a kernel command line: ``64x10,128x7.5``."""
    return ','.join('%dx%g' % (s.mib, s.seconds) for s in steps)


def decode(text):
    """Inverse of :func:`encode`; raises ScheduleError on bad input."""
    steps = []
    for item in text.split(','):
        mib, sep, secs = item.strip().partition('x')
        try:
            step = Step(int(mib), float(secs))
        except ValueError:
            raise ScheduleError('bad schedule step %r (want MIBxSECONDS)'
                                % item)
        if not sep or step.mib < 0 or step.seconds <= 0:
            raise ScheduleError('bad schedule step %r (want MIBxSECONDS)'
                                % item)
        steps.append(step)
    if not steps:
        raise ScheduleError('empty schedule')
    return steps


def duration(steps):
    return sum(s.seconds for s in steps)


def wss_at(steps, t, repeat=True):
    """Working set (MiB) the schedule asks for at ``t`` seconds from start.

    With ``repeat`` the schedule loops; otherwise the last step holds.
    """
    total = duration(steps)
    if repeat and total > 0:
        t = t % total
    for step in steps:
        if t < step.seconds:
            return step.mib
        t -= step.seconds
    return steps[-1].mib
