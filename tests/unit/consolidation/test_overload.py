"""Overload detection against hand-worked examples and Neat's own test
values (neat/tests/locals/overload/test_statistics.py, test_otf.py)."""

import pytest

from memmut.consolidation import loader
from memmut.consolidation import overload as o

NEAT_DATA = [2., 4., 7., -20., 22., -1., 0., -1., 7., 15., 8., 4.,
             -4., 11., 11., 12., 3., 12., 18., 1.]


def test_threshold_uses_the_last_value_strictly():
    assert not o.threshold(0.9, [])
    assert not o.threshold(0.9, [1.0, 0.9])
    assert o.threshold(0.9, [0.1, 0.91])


def test_last_n_average_threshold():
    # mean(0.9, 1.0) = 0.95, not above 0.95; mean(0.92, 1.0) = 0.96 is.
    assert not o.last_n_average_threshold(0.95, 2, [0.0, 0.9, 1.0])
    assert o.last_n_average_threshold(0.95, 2, [0.0, 0.92, 1.0])
    # Fewer values than n: the mean of those there are.
    assert o.last_n_average_threshold(0.5, 5, [0.6])
    assert not o.last_n_average_threshold(0.5, 5, [])


def test_mad_and_iqr_match_neat():
    assert o.mad([1, 1, 2, 2, 4, 6, 9]) == 1.0
    assert o.iqr([105, 109, 107, 112, 102, 118, 115, 104, 110, 116,
                  108]) == 10.0
    assert o.iqr(NEAT_DATA) == 12.0


def test_iqr_rounds_halves_up_like_neat():
    # n + 1 = 10: q1 index round(2.5) - 1 = 2 (Python 3's round would give
    # 1), q3 index round(7.5) - 1 = 7: 8 - 3 = 5.
    assert o.iqr(range(1, 10)) == 5.0


def test_mad_threshold():
    # median 0.6, deviations .1 .1 0 0 .2 -> MAD 0.1; 1 - 2.5 * 0.1 = 0.75
    assert o.mad_threshold(2.5, 3, [0.5, 0.5, 0.6, 0.6, 0.8])
    # deviations .1 .1 0 0 .1 -> MAD 0.1, threshold 0.75 > 0.7
    assert not o.mad_threshold(2.5, 3, [0.5, 0.5, 0.6, 0.6, 0.7])
    # too short a history
    assert not o.mad_threshold(2.5, 6, [0.5, 0.5, 0.6, 0.6, 0.8])
    assert not o.mad_threshold(2.5, 0, [])


def test_iqr_threshold():
    data = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    # q1 = s[1] = 0.2, q3 = s[5] = 0.6, IQR 0.4
    assert o.iqr_threshold(1.5, 3, data)          # 1 - 0.6 = 0.4 <= 0.7
    assert not o.iqr_threshold(0.5, 3, data)      # 1 - 0.2 = 0.8 > 0.7
    assert not o.iqr_threshold(1.5, 8, data)


def test_tricube_weights_match_neat():
    assert o.tricube_weights(5) == pytest.approx(
        [0.669, 0.669, 0.669, 0.953, 1.0], abs=1e-3)
    assert o.tricube_weights(10) == pytest.approx(
        [0.148, 0.148, 0.148, 0.348, 0.568, 0.759, 0.892, 0.967, 0.995,
         1.0], abs=1e-3)
    with pytest.raises(ValueError):
        o.tricube_weights(2)


def test_tricube_bisquare_weights_match_neat():
    assert o.tricube_bisquare_weights([1., 1., 2., 2., 4., 6., 9.]) == \
        pytest.approx([0.329, 0.329, 0.329, 0.633, 0.705, 0.554, 0.191],
                      abs=1e-3)


def test_bisquare_gives_zero_beyond_six_mad():
    # median |r| = 0.1, 6 MAD = 0.6: the residual 5.0 weighs nothing.
    w = o.tricube_bisquare_weights([0.1, -0.1, 0.1, -0.1, 0.1, 5.0])
    assert w[-1] == 0.0
    assert all(x > 0 for x in w[:-1])


def test_loess_estimates_match_neat():
    assert o.loess_parameter_estimates(NEAT_DATA) == pytest.approx(
        (2.2639, 0.3724), abs=1e-3)
    assert o.loess_robust_parameter_estimates(NEAT_DATA) == pytest.approx(
        (2.4547, 0.3901), abs=1e-3)


