"""The fault campaign's result file, on synthetic runs: the interval
over repeated libvirt runs, the zero goals summed, and the merge with
sections of an earlier run."""

import json

import pytest

from tests.benchmarks import faults_report


def _run(seed, p50, p99, raised=0):
    return {'guests': 4, 'p': 0.05, 'p_balloon': 0.3, 'seed': seed,
            'poll_interval_s': 0.25, 'duration_s': 60.0,
            'recovery_phase_s': 15.0, 'faults': 100 + seed,
            'polls_raised': raised, 'floor_violations': 0,
            'balloons_below_floor_at_end': 0, 'unmanaged_after_recovery': 0,
            'first_healthy_poll_after_faults_stop_s': 0.3,
            'recovery_s': {'p50': p50, 'p99': p99, 'max': p99, 'n': 50}}


def test_libvirt_repeats_interval_and_zero_goals():
    runs = [_run(17, 0.3, 1.5), _run(18, 0.4, 1.7, raised=1),
            _run(19, 0.5, 1.6)]
    lv = faults_report.libvirt_repeats(runs)
    assert lv['n'] == 3
    assert lv['faults'] == 117 + 118 + 119
    # a zero goal counts every repeat: one raise anywhere shows
    assert lv['polls_raised'] == 1
    s = lv['summary']['recovery_p50_s']
    assert s['n'] == 3 and s['mean'] == pytest.approx(0.4)
    assert s['low'] < 0.4 < s['high']
    # first healthy poll is the same in every run: zero width
    assert lv['summary']['first_healthy_poll_after_faults_stop_s'][
        'half_width'] == pytest.approx(0.0)
    md = '\n'.join(faults_report.libvirt_markdown(lv))
    assert '3 repeats' in md
    assert '0.40 ± ' in md and '(n=3)' in md


def test_save_keeps_old_sections_and_the_single_run(tmp_path):
    out = str(tmp_path / 'faults')
    old = {'machine': {'qemu': '7'}, 'args': {'sections': 'libvirt,load'},
           'libvirt': dict(_run(17, 0.32, 1.54), faults=1358,
                           duration_s=600.0,
                           poll_s={'p50': 0.1, 'p99': 0.2}),
           'load': {'guests': 20, 'poll_s': {'p50': 0.7, 'p99': 4.8},
                    'agent_cpu_s_per_poll': 0.04}}
    with open(out + '.json', 'w') as f:
        json.dump(old, f)
    lv = faults_report.libvirt_repeats([_run(17, 0.3, 1.5),
                                        _run(18, 0.4, 1.7)])
    res = {'machine': {'qemu': '7.2'}, 'args': {'sections': 'libvirt'},
           'discipline': {'started_utc': 'T1'}, 'libvirt': lv}
    faults_report.save(out, res)
    faults_report.save(out, res)          # the next repeat: no new run
    with open(out + '.json') as f:
        got = json.load(f)
    assert got['load'] == old['load']
    assert got['libvirt_before_repeats']['faults'] == 1358
    assert got['libvirt']['n'] == 2
    assert [r['started_utc'] for r in got['runs']] == [None, 'T1']
    assert got['total_faults'] == lv['faults']
    md = open(out + '.md').read()
    assert '### Before the repeats: one run of 600 s' in md
    assert '## Load: 20 guests' in md


def _ms(values, lost=0):
    return {'kills': len(values), 'kill_every_s': 6.0,
            'acknowledged_pages_lost': lost, 'pages_verified': 1000,
            'guest_finished': True,
            'time_to_serve_again_s': {'values': values}}


def _sv(seed, agent, gaps=0):
    rec = {'values': [0.8, 0.9]}
    return {'seed': seed, 'agent_kills': len(agent), 'broker_restarts': 2,
            'db_restarts': 2, 'outage_s': 5.0, 'reports_stored': 50,
            'agent_runs': len(agent) + 1, 'seq_gaps_in_stored_runs': gaps,
            'unmanaged_after_recovery': 0, 'balloons_below_floor_at_end': 0,
            'recovery_agent_sigkill_s': {'values': agent},
            'recovery_broker_restart_s': rec, 'recovery_db_restart_s': rec}


