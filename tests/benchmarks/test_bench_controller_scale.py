"""bench_controller_scale's summary over repeats (no services run)."""

from tests.benchmarks import bench_controller_scale as bcs


def _run(rep, p99, lost=0):
    return {'hosts': 1000, 'controllers': 1, 'repeat': rep,
            'reports_per_s_offered': 16.7,
            'latency_s': {'p50': 0.05, 'p99': p99, 'max': 3.0},
            'lost_or_doubled': lost, 'failed_calls_resent': 1,
            'round_wall_s': 4.0, 'db_bytes_per_day': 2 ** 31,
            'controller_cpu_share_of_a_core': 0.4}


def test_summary_gives_intervals_and_the_lost_goal_over_every_repeat():
    runs = [_run(0, 2.0), _run(1, 2.5), _run(2, 3.0, lost=1)]
    (row,) = bcs.summarize_runs(runs)
    assert row['n'] == 3 and row['latency_p99_s']['mean'] == 2.5
    assert row['latency_p99_s']['half_width'] > 0
    assert row['db_gib_per_day']['mean'] == 2.0
    # one repeat lost a report: the goal fails whatever the mean says
    assert row['none_lost_or_doubled'] is False
    doc = {'command': 'x', 'summary': [row],
           'discipline': {'repeats': 3, 'seed': 19, 'load_before': [1, 1, 1],
                          'load_after': [2, 2, 2],
                          'versions': {'memmut_commit': 'abc', 'x': None}}}
    md = bcs.markdown(runs, doc)
    assert '2.500 ± ' in md and '| NO |' in md


def test_cpu_by_part_sums_processes_of_a_part_and_shows_it():
    parts = {('controllers', 1): 2.0, ('controllers', 2): 1.0,
             ('postgres', 3): 4.0, ('senders', 4): 0.5}
    cpu = bcs.cpu_by_part(parts, 7.0)
    assert cpu == {'controllers': 3.0, 'postgres': 4.0, 'senders': 0.5,
                   'total': 7.5, 'round': 7.0}
    run = _run(0, 2.0)
    run.update(reports_stored=1000, cpu_s=cpu, machine_busy_cores=1.9,
               cpu_ms_per_report={k: v for k, v in cpu.items()})
    md = bcs.markdown([run])
    assert '| 1000 | 1 | 0 | 1000 | 3.0 | 4.0 | 0.0 | 0.5 | 7.5 | 7.0 | ' \
        '1.90 |' in md


def test_lag_is_summarized_and_shown_when_the_runs_have_it():
    runs = [_run(0, 2.0), _run(1, 2.5)]
    for r, lag in zip(runs, (30.0, 40.0)):
        r['lag_s'] = {'p50': 1.0, 'p99': lag, 'max': lag}
    (row,) = bcs.summarize_runs(runs)
    assert row['lag_p99_s']['mean'] == 35.0
    assert '| 1.000 / 30.000 |' in bcs.markdown(runs)
    # runs from before the lag was recorded
    (row,) = bcs.summarize_runs([_run(0, 2.0)])
    assert row['lag_p99_s'] is None
    assert '| - |' in bcs.markdown([_run(0, 2.0)])


def test_acknowledged_reports_are_shown_apart_from_the_backlog():
    run = _run(0, 2.0, lost=5)
    run.update(acknowledged=95, acknowledged_not_stored=0,
               never_acknowledged=5)
    assert '| 5 | 0 / 5 | 1 |' in bcs.markdown([run])


def test_the_last_interval_lag_takes_the_reports_made_in_it():
    pairs = [(0.0, 90.0), (50.0, 80.0), (101.0, 1.0), (149.0, 2.0),
             (160.0, 0.5)]
    assert sorted(bcs.last_interval_lag(pairs, 60.0)) == [0.5, 1.0, 2.0]
    assert bcs.last_interval_lag([], 60.0) == []
    run = _run(0, 2.0)
    run['lag_last_interval_s'] = {'p50': 0.4, 'p99': 0.9}
    assert '| 0.400 / 0.900 |' in bcs.markdown([run])
    assert '| - |' in bcs.markdown([_run(0, 2.0)])


def test_the_lag_series_bins_reports_by_when_they_were_made():
    pairs = [(100.0, 0.1), (110.0, 0.3), (131.0, 5.0), (140.0, 7.0),
             (200.0, 1.0)]
    series = bcs.lag_series(pairs, 30.0)
    assert [row[:2] for row in series] == [[0.0, 2], [30.0, 2], [90.0, 1]]
    assert series[1][3] >= 5.0 and series[0][2] <= 0.3
    assert bcs.lag_series([]) == []