def test_loess_on_a_line():
    # y = 0.1 x + 0.2 over x = 1..5 is fitted exactly whatever the weights;
    # 2 steps of migration later: 0.1 * 7 + 0.2 = 0.9; 1.2 * 0.9 >= 1.
    data = [0.3, 0.4, 0.5, 0.6, 0.7]
    assert o.loess(1.0, 1.2, 5, 2.0, data)
    assert o.loess_robust(1.0, 1.2, 5, 2.0, data)
    # y = 0.1 x: prediction 0.7, 1.2 * 0.7 = 0.84 < 1 ...
    line = [0.1, 0.2, 0.3, 0.4, 0.5]
    assert not o.loess(1.0, 1.2, 5, 2.0, line)
    # ... but >= a threshold of 0.8
    assert o.loess(0.8, 1.2, 5, 2.0, line)
    # fewer values than length: no decision
    assert not o.loess(1.0, 1.2, 6, 2.0, data)


def test_loess_factories_neat_examples():
    params = {'threshold': 1.0, 'param': 1.2, 'length': 3}
    high = [1.05, 1.09, 1.07, 1.12, 1.02, 1.18, 1.15, 1.04, 1.10, 1.16,
            1.08]
    low = [0.55, 0.60, 0.62, 0.59, 0.67, 0.73, 0.85, 0.97, 0.73, 0.68,
           0.69, 0.52, 0.51, 0.55, 0.48, 0.46, 0.52, 0.55, 0.58, 0.65,
           0.70]
    for f in (o.loess_factory, o.loess_robust_factory):
        alg = f(300, 20.0, params)
        assert alg([]) == (False, None)
        assert alg(high)[0] is True
        assert alg(low)[0] is False


def test_robust_regression_resists_an_outlier():
    # Flat at 0.5 with one spike two steps from the end. LR's line is
    # pulled up by the spike (prediction 1.25 two steps ahead); the
    # spike's first-fit residual is 1.16 times 6 MAD, so its bisquare
    # weight is 0 and LRR refits the flat line exactly. (With 10 points
    # the ratio is 0.79 and the spike keeps some weight.)
    data = [0.5] * 12 + [3.0, 0.5, 0.5]
    a, b = o.loess_parameter_estimates(data)
    ar, br = o.loess_robust_parameter_estimates(data)
    assert a + b * 17 > 1.2
    assert ar + br * 17 == pytest.approx(0.5, abs=1e-9)
    assert o.loess(1.0, 1.2, 15, 2.0, data)
    assert not o.loess_robust(1.0, 1.2, 15, 2.0, data)


def test_otf_neat_sequence():
    state = {'overload': 0, 'total': 0}
    steps = [([0.9], {'overload': 0, 'total': 1}, False),
             ([0.9, 1.3], {'overload': 1, 'total': 2}, False),   # limit 4
             ([0.9, 1.3, 1.1], {'overload': 2, 'total': 3}, False),
             # (1 + 3) / (1 + 4) = 0.8 >= 0.5
             ([0.9, 1.3, 1.1, 1.2], {'overload': 3, 'total': 4}, True)]
    for hist, expected_state, expected in steps:
        before = dict(state)
        decision, state = o.otf(0.5, 1.0, 4, 1.0, hist, state)
        assert state == expected_state
        assert decision is expected
        assert before != state          # a new dict, the old one untouched
    # not overloaded now: no decision whatever the fraction
    decision, state = o.otf(0.5, 1.0, 4, 100.0,
                            [0.9, 1.3, 1.1, 1.2, 0.3], state)
    assert (decision, state) == (False, {'overload': 3, 'total': 5})


def test_otf_fraction_below_the_bound():
    # 1 overloaded round of 10, no migration time: 0.1 < 0.2
    state = {'overload': 0, 'total': 9}
    decision, state = o.otf(0.2, 1.0, 0, 0.0, [1.0], state)
    assert decision is False and state == {'overload': 1, 'total': 10}


def test_otf_factory_normalizes_migration_time_and_keeps_state():
    # migration 300 s at 300 s steps = 1 step: (1 + 1) / (1 + 1) >= 0.5
    alg = o.otf_factory(300, 300.0, {'otf': 0.5, 'threshold': 1.0,
                                     'limit': 0})
    d, st = alg([1.2])
    assert d is True and st == {'overload': 1, 'total': 1}
    d, st = alg([1.2, 0.5], st)
    assert d is False and st == {'overload': 1, 'total': 2}


def test_no_migrations():
    alg = o.no_migrations_factory(300, 0, {})
    assert alg([5.0, 5.0]) == (False, None)


@pytest.mark.parametrize('name', [n for n in loader.available('overload')
                                  if n != 'mhod'])
def test_every_overload_algorithm_builds_with_its_defaults(name):
    decide = loader.build('overload', name, 300, 60.0)
    decision, _ = decide([0.1] * 20)
    assert decision is False            # 10 % CPU is never an overload
