"""bench_remote_lender's figures on synthetic runs (issue 18, Fig 4.6):
the paired slowdown of the lender guest, its verdict against the 3 %
goal, and runs whose client had stopped swapping left out."""

import pytest

from tests.benchmarks import bench_remote_lender as brl


def _runs(alone, serving, disk, overlap=None):
    out = []
    for i, (a, s, d) in enumerate(zip(alone, serving, disk)):
        out.append({'case': 'alone', 'repeat': i, 'completion_s': a})
        out.append({'case': 'serving', 'repeat': i, 'completion_s': s,
                    'overlap': overlap[i] if overlap else True})
        out.append({'case': 'client-disk', 'repeat': i, 'completion_s': d,
                    'overlap': True})
    return out


def test_a_small_steady_slowdown_meets_the_goal():
    summary, ratios, verdict, excluded = brl.figures(
        _runs([10.0, 10.2, 9.9], [10.1, 10.3, 10.0], [10.0, 10.3, 9.9]), 3)
    assert ratios['serving/alone']['mean'] == pytest.approx(1.01, abs=0.002)
    assert verdict == 'met' and excluded == []
    assert ratios['serving/client-disk']['n'] == 3
    assert summary['alone']['n'] == 3


def test_a_lender_slowed_by_a_tenth_does_not_meet_it():
    _, ratios, verdict, _ = brl.figures(
        _runs([10.0, 10.0, 10.0], [11.0, 11.1, 10.9], [10.5, 10.5, 10.5]),
        3)
    assert ratios['serving/alone']['low'] > 1.03
    assert verdict == 'not met'
    assert ratios['serving/client-disk']['mean'] == pytest.approx(
        1.048, abs=0.005)


def test_a_serving_run_without_overlap_is_left_out():
    runs = _runs([10.0, 10.0, 10.0], [10.1, 10.0, 10.2], [10.0] * 3,
                 overlap=[True, False, True])
    summary, ratios, _, excluded = brl.figures(runs, 3)
    assert [r['repeat'] for r in excluded] == [1]
    assert summary['serving']['n'] == 2
    assert ratios['serving/alone']['n'] == 2


def test_no_serving_run_gives_no_ratio():
    runs = [{'case': 'alone', 'repeat': 0, 'completion_s': 10.0}]
    _, ratios, verdict, _ = brl.figures(runs, 1)
    assert ratios == {} and verdict == 'undecided'
