import pytest

from memmut.consolidation import loader

CPU = {'a': [100, 300], 'b': [900, 50], 'c': [10, 500], 'd': [0, 0]}
RAM = {'a': 2048, 'b': 512, 'c': 512, 'd': 4096}


def _pick(name, cpu=CPU, ram=RAM, **params):
    alg = loader.build('vm_selection', name, 300, 0, params)
    return alg(cpu, ram)[0]


def test_minimum_utilization_uses_the_last_value():
    # last values: a 300, b 50, c 500, d 0
    assert _pick('minimum_utilization') == ['d']
    assert _pick('minimum_utilization',
                 cpu={k: v for k, v in CPU.items() if k != 'd'}) == ['b']


def test_minimum_migration_time_breaks_ties_by_id():
    assert _pick('minimum_migration_time') == ['b']      # b, c: 512


def test_minimum_migration_time_max_cpu():
    # among b and c (512 MiB): mean of last 2 is b 475, c 255 -> b
    assert _pick('minimum_migration_time_max_cpu') == ['b']
    # last 1: b 50, c 500 -> c
    assert _pick('minimum_migration_time_max_cpu', last_n=1) == ['c']


def test_minimum_migration_time_per_cpu():
    # mean of last 2 per MiB: a 200/2048 = .098, b 475/512 = .93,
    # c 255/512 = .50, d 0 -> b
    assert _pick('minimum_migration_time_per_cpu') == ['b']
    # last 1: a 300/2048 = .146, b 50/512 = .098, c 500/512 = .98 -> c
    assert _pick('minimum_migration_time_per_cpu', last_n=1) == ['c']
    # all idle: the least memory first
    idle = {'x': [0], 'y': [0]}
    assert _pick('minimum_migration_time_per_cpu', cpu=idle,
                 ram={'x': 10, 'y': 5}) == ['y']


def test_random_is_seeded_and_picks_a_candidate():
    first = [_pick('random', seed=7) for _ in range(5)]
    assert first == [_pick('random', seed=7) for _ in range(5)]
    alg = loader.build('vm_selection', 'random', 300, 0, {'seed': 1})
    seen = {alg(CPU, RAM)[0][0] for _ in range(100)}
    assert seen == set(CPU)


@pytest.mark.parametrize('name', loader.available('vm_selection'))
def test_empty_host_selects_nothing(name):
    alg = loader.build('vm_selection', name, 300, 0)
    assert alg({}, {})[0] == []


def test_bad_last_n():
    with pytest.raises(loader.AlgorithmError):
        loader.build('vm_selection', 'minimum_migration_time_max_cpu', 300,
                     0, {'last_n': 0})