def test_memstore_repeats_pool_events_and_interval_over_runs():
    ms = faults_report.memstore_repeats([_ms([1.0, 1.2]),
                                         _ms([2.0, 2.2], lost=3)])
    assert ms['n'] == 2 and ms['kills'] == 4
    # a page lost in any repeat shows in the total
    assert ms['acknowledged_pages_lost'] == 3
    t = ms['time_to_serve_again_s']
    assert t['values'] == [1.0, 1.2, 2.0, 2.2] and t['max'] == 2.2
    assert t['summary']['n'] == 4
    # the runs' means 1.1 and 2.1: n = 2, centred on 1.6, wider
    assert t['summary_runs']['n'] == 2
    assert t['summary_runs']['mean'] == pytest.approx(1.6)
    assert t['summary_runs']['half_width'] > t['summary']['half_width']


def test_services_repeats_sum_counts_and_keep_each_kind(tmp_path):
    sv = faults_report.services_repeats([_sv(17, [2.0, 2.4]),
                                         _sv(18, [2.6], gaps=1)])
    assert sv['n'] == 2 and sv['agent_kills'] == 3
    assert sv['seq_gaps_in_stored_runs'] == 1
    assert sv['recovery_agent_sigkill_s']['per_run'] == [[2.0, 2.4], [2.6]]
    assert sv['recovery_agent_sigkill_s']['summary_runs']['mean'] == \
        pytest.approx(2.4)
    # an earlier single run is kept, and the Markdown says both
    out = str(tmp_path / 'faults')
    single = dict(_sv(17, [2.3]), recovery_agent_sigkill_s={
        'p50': 2.3, 'p99': 2.9, 'max': 2.9},
        recovery_broker_restart_s={'p50': 1.7, 'max': 3.5},
        recovery_db_restart_s={'p50': 0.7, 'max': 0.9})
    with open(out + '.json', 'w') as f:
        json.dump({'machine': {}, 'args': {}, 'services': single}, f)
    faults_report.save(out, {'machine': {}, 'args': {},
                             'discipline': {'started_utc': 'T'},
                             'services': sv})
    with open(out + '.json') as f:
        got = json.load(f)
    assert got['services_before_repeats']['recovery_agent_sigkill_s'][
        'p50'] == 2.3
    md = open(out + '.md').read()
    assert '2 repeats, each with a fresh broker' in md
    assert "mean over the runs' means" in md
    assert 'agent SIGKILL recovery p50 2.3 s' in md


def test_earlier_repeats_resume_only_from_repeated_sections(tmp_path):
    out = str(tmp_path / 'faults')
    assert faults_report.earlier_repeats(out, 'libvirt') == ([], None)
    lv = faults_report.libvirt_repeats([_run(17, 0.3, 1.5),
                                        _run(18, 0.4, 1.7)])
    lv['discipline'] = {'started_utc': 'T0'}
    with open(out + '.json', 'w') as f:
        json.dump({'libvirt': lv, 'memstore': _ms([1.0])}, f)
    runs, d = faults_report.earlier_repeats(out, 'libvirt')
    assert [r['seed'] for r in runs] == [17, 18]
    assert d == {'started_utc': 'T0'}
    # a single run (no 'repeats') is not a repeat to go on from
    assert faults_report.earlier_repeats(out, 'memstore') == ([], None)


def test_a_guest_stopped_in_any_repeat_counts():
    old = _run(17, 0.3, 1.5)               # recorded before the key
    new = dict(_run(19, 0.4, 1.6), guests_stopped=1)
    lv = faults_report.libvirt_repeats([old, new])
    assert lv['guests_stopped'] == 1
    md = '\n'.join(faults_report.libvirt_markdown(lv))
    assert '| guests not running at the end (all repeats) | 1 | 0 |' in md


def test_markdown_of_a_section_aggregated_before_guests_stopped():
    lv = faults_report.libvirt_repeats([_run(17, 0.3, 1.5),
                                        _run(18, 0.4, 1.7)])
    del lv['guests_stopped']
    md = '\n'.join(faults_report.libvirt_markdown(lv))
    assert 'guests not running at the end (all repeats) | not recorded' in md


