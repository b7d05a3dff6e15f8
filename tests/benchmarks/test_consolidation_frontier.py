"""The hosts-against-CPU-overload view across sweeps (issue 19)."""

import csv

import pytest

from tests.benchmarks import consolidation_frontier as frontier

FIELDS = ('config', 'mode', 'group', 'input', 'hosts', 'cpu_overload',
          'migrations_per_vm_day')


def _rows(config, hosts, cpu, group='bitbrains', mode='wss'):
    return [{'config': config, 'mode': mode, 'group': group,
             'input': 'w%d' % i, 'hosts': h, 'cpu_overload': c,
             'migrations_per_vm_day': 0.05}
            for i, (h, c) in enumerate(zip(hosts, cpu))]


def _write(path, rows):
    with open(path, 'w', newline='') as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow(r)


def test_hosts_are_paired_with_the_defaults_on_the_same_inputs():
    a = (_rows('wss default', [10, 20, 30], [0.001] * 3)
         + _rows('wss fewer', [9, 18, 27], [0.002] * 3))
    figs = frontier.figures(frontier.collect([('a', a)], 'bitbrains'))
    r = figs['wss fewer']['hosts_vs_default']
    # every input 10 % fewer: the paired ratio is exact although the
    # inputs' hosts spread from 9 to 27
    assert r['mean'] == pytest.approx(0.9)
    assert r['high'] == pytest.approx(0.9)
    assert figs['wss fewer']['hosts']['half_width'] > 10


def test_the_front_keeps_what_no_other_beats_on_both():
    rows = (_rows('wss default', [10, 10], [0.001, 0.001])
            + _rows('wss cheaper', [9, 9], [0.002, 0.002])
            + _rows('wss worse', [9.5, 9.5], [0.003, 0.003])
            + _rows('wss best', [8, 8], [0.001, 0.001]))
    figs = frontier.figures(frontier.collect([('a', rows)], 'bitbrains'))
    assert frontier.undominated(figs) == {'wss best'}
    figs.pop('wss best')
    assert frontier.undominated(figs) == {'wss default', 'wss cheaper'}


def test_a_configuration_in_two_sweeps_must_agree():
    a = _rows('wss default', [10, 11], [0.001, 0.002])
    b = _rows('wss default', [10, 11], [0.001, 0.002])
    points = frontier.collect([('a', a), ('b', b)], 'bitbrains')
    assert points['wss default']['sweep'] == 'a'
    c = _rows('wss default', [10, 12], [0.001, 0.002])
    with pytest.raises(frontier.FrontierError, match='differs on'):
        frontier.collect([('a', a), ('c', c)], 'bitbrains')


def test_the_tool_writes_its_table_and_plot(tmp_path, capsys):
    _write(tmp_path / 's1.csv',
           _rows('wss default', [10, 12], [0.001, 0.002])
           + _rows('booked pre-19 (Neat)', [17, 18], [0.004, 0.005],
                   mode='booked'))
    _write(tmp_path / 's2.csv',
           _rows('wss default', [10, 12], [0.001, 0.002])
           + _rows('wss tighter', [9, 11], [0.004, 0.005]))
    rc = frontier.main(['--sweeps', 's1,s2', '--name', 'f'],
                       out_dir=str(tmp_path))
    assert rc == 0
    md = (tmp_path / 'f.md').read_text()
    assert '| wss tighter |' in md and 'NO' in md
    assert (tmp_path / 'f.png').stat().st_size > 0


def test_a_missing_sweep_or_group_is_a_clear_error(tmp_path, capsys):
    assert frontier.main(['--sweeps', 'nope', '--name', 'f'],
                         out_dir=str(tmp_path)) == 2
    assert "cannot read sweep 'nope'" in capsys.readouterr().err
    _write(tmp_path / 's.csv', _rows('wss default', [10], [0.001]))
    assert frontier.main(['--sweeps', 's', '--group', 'synthetic x',
                          '--name', 'f'], out_dir=str(tmp_path)) == 2
    assert "no 'wss default'" in capsys.readouterr().err
