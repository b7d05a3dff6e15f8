"""MHOD against hand-worked examples (see each test's arithmetic)."""

import numpy as np
import pytest

from memmut.consolidation import loader
from memmut.consolidation import mhod


def test_utilization_to_states():
    assert list(mhod.utilization_to_states([0.8], [0.5, 0.8, 0.9])) == \
        [0, 1, 1]
    assert list(mhod.utilization_to_states([0.5, 0.8],
                                           [0.1, 0.6, 1.2])) == [0, 1, 2]


def test_estimate_transitions_single_window():
    # States 0 0 1 1 0, the first transition from 0: the states that
    # followed a 0 are [0, 0, 1], those that followed a 1 are [1, 0].
    # Window 2, row 0, j = 0: estimates 1/2, 2/2, 1/2; the last two
    # (1, .5) have variance 0.125, not above .5 * .5 / 2 = 0.125 -> p00 =
    # .5; likewise p01 = .5 (estimates 0, 0, .5). Row 1: p10 = .5 (0, .5),
    # p11 = .5 (.5, .5).
    p, sel = mhod.estimate_transitions([0, 0, 1, 1, 0], 2, [2])
    assert p == pytest.approx(np.array([[0.5, 0.5], [0.5, 0.5]]))
    assert (sel == 2).all()


def test_estimate_transitions_selects_the_larger_window():
    # Window 3, row 0, j = 0: estimates 1/3, 2/3, 2/3, variance 3/81 <=
    # (2/3)(1/3)/3 = 2/27: window 3 is kept, p00 = 2/3; j = 1: estimates
    # 0, 0, 1/3, variance 3/81 <= 2/27, p01 = 1/3. Row 1 has only two
    # entries: window 3's variance is 1.0 (too few estimates), so window 2
    # stays: p10 = p11 = .5.
    p, sel = mhod.estimate_transitions([0, 0, 1, 1, 0], 2, [2, 3])
    assert p == pytest.approx(np.array([[2 / 3., 1 / 3.], [0.5, 0.5]]))
    assert sel.tolist() == [[3, 3], [2, 2]]


def test_expected_times():
    # P = [[.9, .1], [.5, .5]], m = [0, .5], from state 1:
    # I - diag(1 - m) P = [[.1, -.1], [-.25, .75]], det .05, inverse
    # [[15, 2], [5, 2]]; row 1 -> L = (5, 2).
    lv = mhod.expected_times([0, 1], [[0.9, 0.1], [0.5, 0.5]], [0, 0.5])
    assert lv == pytest.approx([5.0, 2.0])
    # No migration ever and a stochastic P: infinite time, None.
    assert mhod.expected_times([0, 1], [[0.9, 0.1], [0.5, 0.5]],
                               [0, 0]) is None


P_BACK = [[1.0, 0.0], [1.0, 0.0]]   # from either state, back to state 0


def test_optimize_picks_the_longest_feasible_policy():
    # With P_BACK and state 1 now, L = ((1 - m1) / m0, 1) (m0 = 0 is
    # singular). On the 0.5 grid the sums are: (.5, 0) 3, (.5, .5) 2,
    # (.5, 1) 1, (1, 0) 2, (1, .5) 1.5, (1, 1) 1. Never overloaded so far
    # (t = 10, t_N = 0): 1 / (10 + sum) <= 0.1 for all, the best is
    # (0.5, 0).
    assert mhod.optimize(0.5, 0.1, 0.0, P_BACK, [0, 1], 10, 0) == [0.5, 0.0]


def test_optimize_returns_nothing_when_the_otf_bound_cannot_hold():
    # One overloaded step already: (1 + 1) / (10 + sum) <= 0.1 needs
    # sum >= 10, and the largest is 3.
    assert mhod.optimize(0.5, 0.1, 0.0, P_BACK, [0, 1], 10, 1) == []


def _alg(**over):
    params = dict(mhod.mhod_factory.defaults, window_sizes=[2, 3], **over)
    return mhod.mhod_factory(300, 0.0, params)


def test_mhod_waits_for_the_learning_steps():
    alg = _alg(learning_steps=30)
    decision, state = alg([0.9] * 10)
    assert decision is False
    assert state == {'time_in_states': 1, 'time_in_state_n': 1}


def test_mhod_decides_only_in_the_overloaded_state():
    decision, state = _alg()([0.9, 0.9] * 10 + [0.5])
    assert decision is False
    assert state['time_in_state_n'] == 0


def test_mhod_migrates_a_persistently_overloaded_host():
    # Always overloaded: p11 = 1, and the host spent all its time in the
    # overloaded state: no policy keeps the OTF under 10 %.
    decision, state = _alg()([0.95] * 12,
                             {'time_in_states': 5, 'time_in_state_n': 5})
    assert decision is True
    assert state == {'time_in_states': 6, 'time_in_state_n': 6}


def test_mhod_tolerates_a_rare_overload():
    # Mostly at 0.5, one overload now after 200 quiet steps: the OTF bound
    # can still be met, so no migration.
    hist = [0.5, 0.5, 0.5, 0.9, 0.5] * 4 + [0.9]
    decision, _ = _alg()(hist, {'time_in_states': 200,
                                'time_in_state_n': 0})
    assert decision is False


def test_mhod_parameters_are_checked():
    with pytest.raises(loader.AlgorithmError):
        loader.build('overload', 'mhod', 300, 0,
                     {'state_config': [0.9, 0.5]})
    with pytest.raises(loader.AlgorithmError):
        loader.build('overload', 'mhod', 300, 0, {'bruteforce_step': 0})
