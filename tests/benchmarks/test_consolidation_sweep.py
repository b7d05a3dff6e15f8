"""The sweep's paired ESV goal (issue 19, part 7) and its configurations."""

import pytest

from memmut.consolidation import loader
from tests.benchmarks import consolidation_sweep as sweep


def _rows(pairs, group='bitbrains'):
    rows = []
    for i, (w, n) in enumerate(pairs):
        rows.append({'group': group, 'input': 'w%d' % i,
                     'config': 'wss default', 'esv': w})
        rows.append({'group': group, 'input': 'w%d' % i,
                     'config': 'booked pre-19 (Neat)', 'esv': n})
    rows.append({'group': 'other', 'input': 'w0', 'config': 'wss default',
                 'esv': 1.0})
    return rows


def test_paired_esv_met_where_every_input_agrees():
    # Neat's ESV spreads over an order of magnitude, WSS's is always
    # about a tenth of it: the unpaired means' intervals would overlap
    pairs = [(1e-5, 1e-4), (2e-4, 3e-3), (5e-5, 4e-4), (1e-4, 1e-3)]
    g = sweep.esv_paired(_rows(pairs), 'bitbrains')
    assert g['met'] and g['mean_met']
    assert g['value'].endswith('(n=4)')


def test_paired_esv_not_met_when_inputs_disagree():
    pairs = [(1e-5, 1e-4), (3e-3, 2e-4), (5e-4, 4e-4)]
    g = sweep.esv_paired(_rows(pairs), 'bitbrains')
    assert not g['met']


def test_paired_esv_undefined_with_a_zero():
    g = sweep.esv_paired(_rows([(1e-5, 0.0), (1e-5, 1e-4)]), 'bitbrains')
    assert not g['met'] and not g['mean_met']
    assert 'undefined' in g['value'] and '1 of 2' in g['value']
    assert sweep.esv_paired(_rows([]), 'bitbrains')['met'] is False


def test_paired_differences_pair_each_input_with_the_default():
    rows = []
    for i, (d, x) in enumerate([(1.0, 1.5), (10.0, 10.4), (5.0, 5.6)]):
        for cname, v in (('wss default', d), ('wss x', x),
                         ('booked pre-19 (Neat)', 0.0)):
            rows.append({'group': 'g', 'input': 'i%d' % i,
                         'config': cname, 'hosts': v})
    # an input without the default is left out
    rows.append({'group': 'g', 'input': 'i9', 'config': 'wss x',
                 'hosts': 99.0})
    paired = sweep.paired_differences(rows, keys=('hosts',))
    assert list(paired) == ['wss x']
    s = paired['wss x']['g']['hosts']
    # differences 0.5, 0.4, 0.6: their interval excludes 0, while the
    # means' intervals (1..10 apart) overlap
    assert s['n'] == 3 and abs(s['mean'] - 0.5) < 1e-12
    assert s['low'] > 0
    lines = '\n'.join(sweep.paired_markdown(paired)).splitlines()
    row = [line for line in lines if line.startswith('| wss x |')]
    assert len(row) == 1
    hosts = row[0].split('|')[2].strip()
    assert hosts.startswith('+0.50 ± ') and hosts.endswith('(n=3) *')


def test_a_warm_start_runs_the_same_days_after_the_history(monkeypatch):
    monkeypatch.setattr(sweep, 'SYNTHETIC', [('memory_spikes', 20)])
    monkeypatch.setattr(sweep, 'SYNTHETIC_DAYS', 1.0)
    (cold,) = sweep.inputs(None, 6.0, 1)
    (warm,) = sweep.inputs(None, 6.0, 1, warm_days=0.5)
    assert cold[3:] == (0, 0)            # the whole trace, from its start
    assert warm[3:] == (144, 288)        # half a day of history, then a day
    assert sweep.synthetic_trace(cold[2]).n_steps == 288
    assert sweep.synthetic_trace(warm[2]).n_steps == 432
    assert 'after 0.5 warm days' in sweep.describe(warm[2])
    assert 'warm' not in sweep.describe(cold[2])


