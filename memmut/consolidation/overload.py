"""Overload detection (Neat's ``neat.locals.overload``; Beloglazov & Buyya,
"Optimal online deterministic algorithms and adaptive heuristics for
energy and performance efficient dynamic consolidation of virtual machines
in cloud data centers", CCPE 2012; and the OTF paper, TPDS 2013).

Factories ``f(time_step, migration_time, params)`` return
``decide(utilization, state=None) -> (bool, state)``; ``utilization`` is
the host's history of a resource's utilization (fractions of capacity,
newest last). ``migration_time`` is in seconds; the algorithms that use it
normalize it to time steps (``migration_time / time_step``).

Neat's code is the reference (its unit tests' values are ours too); where
it differs from the published math we say which we follow:

* IQR quartiles use Neat's indices ``round(0.25 (n+1)) - 1`` and
  ``round(0.75 (n+1)) - 1`` of the sorted data, rounding halves up
  (Neat ran on Python 2, whose ``round`` does).
* Local regression (LR) fits ``y = a + b x`` over ``x = 1..n`` with
  Neat's weighting: its ``leastsq`` scales each residual by the tricube
  weight, so the fit minimizes ``sum (w_i r_i)^2``; we solve that weighted
  least-squares problem in closed form (no scipy, same estimates). Tricube
  weights put the latest point at distance 0, the oldest at 1; as in Neat
  the two oldest points take the third's weight (the oldest would
  otherwise weigh 0).
* The robust variant (LRR) refits once with the residuals' bisquare
  weights ``(1 - (r / 6 MAD_0)^2)^2`` times the tricube weights, where
  ``MAD_0`` is the median absolute residual. Beloglazov & Buyya define
  the bisquare weight as 0 beyond ``6 MAD_0``; Neat's code lets it grow
  again there. We follow the paper (an outlier must not pull the fit), and
  keep the plain tricube weights when all residuals are 0 (Neat divides by
  zero).
* LR/LRR: overloaded when ``param * prediction >= threshold``, the
  prediction being the fitted line at ``length + migration_time /
  time_step`` (Neat's ``loess_abstract``).
* OTF is Neat's stateful version: the counts live in the decision's state
  (see :func:`otf`).
"""

import math

import numpy as np

from memmut.consolidation import algorithm
from memmut.consolidation.underload import positive
from memmut.consolidation.underload import stateless


# ---------------------------------------------------------------------------
# Statistics


def mad(data):
    """Median absolute deviation from the median."""
    x = np.asarray(data, dtype=float)
    return float(np.median(np.abs(x - np.median(x))))


def _round_half_up(x):
    return int(math.floor(x + 0.5))


def iqr(data):
    """Interquartile range with Neat's quartile indices (see module doc)."""
    s = sorted(float(v) for v in data)
    n = len(s) + 1
    q1 = _round_half_up(0.25 * n) - 1
    q3 = _round_half_up(0.75 * n) - 1
    return s[q3] - s[q1]


def tricube_weights(n):
    """Tricube weights of ``n >= 3`` points, oldest first (Neat's form)."""
    if n < 3:
        raise ValueError('tricube weights need at least 3 points')
    spread = float(n - 1)
    i = np.arange(2, n, dtype=float)
    w = (1.0 - ((spread - i) / spread) ** 3) ** 3
    return np.concatenate([[w[0], w[0]], w])


def tricube_bisquare_weights(residuals):
    """Tricube weights times the residuals' bisquare weights."""
    r = np.asarray(residuals, dtype=float)
    n = len(r)
    s6 = 6.0 * float(np.median(np.abs(r)))
    tri = tricube_weights(n)
    if s6 == 0.0:
        return tri
    u = r[2:] / s6
    bis = np.where(np.abs(u) < 1.0, (1.0 - u ** 2) ** 2, 0.0)
    w = tri[2:] * bis
    return np.concatenate([[w[0], w[0]], w])


