"""tools/swapin_cost.py: vm_over against the MiB a run swapped in."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', '..', 'tools'))
import swapin_cost  # noqa: E402


def _run(est, pattern, ops, swapped_mib=0):
    return {'pattern': pattern, 'start': 'boot', 'estimator': est,
            'ops': ops, 'rows': [{'t': 0.0, 'swap_in': 0},
                                 {'t': 120.0, 'swap_in': swapped_mib * 1024}]}


def _slot(path, runs):
    path.mkdir()
    with open(path / 'patterns.jsonl', 'w') as f:
        for r in runs:
            f.write(json.dumps(r) + '\n')
    return str(path)


def test_the_line_through_exact_points(tmp_path):
    # vm_over = 1.01 + 0.05 per 100 MiB on one pattern, flat on another
    runs = [_run('none', 'hot', 10000), _run('none', 'flat', 5000)]
    for mib in (0, 100, 200, 300):
        runs.append(_run('badis', 'hot', 10000 / (1.01 + 0.0005 * mib), mib))
    runs += [_run('badis', 'flat', 5000, 10), _run('oracle', 'flat', 5000)]
    slot = _slot(tmp_path / 's1', runs)
    result = swapin_cost.summarize([slot])
    hot = result['patterns']['hot']
    assert hot['n'] == 4
    assert hot['intercept'] == pytest.approx(1.01)
    assert hot['per_100_mib'] == pytest.approx(0.05)
    assert hot['r'] == pytest.approx(1.0)
    assert result['patterns']['flat'] is None          # two runs
    assert swapin_cost.affordable_mib(hot, 1.03) == pytest.approx(40)
    assert swapin_cost.affordable_mib(hot, 1.0) == 0.0
    md = swapin_cost.markdown(result)
    assert '| hot | 4 | 1.010 | +0.050 | 1.00 |' in md
    assert '| flat | too few runs' in md


def test_runs_without_a_none_of_their_pattern_are_left_out(tmp_path):
    slot = _slot(tmp_path / 's', [_run('badis', 'hot', 100, 5),
                                  _run('none', 'other', 100)])
    assert swapin_cost.runs(slot) == []


def test_a_missing_slot_is_an_error_not_a_traceback(tmp_path, capsys):
    assert swapin_cost.main([str(tmp_path / 'absent')]) == 2
    assert 'swapin_cost: error' in capsys.readouterr().err


def test_a_run_with_a_twin_is_paired_with_it(tmp_path):
    # the twin, not the slot's none run, and only what was read back
    # from the run's first row on
    run = _run('badis', 'hot', 1000)
    run['twin_ops'] = 1100
    run['rows'] = [{'t': 0.0, 'swap_in': 2048}, {'t': 120.0,
                                                 'swap_in': 2048 + 30 * 1024}]
    slot = _slot(tmp_path / 's', [run, _run('none', 'hot', 2000),
                                  _run('oracle', 'other', 500)])
    assert swapin_cost.runs(slot) == [('hot', 30.0, 1.1)]
