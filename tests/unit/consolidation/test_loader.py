import pytest

from memmut.consolidation import loader
from memmut.consolidation import overload
from memmut.consolidation import planner
from memmut.consolidation import underload
from tests import common


def test_every_registered_algorithm_loads_and_declares_its_parameters():
    for role in loader.ROLES:
        names = loader.available(role)
        assert names, role
        for name in names:
            factory = loader.find_factory(role, name)
            assert isinstance(factory.defaults, dict), (role, name)
    assert 'mhod' in loader.available('overload')


def test_entry_points_load_memmut_factories():
    assert loader.find_factory('overload', 'otf') is overload.otf_factory
    assert loader.find_factory('underload', 'threshold') is \
        underload.threshold_factory


def test_unknown_names_and_roles():
    with pytest.raises(loader.AlgorithmError, match='choices: .*mhod'):
        loader.find_factory('overload', 'nope')
    with pytest.raises(loader.AlgorithmError, match='unknown algorithm role'):
        loader.find_factory('nope', 'threshold')


def test_parameters_merge_defaults_and_reject_unknown_keys():
    assert loader.parameters('overload', 'threshold', '{"threshold": 0.7}') \
        == {'threshold': 0.7}
    assert loader.parameters('vm_selection',
                             'minimum_migration_time_max_cpu') == \
        {'last_n': 2}
    with pytest.raises(loader.AlgorithmError, match="no parameter 'x'"):
        loader.parameters('overload', 'threshold', {'x': 1})
    with pytest.raises(loader.AlgorithmError, match='not valid JSON'):
        loader.parameters('overload', 'threshold', '{threshold: 1}')
    with pytest.raises(loader.AlgorithmError, match='JSON object'):
        loader.parameters('overload', 'threshold', '[1]')


def test_bad_parameter_values_are_reported():
    with pytest.raises(loader.AlgorithmError, match='bad parameters'):
        loader.build('underload', 'last_n_average_threshold', 300, 0,
                     {'n': 0})


def test_spec_from_conf():
    conf = common.private_conf(consolidation={
        'overload_detection': 'otf',
        'overload_detection_parameters': '{"otf": 0.2}',
        'vm_selection': 'random'})
    spec = loader.AlgorithmSpec.from_conf(conf)
    eff = spec.effective()
    assert eff['overload'] == ('otf', {'otf': 0.2, 'threshold': 1.0,
                                       'limit': 10})
    assert eff['memory_overload'] == (
        'forecast_threshold',
        {'threshold': 0.95, 'n': 1, 'length': 12, 'horizon': 0,
         'period': '1d', 'lead': '1h', 'seasonal': 'rise',
         'seasonal_threshold': 1.0})
    assert eff['placement'][1]['memory_window'] == '1d'
    algos = loader.build_all(spec, 300, 30)
    assert algos.vm_selection({'a': [1]}, {'a': 1})[0] == ['a']
    params = planner.PlanParams.from_conf(conf)
    assert params.spec == spec and params.time_step == 300.0
    conf.reset()


def test_bad_json_in_conf_is_reported():
    conf = common.private_conf(consolidation={
        'vm_placement_parameters': '{oops'})
    with pytest.raises(loader.AlgorithmError,
                       match='vm_placement_parameters'):
        loader.AlgorithmSpec.from_conf(conf)
    conf.reset()


def test_migration_time_is_mean_memory_over_bandwidth():
    assert loader.migration_time([1024, 3072], 20.0) == 102.4
    assert loader.migration_time([], 20.0) == 0.0


def test_default_selection_is_memmuts():
    assert loader.AlgorithmSpec().vm_selection in \
        loader.available('vm_selection')


def test_option_defaults_are_the_spec_defaults():
    # The simulator and the benchmarks use AlgorithmSpec(); the controller
    # reads the options: both must plan alike.
    conf = common.private_conf()
    assert loader.AlgorithmSpec.from_conf(conf) == loader.AlgorithmSpec()
    conf.reset()


def test_neat_set_keeps_the_plain_memory_threshold():
    eff = loader.AlgorithmSpec.neat().effective()
    assert eff['memory_overload'] == ('threshold', {'threshold': 0.95})
    assert eff['placement'][0] == 'best_fit_decreasing'
