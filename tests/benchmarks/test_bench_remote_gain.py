"""bench_remote_gain's figures on synthetic runs (issue 18, Fig 4.4/4.5):
per-case summaries, the paired remote / disk ratio, the verdict, and the
remote runs whose slab had failed left out."""

import pytest

from tests.benchmarks import bench_remote_gain as brg

CASES = ['local', 'disk', 'remote-10gbe']


def _runs(disk, remote, local=None, states=None):
    out = []
    for i, (d, r) in enumerate(zip(disk, remote)):
        out.append({'case': 'disk', 'repeat': i, 'completion_s': d})
        out.append({'case': 'remote-10gbe', 'repeat': i, 'completion_s': r,
                    'slab_state': states[i] if states else 'attached'})
        out.append({'case': 'local', 'repeat': i,
                    'completion_s': local or 10.0})
    return out


def test_remote_clearly_faster_meets_the_goal():
    summary, gain, verdict, excluded = brg.figures(
        _runs([100.0, 102.0, 98.0], [70.0, 71.0, 69.0]), CASES, 3)
    assert gain['mean'] == pytest.approx(0.70, abs=0.01)
    assert gain['high'] < 1 / 1.17
    assert verdict == 'met' and excluded == []
    assert summary['disk']['mean'] == pytest.approx(100.0)


def test_a_gain_whose_interval_straddles_the_goal_is_not_met():
    _, gain, verdict, _ = brg.figures(
        _runs([100.0, 100.0, 100.0], [60.0, 95.0, 80.0]), CASES, 3)
    assert gain['low'] < 1 / 1.17 < gain['high']
    assert verdict == 'undecided'


def test_remote_slower_than_disk_is_not_met():
    _, gain, verdict, _ = brg.figures(
        _runs([100.0, 101.0, 99.0], [120.0, 121.0, 119.0]), CASES, 3)
    assert gain['mean'] > 1
    assert verdict == 'not met'


def test_a_remote_run_whose_slab_failed_is_left_out():
    runs = _runs([100.0, 100.0, 100.0], [70.0, 99.0, 71.0],
                 states=['attached', 'failed', 'attached'])
    summary, gain, _, excluded = brg.figures(runs, CASES, 3)
    assert [r['repeat'] for r in excluded] == [1]
    assert summary['remote-10gbe']['n'] == 2
    assert gain['n'] == 2 and max(gain['values']) < 0.72


def test_one_repeat_gives_no_interval_and_no_verdict():
    _, gain, verdict, _ = brg.figures(_runs([100.0], [70.0]), CASES, 1)
    assert gain['n'] == 1 and gain['low'] is None
    assert verdict == 'undecided'


def test_no_pair_gives_no_gain():
    runs = [{'case': 'disk', 'repeat': 0, 'completion_s': 100.0},
            {'case': 'remote-10gbe', 'repeat': 1, 'completion_s': 70.0,
             'slab_state': 'attached'}]
    summary, gain, verdict, _ = brg.figures(runs, CASES, 2)
    assert gain is None and verdict == 'undecided'
    assert set(summary) == {'disk', 'remote-10gbe'}


def test_excess_ratio_removes_the_cpu_time_both_cases_share():
    # 60 s of (emulated) work in every case; disk adds 40 s, remote 20 s
    runs = _runs([100.0, 100.0], [80.0, 80.0], local=60.0)
    ex = brg.excess_ratio(runs, 'remote-10gbe', 2)
    assert ex['mean'] == pytest.approx(0.5)
    # while the plain ratio is pulled towards 1 by the shared work
    _, gain, _, _ = brg.figures(runs, CASES, 2)
    assert gain['mean'] == pytest.approx(0.8)


def test_excess_ratio_skips_repeats_without_swap_cost():
    runs = _runs([100.0, 59.0], [80.0, 70.0], local=60.0)
    ex = brg.excess_ratio(runs, 'remote-10gbe', 2)
    assert ex['n'] == 1 and ex['values'] == [pytest.approx(0.5)]
    assert brg.excess_ratio(runs[:2], 'remote-10gbe', 2) is None


def test_cpu_figures_per_gib_swapped_and_per_request():
    run = {'case': 'remote-10gbe', 'pswpin': 65536, 'pswpout': 196608,
           'cpu_s': {'client': 3.0, 'lender': 1.5, 'qemu': 20.0},
           'nbd_reads': 1000, 'nbd_writes': 100,
           'stage_us': {'read_us': 250000, 'write_us': 80000,
                        'remote_read_us': 200000,
                        'remote_writeback_us': 20000}}
    disk = {'case': 'disk', 'pswpin': 65536, 'pswpout': 196608,
            'cpu_s': {'qemu': 18.0}}
    cpu = brg.cpu_figures([run, dict(run), disk])
    # 1 GiB swapped per run
    assert cpu['client_cpu_s_per_gib']['mean'] == pytest.approx(3.0)
    assert cpu['lender_cpu_s_per_gib']['n'] == 2
    assert cpu['read_service_us']['mean'] == pytest.approx(250.0)
    assert cpu['writeback_wait_us_per_write']['mean'] == pytest.approx(200.0)
    assert brg.cpu_figures([disk]) == {}
