"""The pattern suite's oracle run and summary (bench_patterns)."""

import pytest

from memmut.evaluation import workloads
from tests.benchmarks import bench_patterns as bp

MIB = bp.MIB
BASE = 76 * MIB


def test_oracle_gives_the_load_then_the_hot_part():
    pattern, steps = workloads.pattern_suite(160, 30.0)['load_idle']
    truth = bp.oracle_truth(steps, pattern, BASE)
    # loading: no step line yet, the whole step
    assert truth('booting...\n') == BASE + 160 * MIB
    # after the first pass, only the part load_idle keeps touching
    assert truth('MEMWORK step=0 wss_mib=160 pass=1\n') == BASE + 40 * MIB


def test_oracle_gives_the_next_step_once_a_step_ends():
    pattern, steps = workloads.pattern_suite(160, 30.0)['phases']
    truth = bp.oracle_truth(steps, pattern, BASE)
    log = ('MEMWORK step=0 wss_mib=80 pass=1\n'
           'MEMWORK end step=0 wss_mib=80 passes=9\n')
    assert truth(log) == BASE + 160 * MIB
    assert truth(log + 'MEMWORK step=1 wss_mib=160 pass=1\n') == (
        BASE + 160 * MIB)


def test_only_patterns_with_a_true_working_set_have_an_oracle_run():
    assert bp.has_oracle('load_idle') and bp.has_oracle('phases')
    assert not bp.has_oracle('zipf0.8')
    assert not bp.has_oracle('redis')
    assert not bp.has_oracle('sqlite')


def _run(est, ops, pattern='hotset', start='boot'):
    return {'pattern': pattern, 'start': start, 'estimator': est,
            'ops': ops, 'saved_pct': 10.0}


def test_summary_gives_vm_over_against_the_oracle_of_the_same_case():
    runs = [_run('none', 1200), _run('oracle', 1000), _run('badis', 800),
            _run('badis', 900, start='loaded'),
            _run('none', 500, pattern='zipf0.8'),
            _run('badis', 400, pattern='zipf0.8')]
    rows = {(r['pattern'], r['start'], r['estimator']): r
            for r in bp.summarize(runs)['runs']}
    assert rows['hotset', 'boot', 'oracle']['vm_over'] == 1.2
    assert rows['hotset', 'boot', 'badis']['vm_over'] == 1.5
    assert rows['hotset', 'boot', 'badis']['vm_over_vs_oracle'] == 1.25
    # no oracle run for that case (start) or that pattern
    assert rows['hotset', 'loaded', 'badis']['vm_over_vs_oracle'] is None
    assert rows['zipf0.8', 'boot', 'badis']['vm_over_vs_oracle'] is None
    assert rows['hotset', 'boot', 'oracle']['vm_over_vs_oracle'] is None


def test_a_twin_is_the_reference_of_the_run_it_ran_beside():
    # --twin: the none run started beside each run judges it; a run
    # whose twin failed falls back to the case's none run
    runs = [_run('none', 1200), dict(_run('badis', 800), twin_ops=1000),
            dict(_run('badis', 600, start='loaded'), twin_ops=None)]
    rows = {(r['pattern'], r['start'], r['estimator']): r
            for r in bp.summarize(runs)['runs']}
    assert rows['hotset', 'boot', 'badis']['vm_over'] == 1.25
    assert rows['hotset', 'boot', 'badis']['twin']
    assert rows['hotset', 'loaded', 'badis']['vm_over'] == 2.0
    assert not rows['hotset', 'loaded', 'badis']['twin']


def test_oracle_of_a_fast_moving_hot_set_is_the_whole_step():
    # 40 of 160 MiB moving every 3.75 s: 10.7 MiB/s read back at the
    # window's size, far above the swap-in bound
    pattern, steps = workloads.pattern_suite(160, 30.0)['hotset']
    truth = bp.oracle_truth(steps, pattern, BASE)
    assert truth('MEMWORK step=0 wss_mib=160 pass=1\n') == BASE + 160 * MIB


def test_size_options_are_checked_and_reported(tmp_path, capsys):
    import pytest
    # a guest that cannot hold its data and base: refused, not booted
    with pytest.raises(SystemExit):
        bp.main(['--booked-mib', '200', '--data-mib', '160',
                 '--out', str(tmp_path)])
    assert '--booked-mib at least' in capsys.readouterr().err
    # the report says the size its runs had
    (tmp_path / 'patterns.jsonl').write_text(
        '{"pattern": "zipf0.8", "start": "boot", "estimator": "none", '
        '"ops": 100, "saved_pct": 0.0, "seconds": 30}\n')
    try:
        bp.main(['--report-only', '--booked-mib', '512', '--data-mib',
                 '320', '--out', str(tmp_path)])
    finally:
        bp.set_size(256, 160)
    head = (tmp_path / 'patterns.md').read_text().splitlines()[2]
    assert '512 MiB TCG guests, 320 MiB of data' in head