def weighted_linear_fit(y, weights):
    """(a, b) minimizing ``sum (w_i (y_i - a - b x_i))^2``, x = 1..n."""
    y = np.asarray(y, dtype=float)
    x = np.arange(1, len(y) + 1, dtype=float)
    w2 = np.asarray(weights, dtype=float) ** 2
    sw = w2.sum()
    if sw <= 0:
        raise ValueError('all weights are zero')
    mx = (w2 * x).sum() / sw
    my = (w2 * y).sum() / sw
    sxx = (w2 * (x - mx) ** 2).sum()
    if sxx <= 0:
        return my, 0.0
    b = (w2 * (x - mx) * (y - my)).sum() / sxx
    return my - b * mx, b


def loess_parameter_estimates(data):
    """LR estimates (a, b) of a utilization history."""
    return weighted_linear_fit(data, tricube_weights(len(data)))


def loess_robust_parameter_estimates(data):
    """LRR estimates: refit with tricube-bisquare weights of the residuals
    of the first fit."""
    y = np.asarray(data, dtype=float)
    a, b = loess_parameter_estimates(y)
    residuals = y - (a + b * np.arange(1, len(y) + 1))
    w2 = tricube_bisquare_weights(residuals)
    if w2.sum() <= 0:
        return a, b
    return weighted_linear_fit(y, w2)


# ---------------------------------------------------------------------------
# Decisions (pure functions of the history)


def threshold(threshold, utilization):
    """Static threshold: the last value is above ``threshold``."""
    if len(utilization):
        return bool(utilization[-1] > threshold)
    return False


def last_n_average_threshold(threshold, n, utilization):
    """The mean of the last ``n`` values is above ``threshold``."""
    if len(utilization):
        tail = utilization[-n:]
        return bool(sum(tail) / float(len(tail)) > threshold)
    return False


def utilization_threshold_abstract(f, limit, utilization):
    """Overloaded when the last value reaches the adaptive threshold
    ``f(history)``; never with fewer than ``limit`` values."""
    if len(utilization) < max(1, limit):
        return False
    return bool(f(utilization) <= utilization[-1])


def mad_threshold(param, limit, utilization):
    """Adaptive threshold ``1 - param * MAD``."""
    return utilization_threshold_abstract(lambda x: 1 - param * mad(x),
                                          limit, utilization)


def iqr_threshold(param, limit, utilization):
    """Adaptive threshold ``1 - param * IQR``."""
    return utilization_threshold_abstract(lambda x: 1 - param * iqr(x),
                                          limit, utilization)


def loess_abstract(estimator, threshold, param, length, migration_time,
                   utilization):
    """Neat's LR test: fit the last ``length`` values, predict the value
    ``migration_time`` steps after the last one; overloaded when ``param``
    times the prediction reaches ``threshold``. Never with fewer than
    ``length`` values (nor fewer than 3: the fit needs them)."""
    length = max(3, int(length))
    if len(utilization) < length:
        return False
    a, b = estimator(np.asarray(utilization[-length:], dtype=float))
    prediction = a + b * (length + migration_time)
    return bool(param * prediction >= threshold)


def loess(threshold, param, length, migration_time, utilization):
    """Local regression (LR)."""
    return loess_abstract(loess_parameter_estimates, threshold, param,
                          length, migration_time, utilization)


def loess_robust(threshold, param, length, migration_time, utilization):
    """Robust local regression (LRR)."""
    return loess_abstract(loess_robust_parameter_estimates, threshold,
                          param, length, migration_time, utilization)


def forecast_threshold(threshold, n, length, horizon, migration_time,
                       utilization):
    """Overloaded now or soon: the mean of the last ``n`` values is above
    ``threshold``, or (``horizon`` > 0) Neat's local regression over the
    last ``length`` values (:func:`loess_parameter_estimates`) predicts
    a value above it ``horizon`` steps after the migration would end.
    Used on the memory side it sees a working set that grows before it
    fills the host; on the CPU side it is Neat's LR with a horizon."""
    if not len(utilization):
        return False
    if last_n_average_threshold(threshold, n, utilization):
        return True
    length = max(3, int(length))
    if horizon <= 0 or len(utilization) < length:
        return False
    a, b = loess_parameter_estimates(
        np.asarray(utilization[-length:], dtype=float))
    return bool(a + b * (length + migration_time + horizon) > threshold)


