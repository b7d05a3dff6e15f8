"""tests/benchmarks/discipline.py: statistics against known values."""

import json
import math
import os
import signal
import threading
import time

import pytest

from tests.benchmarks import discipline


@pytest.mark.parametrize('df, t', [(1, 12.7062), (2, 4.3027), (4, 2.7764),
                                   (9, 2.2622), (29, 2.0452),
                                   (50, 2.0086), (100, 1.9840),
                                   (1000, 1.9623)])
def test_t_quantile_known_values(df, t):
    assert discipline.t_quantile(df) == pytest.approx(t, abs=1.5e-3)


def test_t_quantile_needs_a_degree_of_freedom():
    with pytest.raises(ValueError):
        discipline.t_quantile(0)


def test_summarize_known_interval():
    # 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample sd sqrt(32/7)
    s = discipline.summarize([2, 4, 4, 4, 5, 5, 7, 9])
    sd = math.sqrt(32 / 7.0)
    assert s['n'] == 8 and s['mean'] == 5.0
    assert s['sd'] == pytest.approx(sd)
    assert s['half_width'] == pytest.approx(2.3646 * sd / math.sqrt(8))
    assert s['low'] == pytest.approx(5 - s['half_width'])
    assert s['high'] == pytest.approx(5 + s['half_width'])
    # three values 1, 2, 3: sd 1, t(2) = 4.3027 -> 4.3027 / sqrt(3)
    s = discipline.summarize([1, 2, 3])
    assert s['half_width'] == pytest.approx(2.48417, abs=1e-4)


def test_summarize_one_value_and_missing_values():
    s = discipline.summarize([3.0, None])
    assert s['n'] == 1 and s['mean'] == 3.0 and s['half_width'] is None
    with pytest.raises(ValueError):
        discipline.summarize([None])


def test_fmt():
    s = discipline.summarize([1, 2, 3])
    assert discipline.fmt(s, '.2f') == '2.00 ± 2.48 (n=3)'
    assert discipline.fmt(s, '.0f', scale=100, unit=' %') == \
        '200 ± 248 % (n=3)'
    assert discipline.fmt(discipline.summarize([1]), '.1f') == \
        '1.0 ± ? (n=1)'


def test_goal_counts_only_if_the_whole_interval_is_inside():
    s = discipline.summarize([2.6, 2.7, 2.8])      # 2.7 ± 0.248
    assert discipline.goal_met(s, low=2.4)
    assert not discipline.goal_met(s, low=2.5)     # mean inside, low not
    assert discipline.goal_met(s, low=2.0, high=3.0)
    assert not discipline.goal_met(s, high=2.9)
    assert not discipline.goal_met(discipline.summarize([9.0]), low=1)


def test_case_order_is_seeded_and_complete():
    a = discipline.case_order(['x', 'y', 'z'], repeats=4, seed=7)
    b = discipline.case_order(['x', 'y', 'z'], repeats=4, seed=7)
    c = discipline.case_order(['x', 'y', 'z'], repeats=4, seed=8)
    assert a == b and a != c
    assert sorted(a) == sorted((k, r) for k in 'xyz' for r in range(4))


def test_record_has_versions_load_and_order():
    rec = discipline.Record(seed=3, repeats=2)
    rec.order(['a', 'b'])
    rec.finish()
    d = rec.as_dict()
    assert d['seed'] == 3 and len(d['case_order']['cases']) == 4
    v = d['versions']
    for key in ('python', 'memmut_commit', 'qemu', 'libvirt', 'kernel',
                'nbdkit', 'fio', 'memstore_commit'):
        assert key in v
    assert v['python'].count('.') == 2
    assert d['load_before'] is None or len(d['load_before']) == 3
    assert d['load_after'] is None or len(d['load_after']) == 3


def test_markdown_table():
    t = discipline.markdown_table(['a', 'b'], [[1, 2]])
    assert t.splitlines() == ['| a | b |', '|---|---|', '| 1 | 2 |']


