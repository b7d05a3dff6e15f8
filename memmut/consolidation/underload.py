"""Underload detection (Neat's ``neat.locals.underload.trivial``).

Factories ``f(time_step, migration_time, params)`` return
``decide(utilization, state=None) -> (bool, state)``; ``utilization`` is
the host's history of a resource's utilization (fractions of capacity,
newest last). An underloaded host has all its VMs moved away and is
suspended.
"""

import numpy as np

from memmut.consolidation import algorithm


def threshold(threshold, utilization):
    """True if the last utilization value is at most ``threshold``."""
    if len(utilization):
        return bool(utilization[-1] <= threshold)
    return False


def last_n_average_threshold(threshold, n, utilization):
    """True if the mean of the last ``n`` values is at most ``threshold``."""
    if len(utilization):
        tail = utilization[-n:]
        return bool(sum(tail) / float(len(tail)) <= threshold)
    return False


def forecast_threshold(threshold, n, window, peak_threshold, utilization):
    """Underloaded now and over the forecast: the mean of the last ``n``
    values is at most ``threshold`` and the largest of the last
    ``window`` values at most ``peak_threshold`` (the recent peak is the
    forecast of the next hours: a host that was busy within the window
    will likely be again, and emptying it would be undone)."""
    if not len(utilization):
        return False
    if not last_n_average_threshold(threshold, n, utilization):
        return False
    return bool(np.max(utilization[-window:]) <= peak_threshold)


def stateless(check, *args):
    """``decide`` for a detector that keeps no state between rounds:
    ``check(*args, utilization) -> bool``."""
    def decide(utilization, state=None):
        return check(*args, utilization), state
    return decide


def positive(params, name):
    value = int(params[name])
    if value < 1:
        raise ValueError('%s must be at least 1' % name)
    return value


@algorithm.parameters(threshold=0.3)
def threshold_factory(time_step, migration_time, params):
    return stateless(threshold, float(params['threshold']))


@algorithm.parameters(threshold=0.5, n=2)
def last_n_average_threshold_factory(time_step, migration_time, params):
    return stateless(last_n_average_threshold, float(params['threshold']),
                     positive(params, 'n'))


# window a day (288 samples of 300 s), so a daily peak is in the
# forecast (an 8-hour window emptied hosts at night that the day refilled).
# n and window are samples or durations (algorithm.samples).
@algorithm.parameters(threshold=0.5, n=2, window='1d', peak_threshold=0.5)
def forecast_threshold_factory(time_step, migration_time, params):
    return stateless(forecast_threshold, float(params['threshold']),
                     algorithm.samples(params, 'n', time_step, 1),
                     algorithm.samples(params, 'window', time_step, 1),
                     float(params['peak_threshold']))


# Neat's defaults (neat.conf: last_n_average_threshold {threshold 0.5, n 2};
# the commented-out static threshold 0.3).
