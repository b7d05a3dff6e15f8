"""memmut-sim end to end on a small synthetic trace, and its errors."""

import json

import pytest
from oslo_config import cfg

from memmut.cmd import sim
from memmut import conf as memmut_conf


def fresh_conf():
    c = cfg.ConfigOpts()
    memmut_conf.register_opts(c)
    return c


def run(tmp_path, *args, extra=''):
    """memmut-sim on 30 synthetic VMs for half a day; ``extra``: more
    configuration lines after ``[simulator]``'s."""
    conf_file = tmp_path / 'sim.conf'
    conf_file.write_text('[simulator]\nsynthetic_vms = 30\n'
                         'synthetic_days = 0.5\n' + extra)
    argv = ['--config-file', str(conf_file), '--noprogress',
            '--output-dir', str(tmp_path / 'out')] + list(args)
    return sim.main(argv, conf=fresh_conf())


def test_default_run_writes_results_and_plots(tmp_path, capsys):
    assert run(tmp_path) == 0
    out = tmp_path / 'out'
    results = json.loads((out / 'results.json').read_text())
    assert set(results['modes']) == {'booked', 'wss'}
    assert results['trace']['vms'] == 30
    assert results['comparison']['active_host_ratio_booked_over_wss'] >= 1
    assert results['algorithms']['vm_selection']['name'] == \
        'longest_relief'
    for name in ('active_hosts.png', 'migrations.png', 'memory.png'):
        assert (out / name).read_bytes()[:4] == b'\x89PNG'
    header = (out / 'timeseries.csv').read_text().splitlines()[0]
    assert 'wss_active_hosts' in header and 'booked_power_w' in header
    assert 'active-host ratio booked / wss' in capsys.readouterr().out


def test_one_mode_without_plots(tmp_path):
    assert run(tmp_path, '--mode', 'wss', '--noplots',
               '--host-memory-mb', '65536') == 0
    out = tmp_path / 'out'
    results = json.loads((out / 'results.json').read_text())
    assert list(results['modes']) == ['wss']
    assert results['hosts']['memory_mb'] == 65536
    assert not list(out.glob('*.png'))


def test_interval_and_estimator_error_options(tmp_path):
    assert run(tmp_path, '--noplots', '--interval', '1800', '--wss-error',
               '0.2', '--wss-lag', '2') == 0
    results = json.loads((tmp_path / 'out' / 'results.json').read_text())
    assert results['rounds']['interval_s'] == 1800
    w = results['modes']['wss']
    assert w['rounds'] == -(-w['intervals'] // 6)
    assert w['wss_error']['lag_samples'] == 2
    assert w['wss_error']['relative_sd'] == 0.2
    for key in ('lower_bound_hosts', 'shortfall_vm_interval_fraction',
                'migrations_spilled', 'rejected_vm_count', 'readings'):
        assert key in w
    header = (tmp_path / 'out' / 'timeseries.csv').read_text().splitlines()
    assert 'wss_lower_bound' in header[0]


def test_the_controller_pacing_and_executor_limit_from_the_config(
        tmp_path):
    assert run(tmp_path, '--noplots',
               extra='round_pacing = after_execution\n'
                     'migration_parallel = 4\n') == 0
    results = json.loads((tmp_path / 'out' / 'results.json').read_text())
    assert results['rounds']['round_pacing'] == 'after_execution'
    assert results['rounds']['migration_parallel'] == 4
    w = results['modes']['wss']
    # a round per interval at most (fewer while moves run)
    assert 0 < w['rounds'] <= w['intervals']


def test_a_burn_in_is_simulated_and_not_accounted(tmp_path):
    assert run(tmp_path, '--noplots', '--burn-in', '6') == 0
    results = json.loads((tmp_path / 'out' / 'results.json').read_text())
    assert results['rounds']['burn_in_hours'] == 6
    w = results['modes']['wss']
    # 12 h of trace: 6 of them accounted (the last sample has no interval)
    assert w['intervals'] == 71
    assert w['burn_in_intervals'] == 72 - 11


def test_remote_memory_fraction_from_the_config(tmp_path, capsys):
    assert run(tmp_path, '--noplots', extra='[consolidation]\n'
               'remote_memory_fraction = 0.2\n') == 0
    results = json.loads((tmp_path / 'out' / 'results.json').read_text())
    w = results['modes']['wss']
    assert w['remote_memory_fraction'] == 0.2
    for key in ('memory_unserved_host_time_fraction',
                'remote_memory_gib_hours', 'absorbed_host_rounds'):
        assert key in w
    assert 'remote memory (up to 20 % of a host)' in capsys.readouterr().out


@pytest.mark.parametrize('args, message', [
    (['--trace', '/nonexistent.tar.gz'], 'does not exist'),
    (['--mode', 'nope'], '--mode takes booked and/or wss'),
    (['--duration', '-1'], 'duration'),
    (['--burn-in', '12'], 'leaves nothing of the 12 h trace'),
    (['--wss-error', '/nonexistent/badis.json'], 'do not exist'),
])
def test_bad_input_is_one_line_and_exit_code_2(tmp_path, capsys, args,
                                               message):
    with pytest.raises(SystemExit) as e:
        run(tmp_path, *args)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) <= 2                # argparse adds its usage line
    assert message in err[-1]
    assert 'Traceback' not in '\n'.join(err)


