"""The figures of the repeated benchmarks (issue 20), on synthetic runs:
fixed-work schedules, paired slowdowns, intervals over repeats, the
mutualization summary and the sampler-cost fit."""

import math

import pytest

from tests.benchmarks import bench_badis
from tests.benchmarks import bench_badis_cost
from tests.benchmarks import bench_mutualization as bm
from tests.benchmarks import discipline

MIB = 1024


@pytest.mark.parametrize('shape', ['W1', 'W3', 'W5'])
def test_fixed_work_steps_touch_the_same_memory(shape):
    steps = bench_badis.fixed_work_schedule(shape, 40)
    for st in steps:
        passes = st.seconds * 1000.0 / bench_badis.FW_PERIOD_MS
        assert passes == pytest.approx(round(passes))
        # every step touches 40 x the peak, to one pass of rounding
        assert abs(passes * st.mib - 40 * bench_badis.PEAK_MIB) <= st.mib


def _run(est, rep, completion=None, passes=100, shape='W1', errors=None):
    r = {'shape': shape, 'alloc': 'd', 'estimator': est, 'repeat': rep,
         'passes': passes, 'wall_s': 10.0, 'cpu_s': 0.1}
    if completion is not None:
        r['completion_s'] = completion
    if errors is not None:
        r['errors'] = {est: errors}
    return r


def test_vm_over_pairs_completion_times_by_repeat():
    refs = {bench_badis._key(r): r for r in [
        _run('none', 0, 100.0), _run('none', 1, 200.0)]}
    assert bench_badis.vm_over_of(_run('badis', 1, 210.0), refs) == (
        pytest.approx(1.05))
    assert bench_badis.vm_over_of(_run('badis', 0, 110.0), refs) == (
        pytest.approx(1.10))
    # a fixed-time run is not compared with a fixed-work reference
    assert bench_badis.vm_over_of(_run('badis', 0, None, 50), refs) is None
    # no reference for that repeat
    assert bench_badis.vm_over_of(_run('badis', 2, 100.0), refs) is None


def test_vm_over_counts_passes_in_fixed_time_mode():
    refs = {bench_badis._key(r): r for r in [_run('none', 0, None, 100)]}
    assert bench_badis.vm_over_of(_run('badis', 0, None, 80), refs) == (
        pytest.approx(1.25))


def test_intervals_are_over_repeats_not_runs():
    e = {'all': 2.0, 'S_more': 1.0, 'S_less': 4.0}
    runs = [_run('none', 0, 100.0), _run('none', 1, 100.0),
            _run('badis', 0, 110.0, errors=e),
            _run('badis', 0, 110.0, shape='W2',
                 errors=dict(e, all=4.0)),
            _run('badis', 1, 121.0, errors=dict(e, all=5.0)),
            _run('badis', 1, 121.0, shape='W2', errors=dict(e, all=7.0))]
    runs += [_run('none', rep, 100.0, shape='W2') for rep in (0, 1)]
    iv = bench_badis.intervals(runs)['badis']
    # repeat 0: mean of 2 and 4; repeat 1: mean of 5 and 7
    assert iv['booked_all']['n'] == 2
    assert iv['booked_all']['values'] == [3.0, 6.0]
    assert iv['vm_over_geomean']['values'] == [pytest.approx(1.1),
                                               pytest.approx(1.21)]
    assert iv['vm_over_median']['values'] == [pytest.approx(1.1),
                                              pytest.approx(1.21)]


def test_vm_over_median_is_per_repeat():
    runs = [_run('none', 0, 100.0, shape=s) for s in ('W1', 'W2', 'W3')]
    e = {'all': 2.0, 'S_more': 1.0, 'S_less': 4.0}
    runs += [_run('badis', 0, t, shape=s, errors=e) for s, t in
             (('W1', 101.0), ('W2', 103.0), ('W3', 150.0))]
    iv = bench_badis.intervals(runs)['badis']
    # the median case, not pulled up by the 1.5 of W3 as the mean is
    assert iv['vm_over_median']['values'] == [pytest.approx(1.03)]
    assert iv['vm_over_geomean']['values'][0] > 1.15