def test_blocked_order_shuffles_inside_each_repeat():
    a = discipline.blocked_order(['x', 'y', 'z'], repeats=4, seed=7)
    assert a == discipline.blocked_order(['x', 'y', 'z'], repeats=4, seed=7)
    assert sorted(a) == sorted((k, r) for k in 'xyz' for r in range(4))
    # repeat by repeat: the first three runs are repeat 0, and so on
    assert [r for _, r in a] == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    # the order changes between repeats (seed 7 gives at least two)
    blocks = {tuple(c for c, r in a if r == i) for i in range(4)}
    assert len(blocks) > 1
    many = discipline.blocked_order(list(range(5)), repeats=40, seed=1)
    firsts = {c for c, r in many[::5]}
    assert firsts == set(range(5))         # no case is always first


def test_paired_ratio_known_interval():
    # ratios 2, 4, 8: logs ln2 * (1, 2, 3), mean 2 ln2, sd ln2
    s = discipline.paired_ratio([2, 8, 24], [1, 2, 3])
    assert s['values'] == [2.0, 4.0, 8.0]
    assert s['mean'] == pytest.approx(4.0)
    hw = 4.3027 * math.log(2) / math.sqrt(3)
    assert s['half_width'] == pytest.approx(hw, abs=1e-4)
    assert s['low'] == pytest.approx(4.0 * math.exp(-hw), rel=1e-4)
    assert s['high'] == pytest.approx(4.0 * math.exp(hw), rel=1e-4)
    # the inverse ratio gets the mirrored interval
    inv = discipline.paired_ratio([1, 2, 3], [2, 8, 24])
    assert inv['mean'] == pytest.approx(0.25)
    assert inv['low'] == pytest.approx(1 / s['high'])
    assert inv['high'] == pytest.approx(1 / s['low'])


def test_paired_ratio_equal_ratios_and_missing_pairs():
    s = discipline.paired_ratio([3, 6, None, 9], [1, 2, 5, 3])
    assert s['n'] == 3 and s['mean'] == pytest.approx(3.0)
    assert s['low'] == pytest.approx(3.0) and s['high'] == pytest.approx(3.0)
    one = discipline.paired_ratio([3], [2])
    assert one['mean'] == 1.5 and one['low'] is None
    with pytest.raises(ValueError):
        discipline.paired_ratio([1, 2], [1])
    with pytest.raises(ValueError):
        discipline.paired_ratio([0, 1], [1, 1])


def test_verdict_met_not_met_undecided():
    s = discipline.summarize([2.6, 2.7, 2.8])      # 2.7 ± 0.248
    assert discipline.verdict(s, low=2.4) == 'met'
    assert discipline.verdict(s, low=2.5) == 'undecided'
    assert discipline.verdict(s, low=3.0) == 'not met'
    assert discipline.verdict(s, high=3.0) == 'met'
    assert discipline.verdict(s, high=2.9) == 'undecided'
    assert discipline.verdict(s, high=2.4) == 'not met'
    assert discipline.verdict(discipline.summarize([9.0]), low=1) == \
        'undecided'
    r = discipline.paired_ratio([2, 8, 24], [1, 2, 3])  # 4, [0.71, 22]
    assert discipline.verdict(r, low=0.5) == 'met'
    assert discipline.verdict(r, low=1.0) == 'undecided'
    assert discipline.verdict(r, low=30.0) == 'not met'


def test_combine_verdicts():
    assert discipline.combine_verdicts(['met', 'met']) == 'met'
    assert discipline.combine_verdicts(['met', 'undecided']) == 'undecided'
    assert discipline.combine_verdicts(
        ['undecided', 'not met', 'met']) == 'not met'
    assert discipline.combine_verdicts([]) == 'undecided'


def test_lock_hold_records_the_hold_and_releases(tmp_path):
    import fcntl
    path = str(tmp_path / 'lock')
    holds = []
    with discipline.lock_hold(path, holds, 'r0', pause=0):
        with open(path) as other:
            with pytest.raises(BlockingIOError):
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
    with open(path) as other:        # released: free to take
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
    assert holds[0]['block'] == 'r0' and holds[0]['held_s'] >= 0
    with discipline.lock_hold('', holds):
        pass
    assert len(holds) == 2