def _df(alive=True, lost=None, state=1, refused=40):
    return {'tmpfs_mib': 48, 'ram_quota_mib': 16, 'error_policy': 'report',
            'domain_state': [state, 1], 'memstore_alive': alive,
            'memstore_exit': None if alive else -9,
            'requests_refused': refused, 'bytes_written': 1 << 30,
            'guest_swap_write_errors': 300, 'guest_oom_kills': 1,
            'memwork_finished': lost is not None,
            'acknowledged_pages_lost': lost}


def test_diskfull_repeats_fail_if_any_run_fails():
    df = faults_report.diskfull_repeats([_df(), _df(lost=0), _df()])
    assert df['n'] == 3 and df['memstore_alive']
    assert df['requests_refused'] == 120
    # the pages lost only from the run where memwork finished
    assert df['memwork_finished_runs'] == 1
    assert df['acknowledged_pages_lost'] == 0
    # one memstore dead, one run paused, one page lost: all show
    bad = faults_report.diskfull_repeats([_df(), _df(alive=False),
                                          _df(state=3, lost=2)])
    assert not bad['memstore_alive'] and bad['memstore_alive_runs'] == 2
    assert bad['paused_runs'] == 1
    assert bad['acknowledged_pages_lost'] == 2
    # no run finished: no figure rather than 0
    assert faults_report.diskfull_repeats([_df()])[
        'acknowledged_pages_lost'] is None


def _ld(times, cpu=0.04):
    times = list(times)
    srt = sorted(times)
    return {'guests': 20, 'poll_interval_s': 5.0, 'polls': len(times),
            'poll_times_s': times,
            'poll_s': {'p50': srt[len(srt) // 2], 'p99': srt[-1],
                       'max': srt[-1]},
            'agent_cpu_s_per_poll': cpu,
            'p99_under_interval': srt[-1] < 5.0}


def test_load_repeats_interval_over_runs_and_every_run_under():
    ld = faults_report.load_repeats([_ld([0.5, 0.7, 1.0]),
                                     _ld([0.6, 0.8, 2.0]),
                                     _ld([0.6, 0.9, 3.0])])
    assert ld['n'] == 3 and ld['polls'] == 9
    assert ld['poll_s']['max'] == 3.0
    s = ld['summary']['poll_p99_s']
    assert s['mean'] == pytest.approx(2.0) and s['low'] < 2.0 < s['high']
    assert ld['p99_under_interval']
    # one run over the interval fails the whole series
    assert not faults_report.load_repeats(
        [_ld([0.5, 1.0]), _ld([0.5, 5.5])])['p99_under_interval']


def test_save_keeps_single_diskfull_and_load_runs_beside_repeats(tmp_path):
    out = str(tmp_path / 'faults')
    single_load = {'guests': 20, 'poll_interval_s': 5.0, 'polls': 24,
                   'poll_s': {'p50': 0.73, 'p99': 4.78, 'max': 4.78},
                   'agent_cpu_s_per_poll': 0.042, 'p99_under_interval': True}
    with open(out + '.json', 'w') as f:
        json.dump({'machine': {}, 'args': {}, 'diskfull': _df(),
                   'load': single_load}, f)
    res = {'machine': {}, 'args': {}, 'discipline': {'started_utc': 'T'},
           'diskfull': faults_report.diskfull_repeats([_df(), _df()]),
           'load': faults_report.load_repeats([_ld([0.5, 1.0]),
                                               _ld([0.6, 1.2])])}
    faults_report.save(out, res)
    with open(out + '.json') as f:
        got = json.load(f)
    assert got['load_before_repeats']['poll_s']['p99'] == 4.78
    assert got['diskfull_before_repeats']['requests_refused'] == 40
    # two disk-full runs are two faults
    assert got['total_faults'] == 2
    md = open(out + '.md').read()
    assert '2 repeats, each a fresh tmpfs, memstore and guest' in md
    assert '| memstore alive at the end (runs) | 2 of 2 | all |' in md
    assert 'poll p99, mean over the runs (s)' in md
    assert '| poll p50 / p99 (s) | 0.730 / 4.780 | < 5 |' in md
