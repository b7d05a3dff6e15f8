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
import math
import typing

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


# ---------------------------------------------------------------------------
# Access patterns (issue 13): how a step's pages are touched.
#
# W1-W5 sweep every page of the step in address order, every pass, from the
# first second ("seq"). Real guests load data and touch part of it, move
# their hot set, access randomly, or touch a small region often and a large
# one rarely. The guest program memwork takes the same text as
# ``memwork.pattern=`` (tests/harness/guest/memwork.c).

PATTERN_KINDS = ('seq', 'random', 'zipf', 'hotset', 'load_idle', 'scan')


# The swap-in rate a working set is defined by (Pattern.hot_of): [badis]
# swapin_bound_kb_s's default, 1024 KiB/s.
SWAPIN_BOUND_MIB_S = 1.0


@dataclasses.dataclass(frozen=True)
class Pattern:
    """How a step of ``mib`` MiB is touched.

    ``seq``: every page once per pass, in address order; ``random``: every
    page once per pass, in a new random order; ``zipf``: as many touches
    per pass as the step has pages, page of rank r drawn with probability
    proportional to 1/r^``exponent``; ``hotset``: the first pass loads the
    step, then passes sweep a window of ``hot_mib`` that moves on by its
    own size every ``move_s`` seconds; ``load_idle``: the first pass loads
    the step, then passes sweep its first ``hot_mib`` (None: a quarter of
    the step) and the rest stays cold; ``scan``: as ``load_idle`` with
    ``hot_mib``, but every ``scan_s`` seconds one pass sweeps the whole
    step in address order (a small region touched often and a large one
    rarely: a backup, a report, a full-heap collection).
    """
    kind: str = 'seq'
    exponent: typing.Optional[float] = None
    hot_mib: typing.Optional[int] = None
    move_s: typing.Optional[float] = None
    scan_s: typing.Optional[float] = None

    def __post_init__(self):
        if self.kind not in PATTERN_KINDS:
            raise ScheduleError('unknown access pattern %r (known: %s)'
                                % (self.kind, ', '.join(PATTERN_KINDS)))
        if self.kind == 'zipf' and not (self.exponent or 0) > 0:
            raise ScheduleError('zipf needs a positive exponent (zipf:S)')
        if self.kind == 'hotset' and not (
                (self.hot_mib or 0) > 0 and (self.move_s or 0) > 0):
            raise ScheduleError('hotset needs a positive size and period '
                                '(hotset:MIB:MOVE_S)')
        if self.kind == 'load_idle' and self.hot_mib is not None and (
                self.hot_mib <= 0):
            raise ScheduleError('load_idle needs a positive hot size')
        if self.kind == 'scan' and not (
                (self.hot_mib or 0) > 0 and (self.scan_s or 0) > 0):
            raise ScheduleError('scan needs a positive hot size and period '
                                '(scan:MIB:EVERY_S)')

    def encode(self):
        """The ``memwork.pattern=`` text."""
        if self.kind == 'zipf':
            return 'zipf:%g' % self.exponent
        if self.kind == 'hotset':
            return 'hotset:%d:%g' % (self.hot_mib, self.move_s)
        if self.kind == 'load_idle' and self.hot_mib is not None:
            return 'load_idle:%d' % self.hot_mib
        if self.kind == 'scan':
            return 'scan:%d:%g' % (self.hot_mib, self.scan_s)
        return self.kind

    def hot_of(self, step_mib, bound_mib_s=SWAPIN_BOUND_MIB_S):
        """The step's working set after its first (loading) pass: the
        smallest allocation (MiB) at which the guest reads back from swap
        less than ``bound_mib_s`` MiB/s.

        A moving hot set needs only its window if the window moves slower
        than that (each move brings one window back from swap); faster, it
        needs the whole step: the window cycles through the step, and a
        memory that holds fewer windows than the cycle evicts, least
        recently used first, the very window the cycle comes to next (the
        suite's hotset, 40 of 160 MiB moving every 3.75 s, lost a third of
        its throughput with the balloon at the window plus headroom).

        A scan reads back whatever the allocation does not hold of the
        step, once every ``scan_s`` seconds: it needs the hot part and as
        much of the rest as keeps that under the bound, ``step - bound x
        scan_s``. That assumes a reclaim that keeps the hot part, touched
        often, over the sweep's pages, touched once (Linux's active and
        inactive lists); one that does not (the paged guest model's LRU
        and clock) also reads the hot part back after each sweep, and
        needs more. Where the sweep is rare enough (``scan_s`` at least
        the whole step over the bound: production's 40 minutes for 320
        MiB) the hot part is the working set under either."""
        if self.kind == 'hotset':
            hot = min(step_mib, self.hot_mib)
            if hot < step_mib and hot / self.move_s > bound_mib_s:
                return step_mib
            return hot
        if self.kind == 'load_idle':
            hot = (self.hot_mib if self.hot_mib is not None
                   else step_mib // 4)
            return max(1, min(step_mib, hot)) if step_mib else 0
        if self.kind == 'scan':
            hot = min(step_mib, self.hot_mib)
            rest = int(math.ceil(step_mib - bound_mib_s * self.scan_s))
            return max(hot, min(step_mib, rest))
        return step_mib

    @property
    def well_defined(self):
        """Whether the working set has one true size: every page of it is
        touched every pass, no page outside it (not Zipf: its working set
        depends on how many swap-ins per second one accepts, see
        doc/source/badis.rst)."""
        return self.kind != 'zipf'


def parse_pattern(text):
    """Inverse of :meth:`Pattern.encode`; raises ScheduleError."""
    kind, _, rest = text.strip().partition(':')
    args = rest.split(':') if rest else []
    try:
        if kind in ('seq', 'random') and not args:
            return Pattern(kind)
        if kind == 'zipf' and len(args) == 1:
            return Pattern(kind, exponent=float(args[0]))
        if kind == 'hotset' and len(args) == 2:
            return Pattern(kind, hot_mib=int(args[0]),
                           move_s=float(args[1]))
        if kind == 'load_idle' and len(args) <= 1:
            return Pattern(kind,
                           hot_mib=int(args[0]) if args else None)
        if kind == 'scan' and len(args) == 2:
            return Pattern(kind, hot_mib=int(args[0]),
                           scan_s=float(args[1]))
    except ValueError:
        pass
    raise ScheduleError('bad access pattern %r (want seq, random, zipf:S, '
                        'hotset:MIB:MOVE_S, load_idle[:MIB] or '
                        'scan:MIB:EVERY_S)' % text)


def true_wss_mib(steps, t, pattern=None, repeat=True):
    """The working set (MiB) of ``steps`` touched with ``pattern`` at
    ``t`` seconds from the start: the hot part once a step has loaded
    (hotset, load_idle; the load itself is not counted), the whole step
    otherwise, None for Zipf (no single true size)."""
    pattern = pattern or Pattern()
    if not pattern.well_defined:
        return None
    return pattern.hot_of(wss_at(steps, t, repeat))


def size_error(booked_mib, data_mib):
    """Why a guest of ``booked_mib`` cannot run the suite over
    ``data_mib`` of data (None: it can): the data must leave room for the
    guest's base (about 80 MiB) and headroom."""
    if data_mib < 8 or booked_mib < data_mib + 96:
        return ('--data-mib must be at least 8 and --booked-mib at least '
                '--data-mib + 96 (the guest\'s base and headroom)')
    return None


# The evaluation suite of issue 13, scaled by ``peak_mib`` (the data the
# guest holds) and ``seconds`` (each run's length): name -> (pattern,
# steps). One step, the whole data, unless the pattern is about phases.
def pattern_suite(peak_mib, seconds):
    third = max(1.0, seconds / 3.0)
    hot = max(1, peak_mib // 4)
    return {
        'seq': (Pattern('seq'), [Step(peak_mib, seconds)]),
        'random': (Pattern('random'), [Step(peak_mib, seconds)]),
        'zipf0.8': (Pattern('zipf', exponent=0.8),
                    [Step(peak_mib, seconds)]),
        'zipf1.2': (Pattern('zipf', exponent=1.2),
                    [Step(peak_mib, seconds)]),
        'hotset': (Pattern('hotset', hot_mib=hot,
                           move_s=max(1.0, seconds / 8.0)),
                   [Step(peak_mib, seconds)]),
        'load_idle': (Pattern('load_idle', hot_mib=hot),
                      [Step(peak_mib, seconds)]),
        # phase changes: random over half the data, all of it, a quarter
        'phases': (Pattern('random'),
                   [Step(max(1, peak_mib // 2), third),
                    Step(peak_mib, third), Step(hot, third)]),
    }


def held_out_suite(peak_mib, seconds):
    """Patterns with parameters Badis was never tuned on (issue 13): the
    suite's kinds at other exponents, hot-set sizes and speeds, cold
    shares and phase orders, scaled like :func:`pattern_suite`. A
    check that the defaults generalise, never a set to tune on."""
    third = max(1.0, seconds / 3.0)
    half = max(1, peak_mib // 2)
    quarter = max(1, peak_mib // 4)
    eighth = max(1, peak_mib // 8)
    whole = [Step(peak_mib, seconds)]
    return {
        'zipf0.6': (Pattern('zipf', exponent=0.6), whole),
        'zipf1.0': (Pattern('zipf', exponent=1.0), whole),
        'zipf1.5': (Pattern('zipf', exponent=1.5), whole),
        # a quarter of the data moving every 2/5 of the run: at 160 MiB
        # over 120 s slower than the swap-in bound (0.83 MiB/s), so its
        # working set is the window
        'hotset_slow': (Pattern('hotset', hot_mib=quarter,
                                move_s=max(1.0, seconds / 2.5)), whole),
        # an eighth moving every twelfth of the run: faster than the
        # bound (2 MiB/s at 160 MiB over 120 s), its working set is the
        # whole data
        'hotset_small': (Pattern('hotset', hot_mib=eighth,
                                 move_s=max(1.0, seconds / 12.0)), whole),
        'load_idle_small': (Pattern('load_idle', hot_mib=eighth), whole),
        'load_idle_half': (Pattern('load_idle', hot_mib=half), whole),
        'phases_down': (Pattern('random'), [Step(peak_mib, third),
                                            Step(half, third),
                                            Step(quarter, third)]),
        'phases_up': (Pattern('random'), [Step(quarter, third),
                                          Step(half, third),
                                          Step(peak_mib, third)]),
        # added at stop 76, after the defaults they check were set: a
        # working set that grows in eight small steps (a cache filling,
        # a slow leak), and one that rises to the whole data and falls
        # back three times (a recurring batch job: the rises come back)
        'growth': (Pattern('random'),
                   [Step(max(1, peak_mib * k // 8), seconds / 8.0)
                    for k in range(1, 9)]),
        'periodic': (Pattern('random'),
                     [Step(quarter if k % 2 == 0 else peak_mib,
                           seconds / 6.0) for k in range(6)]),
        # added at stop 84: a quarter touched often and all of the data
        # swept every third of the run (a backup or report over data
        # that is otherwise cold). On the bench's 120 s its working set is
        # most of the data (a 40 s period reads back at over the bound);
        # at production's length, 2400 s, only the quarter
        'scan': (Pattern('scan', hot_mib=quarter,
                         scan_s=max(1.0, seconds / 3.0)), whole),
    }


def named_pattern(name, peak_mib, seconds):
    """``(pattern, steps)`` of a name of :func:`pattern_suite` or
    :func:`held_out_suite`; raises ScheduleError on any other name."""
    for suite in (pattern_suite, held_out_suite):
        found = suite(peak_mib, seconds).get(name)
        if found is not None:
            return found
    raise ScheduleError('unknown pattern %r (known: %s)'
                        % (name, ', '.join(suite_names())))


def suite_names():
    """The names :func:`named_pattern` knows: the suite's, then the
    held-out ones."""
    return (tuple(pattern_suite(160, 1.0))
            + tuple(held_out_suite(160, 1.0)))