def test_write_results_writes_both_files(tmp_path, capsys):
    out = tmp_path / 'new-dir'
    discipline.write_results(str(out), 'x', {'b': 2, 'a': [1]}, '# X\n')
    assert json.loads((out / 'x.json').read_text()) == {'a': [1], 'b': 2}
    assert (out / 'x.md').read_text() == '# X\n'
    assert '# X' in capsys.readouterr().out


def test_closing_lines_give_conditions_note_and_load():
    result = {'conditions': 'quiet machine', 'note': 'TCG only.',
              'discipline': {'load_before': [0.5], 'load_after': [1.5]}}
    lines = discipline.closing_lines(result)
    assert lines[:2] == ['', 'Conditions: quiet machine']
    assert 'TCG only.' in lines
    assert lines[-1] == 'Load average before / after: [0.5] / [1.5].'
    del result['conditions']
    assert not any(x.startswith('Conditions') for x in
                   discipline.closing_lines(result))


def test_within_budget_stops_once_the_budget_is_spent(capsys):
    ticks = iter([0, 1, 2, 11, 12])
    order = [('a', 0), ('b', 0), ('a', 1), ('b', 1)]
    got = list(discipline.within_budget(order, 10,
                                        clock=lambda: next(ticks)))
    assert got == [(0, 'a', 0), (1, 'b', 0)]
    assert 'budget spent: 2 of 4 runs done' in capsys.readouterr().out
    assert list(discipline.within_budget(order, 0)) == \
        [(i, c, r) for i, (c, r) in enumerate(order)]


def test_a_copy_of_the_tree_names_its_commit(tmp_path):
    assert discipline.tree_commit(str(tmp_path)) is None
    (tmp_path / 'COMMIT').write_text('not a commit\n')
    assert discipline.tree_commit(str(tmp_path)) is None
    (tmp_path / 'COMMIT').write_text('ab' * 20 + '\n')
    assert discipline.tree_commit(str(tmp_path)) == 'ab' * 20


def test_ratio_over_cases_takes_each_repeat_geomean_first():
    # two cases, two repeats: repeat 0 is 2 and 0.5 (geometric mean 1),
    # repeat 1 is 4 and 1 (geometric mean 2)
    r = discipline.ratio_over_cases([[2.0, 4.0], [0.5, 1.0]])
    assert r['values'] == pytest.approx([1.0, 2.0])
    assert r['mean'] == pytest.approx(math.sqrt(2.0))
    assert r['n'] == 2 and r['low'] < r['mean'] < r['high']


def test_a_stopped_run_pool_cancels_its_queued_runs():
    # one worker, one run holding it and three queued: a stop (a SIGTERM
    # the benchmark turned into KeyboardInterrupt) must not run the queued
    # three first, as ThreadPoolExecutor's own exit would
    started = []
    release = threading.Event()

    def run(i):
        started.append(i)
        release.wait(5)
        return i

    with pytest.raises(KeyboardInterrupt):
        with discipline.run_pool(1) as pool:
            futs = [pool.submit(run, i) for i in range(4)]
            while not started:
                time.sleep(0.01)
            raise KeyboardInterrupt('SIGTERM')
    release.set()
    futs[0].result(timeout=5)
    assert started == [0]
    assert all(f.cancelled() for f in futs[1:])


def test_a_run_pool_left_normally_waits_for_every_run():
    with discipline.run_pool(2) as pool:
        futs = [pool.submit(time.sleep, 0.05) for _ in range(4)]
    assert all(f.done() and not f.cancelled() for f in futs)


def test_a_stopped_benchmark_says_so_in_one_line(capsys):
    # a real SIGTERM, as a kill or a job timeout sends it
    def main():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as e:
        discipline.run_main(main, 'bench_x')
    assert e.value.code == 130
    err = capsys.readouterr().err
    assert err == ('bench_x: stopped (SIGTERM); the runs finished before '
                   'it are kept in its JSON-lines file\n')
    assert signal.getsignal(signal.SIGTERM) == before