def test_garbled_trace(tmp_path, capsys):
    bad = tmp_path / 'x.tar.gz'
    bad.write_bytes(b'\x1f\x8b garbage')
    with pytest.raises(SystemExit) as e:
        run(tmp_path, '--trace', str(bad))
    assert e.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith(
        'memmut-sim: error: cannot read trace')


def test_bad_algorithm_in_config(tmp_path, capsys):
    conf_file = tmp_path / 'bad.conf'
    conf_file.write_text('[consolidation]\noverload_detection = nope\n')
    with pytest.raises(SystemExit) as e:
        sim.main(['--config-file', str(conf_file), '--noprogress',
                  '--output-dir', str(tmp_path)], conf=fresh_conf())
    assert e.value.code == 2
    assert "unknown overload algorithm 'nope'" in capsys.readouterr().err


def test_a_month_of_the_data_sets_zip(tmp_path, capsys):
    """The data set's rnd.zip holds three months: memmut-sim refuses to
    guess, and replays the one --trace-part names."""
    from tests.unit.simulator import test_trace as tt
    day = [tt.row(300 * i, 100.0 + i, 1048576) for i in range(289)]
    path = tmp_path / 'rnd.zip'
    tt.make_zip(path, {'rnd/2013-7': {'1.csv': tt.csv_text(day),
                                      '2.csv': tt.csv_text(day)},
                       'rnd/2013-8': tt.MONTH2})
    with pytest.raises(SystemExit) as e:
        run(tmp_path, '--trace', str(path))
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert 'rnd/2013-7, rnd/2013-8' in err and '--trace-part' in err
    assert run(tmp_path, '--trace', str(path), '--trace-part', '2013-7') == 0
    out = capsys.readouterr().out
    assert 'rnd.zip!rnd/2013-7' in out
    results = json.loads((tmp_path / 'out' / 'results.json').read_text())
    assert results['trace']['vms'] == 2


def test_a_synthetic_profile_by_name(tmp_path, capsys):
    assert run(tmp_path, '--noplots',
               extra='synthetic_profile = churn\n') == 0
    results = json.loads((tmp_path / 'out' / 'results.json').read_text())
    # churn's 30 slots take new VMs as theirs leave
    assert results['trace']['vms'] > 30
    assert 'profile=churn' in capsys.readouterr().out


def test_every_synthetic_profile_is_an_option_choice():
    from memmut.simulator import synthetic
    opt = fresh_conf()._get_opt_info('synthetic_profile',
                                     'simulator')['opt']
    assert tuple(c for c, _ in opt.type.choices.items()) == \
        synthetic.PROFILES


def test_an_unknown_synthetic_profile_is_bad_input(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        run(tmp_path, extra='synthetic_profile = weekly\n')
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert 'synthetic_profile' in err and 'Traceback' not in err