def test_a_repeat_missing_a_case_is_left_out_of_the_intervals():
    e1 = {'all': 1.0, 'S_more': 1.0, 'S_less': 1.0}
    e9 = {'all': 9.0, 'S_more': 9.0, 'S_less': 9.0}
    runs = []
    for rep in (0, 1, 2):
        runs += [_run('none', rep, 100.0, shape=s) for s in ('W1', 'W5')]
        runs.append(_run('badis', rep, 100.0, shape='W1', errors=e1))
    # W5 (the worse case) ran in repeats 0 and 1, not in 2 (cut)
    runs += [_run('badis', rep, 120.0, shape='W5', errors=e9)
             for rep in (0, 1)]
    assert bench_badis.incomplete_repeats(runs) == [2]
    iv = bench_badis.intervals(runs)['badis']
    # repeat 2 alone would have read 1.0 and pulled the mean down
    assert iv['booked_all']['values'] == [5.0, 5.0]
    summary = bench_badis.summarize(runs)
    assert summary['badis']['intervals_leave_out_incomplete_repeats'] == [2]
    result = {'summary': summary, 'runs': runs}
    md = '\n'.join(bench_badis.repeats_markdown(result))
    assert 'Left out of every interval: repeat(s) 2' in md
    # complete repeats: nothing left out
    assert bench_badis.incomplete_repeats(
        [r for r in runs if r['repeat'] < 2]) == []


def _line(mode, rep, total_mib, blas, grass):
    return {'scenario': 'shortage', 'mode': mode, 'repeat': rep,
            'record': {'swap_out_total_kb': total_mib * MIB,
                       'swap_out_kb': {}, 'swap_in_deficit_kb': None,
                       'completion_s': {'blas': blas, 'grass': grass,
                                        'wrf': 150.0},
                       'unfinished': []}}


def test_mutualization_summary_pairs_repeats():
    bm.set_scenario('shortage')
    lines = [_line('static', 0, 3000, 300.0, 300.0),
             _line('static', 1, 6000, 400.0, 400.0),
             _line('equal', 0, 1000, 210.0, 240.0),
             _line('equal', 1, 2000, 280.0, 320.0),
             _line('proportional', 0, 0, 150.0, 150.0),
             _line('proportional', 1, 100, 200.0, 200.0)]
    s = bm.repeat_summary(lines)
    red = s['swap_reduction_x']['equal']
    assert red['values'] == [pytest.approx(3.0), pytest.approx(3.0)]
    assert red['mean'] == pytest.approx(3.0)
    # both repeats say 3x: the interval is [3, 3], wholly below 8
    assert s['verdicts']['equal']['swap_reduction_x >= 8'] == 'not met'
    assert s['speedup_pct']['equal']['blas']['values'] == [
        pytest.approx(30.0), pytest.approx(30.0)]
    assert s['verdicts']['equal']['speed-up blas >= 20 %'] == 'met'
    # a dynamic run that swapped nothing counts as 1 MiB: a lower bound
    prop = s['swap_reduction_x']['proportional']
    assert prop['values'][0] == pytest.approx(3000.0)
    assert prop['dynamic_swapped_nothing'] == 1
    assert s['swap_out_total_mib']['static']['mean'] == pytest.approx(4500)


def test_sampler_fit_recovers_a_linear_cost():
    recs = []
    for mib in (256, 1024, 4096):
        c = 0.002 + 0.003 * mib / 1024.0
        recs.append({'guest_mib': mib, 'round_cpu_s': [c, c],
                     'summary': {'mean': c}})
    f = bench_badis_cost.fit(recs)
    assert f['a_s'] == pytest.approx(0.002)
    assert f['b_s_per_gib'] == pytest.approx(0.003)
    assert f['cost_s_per_round_16gib'] == pytest.approx(0.002 + 0.048)
    slope = (math.log(recs[-1]['summary']['mean'] /
                      recs[0]['summary']['mean']) / math.log(16))
    assert f['loglog_slope'] == pytest.approx(slope)
    assert bench_badis_cost.fit(recs[:1]) is None