def seasonal_peak(threshold, period, lead, utilization):
    """Overloaded soon by a recurring peak: within the ``lead`` samples
    that followed the same time one ``period`` ago (samples ``period -
    1`` down to ``period - lead`` before the newest), the history was
    above ``threshold``.

    A host's history is the sum of its present VMs' histories, so this
    asks whether these VMs together went above the threshold at this
    time of day yesterday (``period`` 288 of 300 s samples): a daily
    batch job or backup that a group of VMs runs at a fixed time, or a
    shared afternoon peak. The VMs are moved before it comes back
    instead of after it has filled the host. The part of the window
    older than the history is not known and not counted; ``period`` 0
    turns it off.
    """
    if period <= 0 or lead <= 0:
        return False
    start = len(utilization) - period
    stop = start + lead
    if stop <= 0:
        return False
    window = utilization[max(0, start):stop]
    return bool(len(window) and np.max(window) > threshold)


def seasonal_rise(threshold, period, lead, utilization):
    """Overloaded soon by a recurring rise: the newest value plus how far
    the history rose, one ``period`` ago, within the ``lead`` samples
    after the same time (the window of :func:`seasonal_peak`, measured
    from its first sample) is above ``threshold``.

    Unlike :func:`seasonal_peak` it asks for yesterday's *rise*, not
    yesterday's level: a host packed on today's working sets is not
    declared overloaded because its VMs were larger yesterday, only when
    they grew together at this hour (a batch job, a backup, a shared
    afternoon). Needs the whole window in the history.
    """
    if period <= 0 or lead <= 0 or len(utilization) < period:
        return False
    rise = float(np.max(seasonal_rises(utilization, period, lead)))
    return bool(rise > 0 and float(utilization[-1]) + rise > threshold)


def seasonal_rises(series, period, lead):
    """How far ``series`` rose above its value one ``period`` ago over
    the ``lead`` samples that followed it (``lead`` values, the first 0):
    the rise of :func:`seasonal_rise` as a path, which is additive over
    VMs (a host's path is the sum of its VMs'). Zeros when the series is
    shorter than ``period``: a VM with less history than that has shown
    no rise to repeat."""
    s = np.asarray(series, dtype=float)
    if period <= 0 or lead <= 0 or len(s) < period:
        return np.zeros(max(0, lead))
    w = s[len(s) - period:len(s) - period + lead]
    return w - w[0]


def otf(otf, threshold, limit, migration_time, utilization, state):
    """Neat's OTF (Overload Time Fraction) decision.

    ``state`` counts the rounds seen (``total``) and those in which the
    last utilization value was at or above ``threshold`` (``overload``)
    since the host was switched on. The host is declared overloaded when
    it is overloaded now, the history holds at least ``limit`` values and
    ``(migration_time + overload) / (migration_time + total) >= otf``:
    the migration time (in steps) counts as overloaded time because the
    host stays overloaded until the migration ends. Returns ``(decision,
    new state)``; ``state`` itself is not modified, so the planner can
    re-ask the question after removing VMs without counting the round
    twice.
    """
    state = {'overload': int((state or {}).get('overload', 0)),
             'total': int((state or {}).get('total', 0))}
    if not len(utilization):
        return False, state
    state['total'] += 1
    overloaded = bool(utilization[-1] >= threshold)
    if overloaded:
        state['overload'] += 1
    if not overloaded or len(utilization) < limit:
        return False, state
    ratio = ((migration_time + state['overload'])
             / float(migration_time + state['total']))
    return bool(ratio >= otf), state


# ---------------------------------------------------------------------------
# Factories


def _steps(time_step, migration_time):
    return float(migration_time) / time_step if time_step else 0.0