def test_pin_needs_twins(tmp_path, capsys):
    import pytest
    with pytest.raises(SystemExit):
        bp.main(['--pin', '--out', str(tmp_path)])
    assert 'they need --twin' in capsys.readouterr().err


def test_settled_errors_are_the_second_half_of_the_run():
    # a first descent 100 MiB over the truth, then 4 MiB over: the whole
    # run's S_more carries the descent, the second half does not
    mib = 1024
    rows = [{'t': float(t), 'truth_kb': 100 * mib,
             'balloon_kb': 256 * mib,
             'badis': (200 if t < 10 else 104) * mib}
            for t in range(40)]
    run = dict(_run('new', 800), rows=rows, booked_kb=256 * mib,
               errors={'allowance': {'S_more': 20.0}})
    got = bp.settled_errors(run)
    assert got['S_more'] == pytest.approx(100 * 4 / 256, abs=0.01)
    assert got['S_less'] is None
    row = bp.summarize([run])['runs'][0]
    assert row['settled_S_more'] == got['S_more']
    assert row['allowance_S_more'] == 20.0
    # no errors (Zipf: no single working set): nothing settled either
    assert bp.settled_errors(dict(run, errors=None)) == {}


def test_packing_figure_with_and_without_the_floor_is_reported():
    # WSS^max_avg 50 MiB under a 200 MiB truth; a floor at the truth in
    # the second half: the table shows the shortfall the floor removes
    mib = 1024
    rows = [{'t': float(t), 'truth_kb': 200 * mib,
             'balloon_kb': 256 * mib, 'badis': 150 * mib,
             'max_avg_kb': 150 * mib,
             'floor_kb': 200 * mib if t >= 20 else 0} for t in range(40)]
    run = dict(_run('badis', 800), rows=rows, booked_kb=256 * mib,
               errors={'allowance': {'S_more': 1.0}})
    got = bp.packing_errors(run)
    assert got['max_avg_2nd']['short'] == round(50 * 100 / 256, 2)
    assert got['floor_2nd']['short'] == 0
    assert got['floor']['polls_short'] == 50.0
    summary = bp.summarize([run, _run('none', 1000)])
    text = '\n'.join(bp.packing_table(summary['runs']))
    assert '| hotset | boot | badis | 19.5 / 0.0 (100 %) | ' \
        '19.5 / 0.0 (100 %) | 9.8 / 0.0 (50 %) | 0.0 / 0.0 (0 %) |' in text
    # runs recorded before the figures were: no table
    old = [dict(r) for r in rows]
    for r in old:
        del r['max_avg_kb'], r['floor_kb']
    assert bp.packing_errors(dict(run, rows=old)) == {}
    assert bp.packing_table(bp.summarize([dict(run, rows=old)])['runs']) \
        == []


def test_an_unknown_pattern_is_refused_before_any_guest(capsys):
    with pytest.raises(SystemExit) as e:
        bp.main(['--patterns', 'load_idle,zipf9', '--out', '/nonexistent'])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert 'unknown pattern(s) zipf9' in err and 'hotset_slow' in err


def test_held_out_patterns_have_an_oracle_where_defined():
    assert bp.has_oracle('phases_up') and bp.has_oracle('hotset_slow')
    assert not bp.has_oracle('zipf1.0')


def test_a_program_run_records_its_progress_per_batch():
    log = ('SQLITE load rows=24000 used_kb=107300 t=20.5\n'
           'SQLITE get lookups=2000 s=0.046 t=21.0\n'
           'GUESTSTAT t=21.2 memfree_kb=1\n'
           'SQLITE get lookups=2000 s=0.05 t=21.75\n'
           'SQLITE done lookups=4000 t=21.8\n')
    sqlite = bp.PROGRAMS['sqlite']
    assert sqlite.progress(log) == [[21.0, None, 2000], [21.75, None, 4000]]
    assert int(sqlite.done.search(log).group(1)) == 4000
    # a run whose sqlite3 failed says "stopped", not "done": no count
    assert not sqlite.done.search(log.replace('done', 'stopped'))
    redis = bp.PROGRAMS['redis']
    assert redis.progress('REDIS get requests=2000 rps=1.5 t=9.5\n') == [
        [9.5, None, 2000]]
    assert [float(x) for x in bp._BATCH_SERVICE.findall(log)] == [0.046,
                                                                  0.05]
    assert int(bp._PROGRAM_USED.search(log).group(1)) == 107300
    assert 'memmut.sqlite_skew=16' in bp.PROGRAMS['sqlite16'].cmdline(30)
    paced = bp.PROGRAMS['sqlite16_paced'].cmdline(30).split()
    assert 'memmut.sqlite_pause_ms=100' in paced
    assert 'memmut.sqlite_batch=200' in paced