def test_unfinished_static_counts_at_the_deadline():
    bm.set_scenario('shortage')
    static = _line('static', 0, 3000, 300.0, 300.0)
    del static['record']['completion_s']['blas']
    static['record']['unfinished'] = ['blas']
    static['record']['run_s'] = 600.0
    s = bm.repeat_summary([static, _line('equal', 0, 1000, 300.0, 300.0)])
    # censored at 600 s: a speed-up of at least 50 %
    assert s['speedup_pct']['equal']['blas']['values'] == [
        pytest.approx(50.0)]
    assert s['completion_s']['static']['blas']['values'] == [600.0]
    assert s['unfinished']['static'] == 1
    # an unfinished dynamic run counts at its deadline too (at most that
    # speed-up), not left out
    dyn = _line('equal', 0, 1000, 300.0, 300.0)
    del dyn['record']['completion_s']['grass']
    dyn['record']['unfinished'] = ['grass']
    dyn['record']['run_s'] = 600.0
    s = bm.repeat_summary([_line('static', 0, 3000, 400.0, 400.0), dyn])
    assert s['speedup_pct']['equal']['grass']['values'] == [
        pytest.approx(-50.0)]


def test_probe_base_rescores_against_the_shifted_truth():
    booked = 256 * MIB
    rows = [{'t': float(i), 'balloon_kb': 200 * MIB,
             'truth_kb': 150 * MIB, 'selfballoon': 150 * MIB}
            for i in range(10)]
    r = {'estimator': 'selfballoon', 'rows': rows, 'booked_kb': booked,
         'base_kb': 70 * MIB, 'probe_base_kb': 78 * MIB}
    e = bench_badis.run_errors(r, 1.0)['selfballoon']
    assert e['all'] == 0
    # the probed base is 8 MiB higher: 8 / 256 of booked
    assert e['probe_base']['all'] == pytest.approx(3.12, abs=0.01)
    sens = bench_badis.base_sensitivity([r], [8], 1.0)
    assert sens['+0']['selfballoon']['all'] == 0
    assert sens['+8']['selfballoon']['all'] == pytest.approx(3.12,
                                                             abs=0.01)


def test_stop_deadline_past_midnight_is_tomorrow():
    # one definition, shared by bench_mutualization and bench_badis
    assert bm.stop_deadline is discipline.stop_deadline
    # 22:30 UTC on day 10; a stop at 00:10 is 1 h 40 min later, not past
    now = 10 * 86400 + 22 * 3600 + 30 * 60
    assert bm.stop_deadline('00:10', now) == 11 * 86400 + 10 * 60
    assert bm.stop_deadline('23:00', now) == 10 * 86400 + 23 * 3600
    assert bm.stop_deadline(None, now) is None
    # started at 00:09, a stop at 00:05 is past, not tomorrow's
    later = 11 * 86400 + 9 * 60
    assert bm.stop_deadline('00:05', later) == 11 * 86400 + 5 * 60
    assert bm.stop_deadline('23:50', later) == 10 * 86400 + 23 * 3600 + \
        50 * 60


def test_ten_guest_windows_give_an_interval_and_whole_run_figures():
    # agent 1 s of CPU per 20 s window, 0.8 s of it in 100 rounds: 8 ms a
    # round, 0.2 s over 20 polls = 10 ms a poll outside the pipeline
    ws = [bench_badis_cost.window_figures(
        wall=20.0, polls=20, rounds=100, agent_s=1.0 + d, pipeline_s=0.8,
        memstore_s=2.0, swapped_kb=20 * MIB) for d in (0.0, 0.1, 0.2)]
    assert ws[0]['per_round_cpu_s'] == pytest.approx(0.008)
    assert ws[0]['per_poll_overhead_cpu_s'] == pytest.approx(0.01)
    # 10 rounds of 8 ms per 60 s plus a 10 ms poll per 5 s
    assert ws[0]['production_pct_core_10vms'] == pytest.approx(
        100 * (0.08 / 60 + 0.01 / 5), abs=1e-4)
    out = bench_badis_cost.combine_windows(ws)
    assert out['window_s'] == pytest.approx(60.0)
    assert out['agent_cpu_s'] == pytest.approx(3.3)
    assert out['swap_out_mib_per_s'] == pytest.approx(1.0)
    s = out['summary']['per_poll_overhead_cpu_s']
    assert s['n'] == 3
    assert s['mean'] == pytest.approx(0.015)
    assert s['low'] < 0.015 < s['high']
    md = bench_badis_cost.markdown({'ten': dict(out, poll_s=1.0,
                                                round_s=2.0,
                                                production_note='x',
                                                load_before=None,
                                                load_after=None)})
    assert 'Over 3 back-to-back windows' in md
    assert '**met**' in md


