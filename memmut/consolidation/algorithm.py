"""How a consolidation algorithm declares itself.

An algorithm is a Neat factory ``f(time_step, migration_time, params)``
returning its decide function, registered in ``setup.cfg`` under
``memmut.consolidation.<role>``. It declares its parameters and their
defaults next to itself with :func:`parameters`; the loader checks the
parameters a deployment gives against them. Parameters that span a time
(windows, periods) are counted in history samples, as Neat's are, or
given as durations (:func:`samples`).
"""

import re

# How an interval's CPU samples become its one history value, read by
# the controller (memmut.globals.rounds.cpu_history) and modelled by the
# simulator (memmut.simulator.engine.at_interval): ``[consolidation]
# cpu_interval_statistic``.
CPU_MEAN = 'mean'
CPU_PEAK = 'peak'
CPU_STATISTICS = (CPU_MEAN, CPU_PEAK)


def parameters(**defaults):
    """Declare a factory's parameters and their defaults (Neat's)."""
    def declare(factory):
        factory.defaults = dict(defaults)
        return factory
    return declare


# A duration's units, in seconds ("90s", "15min", "4h", "1d", "1w",
# or spelt out: "2 hours").
_UNITS = {'s': 1, 'min': 60, 'h': 3600, 'd': 86400, 'w': 604800}
_ALIASES = {'sec': 's', 'second': 's', 'seconds': 's', 'mins': 'min',
            'minute': 'min', 'minutes': 'min', 'hour': 'h', 'hours': 'h',
            'day': 'd', 'days': 'd', 'week': 'w', 'weeks': 'w'}
_DURATION = re.compile(r'^\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]+)\s*$')


def duration_seconds(text):
    """Seconds in a duration such as ``"1d"``, ``"4h"``, ``"15min"``,
    ``"90s"`` or ``"1w"``; ValueError saying what is accepted."""
    m = _DURATION.match(str(text).lower())
    unit = m and _ALIASES.get(m.group(2), m.group(2))
    if unit not in _UNITS:
        raise ValueError('%r is not a duration (a number followed by one '
                         'of %s, e.g. "1d" or "15min")'
                         % (text, ', '.join(_UNITS)))
    return float(m.group(1)) * _UNITS[unit]


def samples(params, name, time_step, minimum=0):
    """Parameter ``name`` as a number of history samples.

    A number is a count of samples (Neat's convention: what a window
    covers then depends on the interval between samples); a duration
    string (``"1d"``, ``"1h"``: :func:`duration_seconds`) is converted
    with ``time_step`` (seconds between samples, the ``[consolidation]
    interval``), so a window of a day stays a day when an operator
    changes the interval. A positive duration is at least one sample.
    """
    value = params[name]
    if isinstance(value, bool):
        raise ValueError('%s must be a number of samples or a duration, '
                         'not %r' % (name, value))
    if isinstance(value, str):
        try:
            seconds = duration_seconds(value)
        except ValueError as e:
            raise ValueError('%s: %s' % (name, e))
        if not time_step or time_step <= 0:
            raise ValueError('%s: a duration needs a positive time step'
                             % name)
        n = int(round(seconds / float(time_step)))
        if seconds > 0:
            n = max(n, 1)
    else:
        try:
            n = int(value)
        except (TypeError, ValueError):
            raise ValueError('%s must be a number of samples or a '
                             'duration, not %r' % (name, value))
        if n != value:
            raise ValueError('%s must be a whole number of samples, not '
                             '%r' % (name, value))
    if n < minimum:
        raise ValueError('%s must be at least %d sample%s'
                         % (name, minimum, '' if minimum == 1 else 's'))
    return n
