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


# --compare-binary: a compared build's remote case in the same repeats

CMP = CASES + ['remote-10gbe@before']


def _cmp_runs(disk, new, old, states_old=None):
    runs = _runs(disk, new)
    for i, r in enumerate(old):
        runs.append({'case': 'remote-10gbe@before', 'repeat': i,
                     'completion_s': r,
                     'slab_state': states_old[i] if states_old
                     else 'attached'})
    return runs


def test_case_list_adds_the_compared_build_and_keeps_kinds():
    assert brg.case_list('10gbe') == CASES
    assert brg.case_list('10gbe', compare=True) == CMP
    assert brg.case_list('veth', True, ['disk', 'remote']) == [
        'disk', 'remote-veth', 'remote-veth@before']
    assert brg.split_case('remote-10gbe@before') == ('remote-10gbe',
                                                     '@before')
    assert brg.split_case('disk') == ('disk', '')


def test_the_goal_is_judged_on_this_build_not_the_compared_one():
    # the compared build meets the goal, this one does not
    runs = _cmp_runs([100.0, 101.0, 99.0], [120.0, 121.0, 119.0],
                     [70.0, 71.0, 69.0])
    summary, gain, verdict, _ = brg.figures(runs, CMP, 3)
    assert gain['mean'] > 1 and verdict == 'not met'
    assert summary['remote-10gbe@before']['mean'] == pytest.approx(70.0)
    cmp = brg.compared(runs, CMP, 3)
    assert list(cmp) == ['remote-10gbe@before']
    assert cmp['remote-10gbe@before']['verdict'] == 'met'
    assert cmp['remote-10gbe@before']['gain']['mean'] == pytest.approx(
        0.70, abs=0.01)


def test_versus_is_this_build_over_the_compared_one_per_repeat():
    runs = _cmp_runs([100.0, 100.0, 100.0], [80.0, 90.0, 40.0],
                     [100.0, 90.0, 80.0])
    v = brg.compared(runs, CMP, 3)['remote-10gbe@before']['versus']
    assert v['values'] == [pytest.approx(0.8), pytest.approx(1.0),
                           pytest.approx(0.5)]
    assert v['n'] == 3


def test_a_compared_run_whose_slab_failed_is_left_out_of_both():
    runs = _cmp_runs([100.0, 100.0, 100.0], [80.0, 80.0, 80.0],
                     [100.0, 50.0, 100.0],
                     states_old=['attached', 'failed', 'attached'])
    summary, _, _, excluded = brg.figures(runs, CMP, 3)
    assert [(r['case'], r['repeat']) for r in excluded] == [
        ('remote-10gbe@before', 1)]
    assert summary['remote-10gbe@before']['n'] == 2
    c = brg.compared(runs, CMP, 3, excluded)['remote-10gbe@before']
    assert c['gain']['n'] == 2 and c['versus']['n'] == 2
    assert c['versus']['mean'] == pytest.approx(0.8)


def test_without_a_compared_build_nothing_is_compared():
    assert brg.compared(_runs([100.0], [70.0]), CASES, 1) == {}


class _Args:
    repeats = 2
    passes = 2
    wss_mib = 288
    profile = '10gbe'
    seed = 63
    budget_s = 300.0
    memstore_binary = None
    compare_binary = '/tmp/old/memmut-memstore'


def _remote_run(case, rep, t, client_cpu):
    return {'case': case, 'repeat': rep, 'completion_s': t,
            'slab_state': 'attached', 'pswpin': 65536, 'pswpout': 196608,
            'cpu_s': {'client': client_cpu, 'lender': 1.0},
            'remote_placed_pages': 10, 'remote_hit_pages': 5,
            'file_read_pages': 6, 'remote_skipped_pages': 0}


def test_results_merge_both_builds_and_markdown_names_them():
    runs = []
    for rep in range(2):
        runs += [{'case': 'local', 'repeat': rep, 'completion_s': 2.0},
                 {'case': 'disk', 'repeat': rep, 'completion_s': 10.0},
                 _remote_run('remote-10gbe', rep, 8.0 + rep, 3.0),
                 _remote_run('remote-10gbe@before', rep, 12.0, 4.0)]
    res = brg.results(runs, CMP, _Args)
    assert set(res['cpu']) == {'remote-10gbe', 'remote-10gbe@before'}
    assert res['cpu']['remote-10gbe']['client_cpu_s_per_gib']['mean'] == \
        pytest.approx(3.0)
    assert res['cpu']['remote-10gbe@before'][
        'client_cpu_s_per_gib']['mean'] == pytest.approx(4.0)
    # (8 - 2) / (10 - 2) and (9 - 2) / 8 for this build, 10 / 8 before
    assert res['excess_ratio']['values'] == [pytest.approx(0.75),
                                             pytest.approx(0.875)]
    assert res['excess_ratio_compared']['remote-10gbe@before'][
        'mean'] == pytest.approx(1.25)
    v = res['compared']['remote-10gbe@before']['versus']
    assert v['values'] == [pytest.approx(8 / 12), pytest.approx(9 / 12)]
    res.update(command=brg.command_line(_Args), runs_planned=8,
               shaping='tbf', binaries={'': '/new', '@before': '/old'},
               discipline={'load_before': [1, 1, 1],
                           'load_after': [1, 1, 1], 'versions': {}},
               note='n')
    md = brg.markdown(res)
    assert '--compare-binary /tmp/old/memmut-memstore' in md
    assert 'Compared memstore (`remote-10gbe@before`, /old)' in md
    assert '| figure | remote-10gbe | remote-10gbe@before |' in md
    assert 'remote-10gbe@before rep 1: 10 / 5 / 6 / 0' in md


def test_markdown_still_reads_a_single_build_result():
    # result files written before --compare-binary: cpu is one build's
    res = brg.results(_runs([10.0, 10.0], [8.0, 9.0], local=2.0), CASES,
                      _Args)
    res['cpu'] = {'client_cpu_s_per_gib': {'mean': 3.0, 'n': 1,
                                           'half_width': None}}
    res.update(command='c', runs_planned=6, shaping='tbf',
               discipline={'load_before': [1], 'load_after': [1],
                           'versions': {}}, note='n')
    md = brg.markdown(res)
    assert '| figure | remote |' in md and 'Compared' not in md