def test_badis_versions_record_counts_runs_without_and_keeps_the_note():
    v1 = {'memmut_commit': 'a' * 40, 'qemu': '7.2', 'kernel': 'k'}
    v2 = dict(v1, memmut_commit='b' * 40)
    runs = [{'versions': v1}, {'versions': v1}, {'versions': v2}, {}]
    rec = bench_badis.versions_record(runs, 'run at abc1234; from git')
    assert rec['recorded'] == [v1, v2]
    assert rec['runs_with_versions'] == 3
    assert rec['runs_without_versions'] == 1
    assert rec['not_recorded'] == 'run at abc1234; from git'
    text = bench_badis.versions_markdown(rec)
    assert '3 of 4 runs' in text and 'aaaaaaaaaa' in text
    assert 'run at abc1234' in text
    # all runs recorded: no note, whatever the old file said
    rec = bench_badis.versions_record(runs[:3], 'stale note')
    assert 'not_recorded' not in rec
    # runs without versions and no note: said, not guessed
    rec = bench_badis.versions_record([{}], None)
    assert rec['not_recorded'] == 'where they ran is not known'


def test_mutualization_versions_of_reused_and_old_files():
    v = {'memmut_commit': 'c' * 40, 'qemu': '7.2', 'libvirt': '9',
         'kernel': 'k', 'memstore_commit': 'd' * 40}
    assert bm.reused_versions({'versions': v}) == v
    assert bm.reused_versions({'versions_not_recorded': 'run at x; y'}) \
        == {'not_recorded': 'run at x; y'}
    assert bm.reused_versions({'started': 'T'}) == {
        'not_recorded': 'not recorded (run started T)'}
    assert 'memmut cccccccccc' in bm.versions_sentence({'versions': v})
    assert bm.versions_sentence({'versions_not_recorded': 'run at x'}) == \
        'Versions: not recorded; run at x.'


def test_static_deadline_factor_shortens_only_the_static_run():
    assert bm.deadline_s('static', 5.0) == 600.0
    assert bm.deadline_s('static', 5.0, 2.5) == 375.0
    # the dynamic modes keep 4 x: they must finish for the bound to hold
    assert bm.deadline_s('equal', 5.0, 2.5) == 600.0
    bm.set_scenario('zipf')
    static = _line('static', 0, 3000, 300.0, 300.0)
    static['record']['deadline_s'] = 375.0
    s = bm.repeat_summary([static, _line('equal', 0, 1000, 300.0, 300.0)])
    assert s['deadline_s'] == {'static': [375.0], 'equal': ['not recorded']}
    text = bm.deadlines_text(s['deadline_s'])
    assert 'static 375 s' in text
    assert 'equal not recorded (4 x the nominal length)' in text


def test_deadlines_and_versions_of_a_series_aggregate():
    assert bm.deadlines_text({'static': ['not recorded'],
                              'equal': ['not recorded']}) == \
        '4 x the nominal length'
    v = {'memmut_commit': 'e' * 40, 'qemu': '7.2'}
    assert 'memmut eeeeeeeeee' in bm.versions_sentence(
        {'discipline': {'versions': v}})


def _fw(est, rep, completion=None, shape='W3', at_least=None):
    r = _run(est, rep, completion, shape=shape)
    r['fixed_work_passes'] = 240
    if at_least is not None:
        r['completion_at_least_s'] = at_least
    return r


def test_slowdowns_per_case_and_over_cases_pair_by_repeat():
    runs = [_fw('none', 0, 100.0), _fw('none', 1, 50.0),
            _fw('none', 0, 200.0, shape='W5'),
            _fw('none', 1, 200.0, shape='W5'),
            # badis: W3 1.10 then 1.20; W5 1.00 then 1.05
            _fw('badis', 0, 110.0), _fw('badis', 1, 60.0),
            _fw('badis', 0, 200.0, shape='W5'),
            _fw('badis', 1, 210.0, shape='W5')]
    sd = bench_badis.slowdowns(runs)
    assert sd['reference_s']['W3,d']['values'] == [100.0, 50.0]
    b = sd['estimators']['badis']
    assert b['cases']['W3,d']['values'] == [pytest.approx(1.1),
                                            pytest.approx(1.2)]
    assert b['cases']['W3,d']['mean'] == pytest.approx(
        math.sqrt(1.1 * 1.2))
    # each repeat's geometric mean over the two cases
    assert b['all_cases']['values'] == [pytest.approx(math.sqrt(1.1)),
                                        pytest.approx(math.sqrt(1.2 * 1.05))]
    assert b['all_cases']['repeats_left_out'] == 0
    assert b['all_cases']['low'] < b['all_cases']['mean'] < (
        b['all_cases']['high'])


