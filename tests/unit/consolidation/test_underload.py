from memmut.consolidation import loader
from memmut.consolidation import underload as u


def test_threshold_is_inclusive_on_the_last_value():
    assert u.threshold(0.3, [0.9, 0.3])
    assert not u.threshold(0.3, [0.1, 0.31])
    assert not u.threshold(0.3, [])


def test_last_n_average_threshold():
    # mean of the last 2: (0.4 + 0.6) / 2 = 0.5 <= 0.5
    assert u.last_n_average_threshold(0.5, 2, [0.9, 0.4, 0.6])
    # (0.5 + 0.6) / 2 = 0.55 > 0.5
    assert not u.last_n_average_threshold(0.5, 2, [0.1, 0.5, 0.6])
    assert not u.last_n_average_threshold(0.5, 2, [])


def test_factories_defaults():
    alg = loader.build('underload', 'last_n_average_threshold', 300, 0)
    assert alg([0.2, 0.7]) == (True, None)      # mean 0.45 <= 0.5
    assert alg([0.4, 0.7]) == (False, None)     # mean 0.55
    alg = loader.build('underload', 'threshold', 300, 0)
    assert alg([0.3])[0] and not alg([0.31])[0]
