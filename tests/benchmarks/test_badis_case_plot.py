"""tools/badis_case_plot.py: one case of a pattern-suite slot, plotted."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', '..', 'tools'))
import badis_case_plot  # noqa: E402

MIB = 1024


def _run(est, pattern, start, balloons, label=None, truth=100):
    rows = [{'t': 100.0 + i, 'balloon_kb': b * MIB,
             'truth_kb': truth * MIB, 'swap_in': 5 * MIB + i * MIB}
            for i, b in enumerate(balloons)]
    r = {'pattern': pattern, 'start': start, 'estimator': est,
         'rows': rows}
    if label:
        r['label'] = label
    return r


@pytest.fixture
def slot(tmp_path):
    runs = [_run('none', 'load_idle', 'loaded', [256, 256]),
            _run('badis', 'load_idle', 'loaded', [256, 200, 120]),
            _run('badis', 'load_idle', 'loaded', [256, 180],
                 label='floor'),
            _run('badis', 'load_idle', 'boot', [256, 256]),
            _run('oracle', 'hotset', 'loaded', [256, 256])]
    with open(tmp_path / 'patterns.jsonl', 'w') as f:
        for r in runs:
            f.write(json.dumps(r) + '\n')
    return str(tmp_path)


def test_a_case_has_every_configuration_but_none(slot):
    runs = badis_case_plot.runs_of(slot, 'load_idle', 'loaded')
    assert sorted(runs) == ['badis', 'floor']


def test_series_start_at_the_first_poll(slot):
    run = badis_case_plot.runs_of(slot, 'load_idle', 'loaded')['badis']
    t, balloon, truth, read = badis_case_plot.series(run)
    assert t == [0.0, 1.0, 2.0]
    assert balloon == [256, 200, 120]
    assert truth == [100, 100, 100]
    assert read == [0, 1, 2]


def test_plot_is_written(slot, tmp_path):
    out = str(tmp_path / 'case.png')
    assert badis_case_plot.main([slot, '--pattern', 'load_idle',
                                 '--out', out]) == 0
    assert os.path.getsize(out) > 0


def test_a_missing_case_or_slot_is_a_clear_error(slot, tmp_path, capsys):
    out = str(tmp_path / 'x.png')
    assert badis_case_plot.main([slot, '--pattern', 'phases',
                                 '--out', out]) == 2
    assert 'no run of phases' in capsys.readouterr().err
    assert badis_case_plot.main([str(tmp_path / 'nope'), '--pattern',
                                 'phases', '--out', out]) == 2
    assert 'cannot read' in capsys.readouterr().err
    assert not os.path.exists(out)