def test_slowdowns_take_censored_runs_as_lower_bounds():
    runs = [_fw('none', 0, 100.0), _fw('none', 1, 100.0),
            _fw('none', 0, 100.0, shape='W5'),
            _fw('none', 1, 100.0, shape='W5'),
            _fw('zballoond', 0, 120.0), _fw('zballoond', 1, 130.0),
            _fw('zballoond', 0, 150.0, shape='W5'),
            # still working at its timeout: a lower bound, not a ratio
            _fw('zballoond', 1, None, shape='W5', at_least=300.0)]
    sd = bench_badis.slowdowns(runs)
    z = sd['estimators']['zballoond']
    assert z['censored'] == [{'case': 'W5,d', 'repeat': 1,
                              'vm_over_at_least': 3.0}]
    assert z['cases']['W5,d']['values'] == [1.5, 3.0]
    assert z['cases']['W5,d']['lower_bound']
    assert not z['cases']['W3,d']['lower_bound']
    assert z['all_cases']['lower_bound']
    assert z['all_cases']['values'] == [pytest.approx(math.sqrt(1.2 * 1.5)),
                                        pytest.approx(math.sqrt(1.3 * 3))]
    md = '\n'.join(bench_badis.slowdown_markdown(sd))
    assert 'vm_over >= 3.000' in md
    assert '>= 2.121 [' in md


def test_a_lower_bound_never_meets_the_goal():
    inside = {'n': 3, 'mean': 1.01, 'low': 1.0, 'high': 1.02,
              'half_width': 0.01}
    assert bench_badis.slowdown_verdict(inside) == 'met'
    assert bench_badis.slowdown_verdict(
        dict(inside, lower_bound=True)) == 'undecided'
    above = {'n': 3, 'mean': 2.0, 'low': 1.5, 'high': 2.5, 'half_width': 0.5,
             'lower_bound': True}
    assert bench_badis.slowdown_verdict(above) == 'not met'


def test_slowdowns_leave_incomplete_repeats_out_of_all_cases():
    runs = [_fw('none', 0, 100.0), _fw('none', 1, 100.0),
            _fw('none', 0, 100.0, shape='W5'),
            _fw('none', 1, 100.0, shape='W5'),
            _fw('zballoond', 0, 120.0), _fw('zballoond', 1, 130.0),
            _fw('zballoond', 0, 150.0, shape='W5')]
    z = bench_badis.slowdowns(runs)['estimators']['zballoond']
    # repeat 1 lacks W5: only repeat 0 makes the all-cases figure
    assert z['all_cases']['n'] == 1
    assert z['all_cases']['repeats_left_out'] == 1
    assert '1.500 [?] (n=1)' in '\n'.join(bench_badis.slowdown_markdown(
        bench_badis.slowdowns(runs)))


def test_run_budget_never_overruns_the_stop_time():
    # no stop time: the run's own timeout
    assert bench_badis.run_budget(1000.0, None, 150, 900) == (900, False)
    # plenty of time left
    assert bench_badis.run_budget(1000.0, 3000.0, 150, 900) == (900, False)
    # less than the timeout left: cut at the stop time
    assert bench_badis.run_budget(1000.0, 1400.0, 150, 900) == (400.0,
                                                                True)
    # less than the margin left: do not start
    assert bench_badis.run_budget(1000.0, 1100.0, 150, 900) is None
    assert bench_badis.run_budget(1000.0, 900.0, 150, 900) is None


def test_markdown_names_the_fixed_work_pace_and_the_slowdown_table():
    runs = [_fw('none', 0, 100.0), _fw('badis', 0, 104.0)]
    result = {'command': 'c', 'date': 'd', 'duration_s': 1,
              'machine': 'm', 'setup': {'step_s': 12.0},
              'summary': bench_badis.summarize(runs), 'runs': runs,
              'slowdown': bench_badis.slowdowns(runs)}
    md = bench_badis.markdown(result)
    assert 'fixed work (240 x the peak per step' in md
    assert 'schedules W3,d' in md
    assert '12 s per schedule step' not in md
    assert '| badis | 1.040 [?] (n=1) | 1.040 [?] (n=1) | undecided |' in md
