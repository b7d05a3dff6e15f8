"""tools/patterns_tradeoff.py: the trade-off points of a pattern-suite
comparison."""

import json

from tests import common

patterns_tradeoff = common.tool_module('patterns_tradeoff')


def _compare():
    def run(slot, pattern, start, saved, over):
        return [slot, [pattern, start], {'saved': saved, 'vm_over': over}]
    return {'runs': {
        'badis': [run(0, 'hotset', 'boot', 10.0, 1.05),
                  run(0, 'hotset', 'loaded', 20.0, 1.01),
                  run(0, 'phases', 'boot', 30.0, 1.02)],
        'oracle': [run(0, 'hotset', 'boot', 1.0, 1.0),
                   run(0, 'phases', 'boot', 27.0, 1.2)],
    }}


def test_points_are_mean_saved_and_median_vm_over():
    pts = dict(patterns_tradeoff.points(_compare()))
    b = pts['badis']
    assert (b['n'], b['saved'], b['median'], b['best'], b['worst']) == (
        3, 20.0, 1.02, 1.01, 1.05)
    assert b['per_pattern'] == {'hotset': 1.03, 'phases': 1.02}


def test_the_goals_need_the_median_and_the_worst():
    text = patterns_tradeoff.table(patterns_tradeoff.points(_compare()))
    rows = {line.split(' | ')[0].strip('| '): line
            for line in text.splitlines()[2:]}
    # badis: median 1.02, worst 1.05: both goals; oracle: worst 1.2
    assert rows['badis'].endswith('| yes |')
    assert rows['oracle'].endswith('| no |')


def test_order_and_unknown_configuration(tmp_path, capsys):
    f = tmp_path / 'c.json'
    f.write_text(json.dumps(_compare()))
    assert patterns_tradeoff.main([str(f), '--order', 'oracle,badis']) == 0
    out = capsys.readouterr().out
    assert out.index('| oracle') < out.index('| badis')
    assert patterns_tradeoff.main([str(f), '--order', 'nope']) == 2
    assert 'no configuration' in capsys.readouterr().out


def test_not_a_comparison(tmp_path, capsys):
    f = tmp_path / 'c.json'
    f.write_text('[1, 2]')
    assert patterns_tradeoff.main([str(f)]) == 2
    assert 'not a badis15_compare.py' in capsys.readouterr().out
