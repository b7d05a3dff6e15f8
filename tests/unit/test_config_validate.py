"""Configuration problems are found at start, one line each."""

from oslo_config import cfg

from memmut import conf as memmut_conf
from memmut.conf import validate


def load(tmp_path, text):
    path = tmp_path / 'memmut.conf'
    path.write_text(text)
    conf = cfg.ConfigOpts()
    memmut_conf.register_opts(conf)
    conf([], project='memmut', default_config_files=[str(path)])
    return conf


def one_problem(tmp_path, text):
    (found,) = validate.problems(load(tmp_path, text))
    return found


def test_defaults_have_no_problem(tmp_path):
    assert validate.problems(load(tmp_path, '')) == []


def test_out_of_range_values_are_named_with_their_option(tmp_path):
    conf = load(tmp_path, '[agent]\npoll_interval = -5\n'
                          '[badis]\nfloor_kb = -1\n')
    found = validate.problems(conf)
    want = '[agent] poll_interval: should be greater than or equal to 0.05'
    assert any(p.startswith(want + ' (got -5) (in ') for p in found), found
    assert any(p.startswith('[badis] floor_kb:') for p in found), found


def test_garbage_and_cross_option_problems(tmp_path):
    found = validate.problems(load(tmp_path, '[agent]\npoll_interval = x\n'))
    assert found and found[0].startswith('[agent] poll_interval:')
    found = validate.problems(load(
        tmp_path, '[badis]\nheadroom_kb = 1024\nheadroom_fraction = 0\n'
                  '[mutualization]\nguaranteed_headroom_kb = 8192\n'))
    assert found == ['[mutualization] guaranteed_headroom_kb (8192) is '
                     'more than the whole headroom ([badis] headroom_kb '
                     '= 1024)']


def test_plugin_names_and_algorithm_parameters_are_checked(tmp_path):
    conf = load(tmp_path, '[mutualization]\npolicy = bogus\n'
                          '[consolidation]\noverload_detection = nope\n')
    found = validate.problems(conf)
    assert found[0].startswith("[mutualization] policy: unknown policy "
                               "'bogus' (known: equal, proportional)")
    assert "unknown overload algorithm 'nope'" in found[1]
    conf = load(tmp_path, '[consolidation]\n'
                          'overload_detection_parameters = {"bogus": 1}\n')
    assert "has no parameter 'bogus'" in validate.problems(conf)[0]


def test_seasonal_parameters_are_checked(tmp_path):
    found = one_problem(tmp_path, '[consolidation]\n'
                        'memory_overload_detection_parameters = '
                        '{"period": "1d", "seasonal_threshold": -1}\n')
    assert 'seasonal_threshold must be a positive number' in found
    found = one_problem(tmp_path, '[consolidation]\n'
                        'vm_selection_parameters = '
                        '{"period": "1h", "lead": "2h"}\n')
    assert "'longest_relief'" in found
    assert found.endswith('lead must not exceed period')
    conf = load(tmp_path, '[consolidation]\n'
                          'vm_selection_parameters = {"period": "1d"}\n')
    assert validate.problems(conf) == []


def test_young_vm_policy_parameters_are_checked(tmp_path):
    conf = load(tmp_path, '[consolidation]\nyoung_vm_policy = booked\n'
                          'young_vm_policy_parameters = {"quantile": 1}\n')
    (found,) = validate.problems(conf)
    assert found.startswith('[consolidation] young_vm_policy_parameters: '
                            "young VM policy 'booked' has no parameter "
                            "'quantile'")
    conf = load(tmp_path, '[consolidation]\nyoung_vm_policy = prior\n'
                          'young_vm_policy_parameters = {"quantile": 0.5}\n')
    assert validate.problems(conf) == []


def test_a_seasonal_forecast_longer_than_the_history_is_a_warning(tmp_path):
    assert list(validate.warnings(load(tmp_path, ''))) == []
    conf = load(tmp_path, '[consolidation]\nhistory_length = 100\n')
    assert validate.problems(conf) == []
    (found,) = validate.warnings(conf)
    assert found.startswith('[consolidation] memory_overload_detection_'
                            'parameters: period "1d" is 288 samples of '
                            '300 s, longer than history_length 100')
    assert found.endswith('(set history_length to at least 288)')
    # a day at one round a minute is 1440 samples: the default history
    # (288) is too short, a history of a day is not
    conf = load(tmp_path, '[consolidation]\ninterval = 60\n')
    (found,) = validate.warnings(conf)
    assert 'is 1440 samples of 60 s' in found
    conf = load(tmp_path, '[consolidation]\ninterval = 60\n'
                          'history_length = 1440\n')
    assert list(validate.warnings(conf)) == []
    # a period in samples stays samples
    conf = load(tmp_path, '[consolidation]\ninterval = 60\n'
                          'memory_overload_detection_parameters = '
                          '{"period": 288, "lead": 12}\n')
    assert list(validate.warnings(conf)) == []


def test_a_bad_duration_stops_the_service_at_start(tmp_path):
    found = one_problem(tmp_path, '[consolidation]\n'
                        'vm_placement_parameters = '
                        '{"memory_window": "a day"}\n')
    assert found.startswith('[consolidation] placement algorithm '
                            "'peak_best_fit_decreasing': bad parameters")
    assert "memory_window: 'a day' is not a duration" in found
    found = one_problem(tmp_path, '[consolidation]\n'
                        'underload_detection_parameters = '
                        '{"window": 0}\n')
    assert 'window must be at least 1 sample' in found


def test_a_read_over_one_round_is_refused_at_start(tmp_path):
    # (BadisParams refuses it too, but only where the agent builds its
    # estimator, with a traceback)
    found = validate.problems(load(
        tmp_path, '[badis]\ncalibration_probe_warm_rounds = 1\n'))
    assert found == ['[badis] calibration_probe_warm_rounds: 1 reads '
                     'nothing beyond one round; use 0 (off) or at least 2']
    found = validate.problems(load(
        tmp_path, '[badis]\ncalibration_probe_warm_rounds = -1\n'))
    assert found and found[0].startswith(
        '[badis] calibration_probe_warm_rounds:')
