import numpy as np
import pytest

from memmut.consolidation import wss


def test_slice_samples():
    assert wss.slice_samples(3600, 300) == 12
    assert wss.slice_samples(3600, 7000) == 1
    with pytest.raises(ValueError):
        wss.slice_samples(0, 300)


def test_moving_average_shorter_at_the_start():
    assert wss.moving_average([2, 4, 6, 8], 2).tolist() == [2, 3, 5, 7]
    assert wss.moving_average([[3, 3, 9]], 3).tolist() == [[3, 3, 5]]


def test_sliding_max():
    x = [1, 5, 2, 2, 2, 0, 7]
    assert wss.sliding_max(x, 3).tolist() == [1, 5, 5, 5, 2, 2, 7]
    # any window length, checked against the obvious definition
    rng = np.random.default_rng(3)
    y = rng.random(50)
    for w in (1, 2, 5, 7, 13, 60):
        expect = [y[max(0, i - w + 1):i + 1].max() for i in range(50)]
        assert wss.sliding_max(y, w) == pytest.approx(expect)


def test_max_avg_series_hand_worked():
    # n = 2: averages 1, 2, 4, 5, 3, 1; window 3: max over the last 3.
    x = [1, 3, 5, 5, 1, 1]
    assert wss.max_avg_series(x, 2, 3).tolist() == [1, 2, 4, 5, 5, 5]
    # one more sample: averages ..., 3, 1, 1 -> 3; two more: 1, 1, 1 -> 1
    assert wss.max_avg([1, 3, 5, 5, 1, 1, 1], 2, 3) == 3.0
    assert wss.max_avg([1, 3, 5, 5, 1, 1, 1, 1], 2, 3) == 1.0
    assert wss.max_avg([], 2, 3) == 0.0


def test_max_avg_series_ignores_missing_samples():
    x = np.array([[0, 0, 4, 6, 0]], dtype=float)
    valid = np.array([[False, False, True, True, False]])
    out = wss.max_avg_series(x, 2, 2, valid=valid)
    # averages over valid samples: -, -, 4, 5, 6 (only 6 in reach)
    assert out.tolist() == [[0, 0, 4, 5, 6]]
