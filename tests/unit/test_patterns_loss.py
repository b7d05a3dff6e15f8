"""tools/patterns_loss.py: operations lost per window against the none
run, from memwork's progress lines."""

from tests import common

patterns_loss = common.tool_module('patterns_loss')


def test_cumulative_chains_the_steps():
    # each step's count starts again at 0
    progress = [[1.0, 0, 100], [2.0, 0, 200], [3.0, 1, 50], [4.0, 1, 150]]
    assert patterns_loss.cumulative(progress) == [
        (1.0, 100), (2.0, 200), (3.0, 250), (4.0, 350)]


def test_lost_per_window():
    ref = {'progress': [[t, 0, 100 * t] for t in range(1, 21)]}
    # a stall between 10 and 15 s: no operations there
    run = {'progress': [[t, 0, 100 * min(t, 10) + 100 * max(0, t - 15)]
                        for t in range(1, 21)]}
    lost = patterns_loss.lost_per_window(run, ref, 10.0, 20.0)
    assert lost == [0, 500]


def test_main_needs_runs_with_progress(tmp_path, capsys):
    f = tmp_path / 'patterns.jsonl'
    f.write_text('{"pattern": "hotset", "estimator": "badis", '
                 '"start": "boot", "seconds": 20}\n')
    assert patterns_loss.main([str(f)]) == 1
    assert 'no run with progress' in capsys.readouterr().out