@algorithm.parameters()
def no_migrations_factory(time_step, migration_time, params):
    def decide(utilization, state=None):
        return False, state
    return decide


@algorithm.parameters(threshold=0.9)
def threshold_factory(time_step, migration_time, params):
    return stateless(threshold, float(params['threshold']))


@algorithm.parameters(threshold=0.95, n=2)
def last_n_average_threshold_factory(time_step, migration_time, params):
    return stateless(last_n_average_threshold, float(params['threshold']),
                     positive(params, 'n'))


@algorithm.parameters(threshold=2.5, limit=10)
def mad_threshold_factory(time_step, migration_time, params):
    return stateless(mad_threshold, float(params['threshold']),
                     int(params['limit']))


@algorithm.parameters(threshold=1.5, limit=10)
def iqr_threshold_factory(time_step, migration_time, params):
    return stateless(iqr_threshold, float(params['threshold']),
                     int(params['limit']))


@algorithm.parameters(threshold=1.0, param=1.2, length=10)
def loess_factory(time_step, migration_time, params):
    return stateless(loess, float(params['threshold']),
                     float(params['param']), int(params['length']),
                     _steps(time_step, migration_time))


@algorithm.parameters(threshold=1.0, param=1.2, length=10)
def loess_robust_factory(time_step, migration_time, params):
    return stateless(loess_robust, float(params['threshold']),
                     float(params['param']), int(params['length']),
                     _steps(time_step, migration_time))


@algorithm.parameters(otf=0.1, threshold=1.0, limit=10)
def otf_factory(time_step, migration_time, params):
    o, t = float(params['otf']), float(params['threshold'])
    limit = int(params['limit'])
    mt = _steps(time_step, migration_time)

    def decide(utilization, state=None):
        return otf(o, t, limit, mt, utilization, state)
    return decide


# The seasonal parts of forecast_threshold (parameter ``seasonal``).
SEASONAL = {'peak': seasonal_peak, 'rise': seasonal_rise}


# period 0: no seasonal part (see seasonal_peak); lead an hour: time to
# move a host's VMs before a recurring peak. n, length, period and lead
# are samples or durations (algorithm.samples).
# seasonal_threshold None: the seasonal part compares with ``threshold``.
@algorithm.parameters(threshold=0.9, n=1, length=12, horizon=0, period=0,
                      lead='1h', seasonal='rise', seasonal_threshold=None)
def forecast_threshold_factory(time_step, migration_time, params):
    threshold = float(params['threshold'])
    ahead = params['seasonal_threshold']
    if ahead is None:
        ahead = threshold
    elif isinstance(ahead, bool) or not isinstance(ahead, (int, float)) \
            or ahead <= 0:
        raise ValueError('seasonal_threshold must be a positive number '
                         '(a fraction of the host) or null, not %r'
                         % (ahead,))
    ahead = float(ahead)
    recent = stateless(forecast_threshold, threshold,
                       algorithm.samples(params, 'n', time_step, 1),
                       algorithm.samples(params, 'length', time_step),
                       float(params['horizon']),
                       _steps(time_step, migration_time))
    period = algorithm.samples(params, 'period', time_step)
    lead = algorithm.samples(params, 'lead', time_step)
    seasonal = SEASONAL.get(params['seasonal'])
    if seasonal is None:
        raise ValueError('seasonal must be one of %s'
                         % ', '.join(sorted(SEASONAL)))
    if period and lead > period:
        raise ValueError('lead must not exceed period')
    if not period:
        return recent

    def decide(utilization, state=None):
        over, state = recent(utilization, state)
        return (over or seasonal(ahead, period, lead,
                                 utilization)), state
    return decide


# Defaults: Neat's where it has them (neat.conf, its tests); the safety
# parameters of MAD (2.5), IQR (1.5), LR and LRR (1.2) and the 10-value
# regression window are Beloglazov & Buyya's (CCPE 2012); OTF's 10 % is
# the TPDS 2013 paper's and MHOD's default.