def test_every_configuration_builds_its_algorithms():
    # A name the sweep offers must be a set the planner accepts: a typo
    # in a parameter would otherwise surface only minutes into a sweep.
    for name, config in sweep.configurations().items():
        mode, spec, plan = config[:3]
        assert mode in ('booked', 'wss'), name
        assert plan.spec is spec, name
        loader.build_all(spec, 300.0, 60.0)


def test_the_combined_configurations_change_both_settings():
    configs = sweep.configurations()
    _, default, _ = configs['wss default'][:3]
    _, spec, _ = configs['wss under_window=96 cpu_threshold=0.7'][:3]
    assert spec.underload_parameters['window'] == 96
    assert spec.memory_underload_parameters['window'] == 96
    assert spec.placement_parameters['cpu_threshold'] == 0.7
    # everything else in the placement is the default's
    place = loader.parameters('placement', default.placement,
                              default.placement_parameters)
    assert (dict(spec.placement_parameters, cpu_threshold=None)
            == dict(place, cpu_threshold=None))


def test_markdown_of_a_sweep_that_was_never_run_is_a_clear_error(capsys):
    from tests.benchmarks import bench_consolidation
    rc = bench_consolidation.main(['--sweep-markdown', '--sweep-name',
                                   'no such sweep'])
    assert rc == 2
    assert "no sweep named 'no such sweep'" in capsys.readouterr().err


def test_the_sweep_profiles_are_chosen_by_name():
    assert sweep.synthetic_set() == sweep.SYNTHETIC
    assert sweep.synthetic_set('held-out') == sweep.HELD_OUT
    both = sweep.synthetic_set('tuned, held-out, churn')
    assert both == sweep.SYNTHETIC + sweep.HELD_OUT     # no repeat
    assert sweep.synthetic_set('churn,dense') == (('churn', 300),
                                                  ('dense', 1200))
    assert sweep.synthetic_set('heavy_tail:1200,heavy_tail') == (
        ('heavy_tail', 1200), ('heavy_tail', 300))
    for bad in ('heavy_tail:0', 'heavy_tail:many', 'weekly:30'):
        with pytest.raises(ValueError):
            sweep.synthetic_set(bad)
    groups = {i[0] for i in sweep.inputs(None, 6.0, 1,
                                         profiles=sweep.HELD_OUT)}
    assert groups == {'synthetic churn', 'synthetic heavy_tail',
                      'synthetic memory_growth'}
    groups = [i[0] for i in sweep.inputs(
        None, 6.0, 1, profiles=sweep.synthetic_set('heavy_tail:1200,'
                                                   'heavy_tail'))]
    assert groups == ['synthetic heavy_tail (1200 VMs)',
                      'synthetic heavy_tail']


def test_an_unknown_sweep_profile_is_a_clear_error(capsys):
    from tests.benchmarks import bench_consolidation
    rc = bench_consolidation.main(['--sweep', '--sweep-profiles',
                                   'held-out,weekly'])
    assert rc == 2
    err = capsys.readouterr().err
    assert "--sweep-profiles: unknown synthetic profile 'weekly'" in err


def test_memory_moves_per_vm_day_are_derived_from_share_and_rate(tmp_path):
    # A CSV written before the figure existed gains it on reading.
    path = tmp_path / 'old.csv'
    path.write_text('config,mode,group,input,migrations_per_vm_day,'
                    'memory_caused_share\n'
                    'wss default,wss,synthetic x,seed 0,0.02,0.5\n')
    (row,) = sweep.read_csv(str(path))
    assert row['memory_moves_per_vm_day'] == 0.01
    # what a run measured is kept
    kept = sweep.derive({'memory_moves_per_vm_day': 0.3,
                         'memory_caused_share': 1.0,
                         'migrations_per_vm_day': 1.0})
    assert kept['memory_moves_per_vm_day'] == 0.3
    assert 'memory_moves_per_vm_day' not in sweep.derive({'hosts': 3.0})
