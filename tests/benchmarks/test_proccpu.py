"""proccpu: CPU seconds of processes and threads from /proc."""

import os

import pytest

from tests.benchmarks import proccpu


def test_parse_stat_counts_fields_after_the_last_parenthesis():
    tick = proccpu.TICK
    line = ('42 (a (b) c) S 1 42 42 0 -1 4194560 100 0 0 0 %d %d 0 0 20 0 '
            '1 0 5 0 0' % (3 * tick, 2 * tick))
    comm, user, system = proccpu.parse_stat(line)
    assert comm == 'a (b) c'
    assert (user, system) == (pytest.approx(3.0), pytest.approx(2.0))


def test_this_process_uses_cpu_and_a_gone_one_has_none(tmp_path):
    before = proccpu.cpu_seconds(os.getpid())
    sum(i * i for i in range(2_000_000))
    assert proccpu.cpu_seconds(os.getpid()) > before
    threads = proccpu.thread_seconds(os.getpid())
    assert threads and all(v >= 0 for v in threads.values())
    assert proccpu.cpu_seconds(1, root=str(tmp_path)) is None
    assert proccpu.thread_seconds(1, root=str(tmp_path)) == {}


def test_delta_and_per_gib():
    after = {'a': 1.5, 'b': 2.0, 'c': 0.25}
    assert proccpu.delta({'a': 1.0, 'b': 2.0}, after) == {'a': 0.5,
                                                          'c': 0.25}
    assert proccpu.per_gib(2.0, 512 << 20) == pytest.approx(4.0)
    assert proccpu.per_gib(2.0, 0) is None
    assert proccpu.per_gib(None, 1) is None


def _fake_proc(root, procs, stat_line=None):
    """procs: {pid: (ppid, utime, stime, cutime, cstime) in ticks}."""
    for pid, (ppid, *ticks) in procs.items():
        d = root / str(pid)
        d.mkdir()
        (d / 'stat').write_text(
            '%d (x y) S %d %d %d 0 -1 0 0 0 0 0 %d %d %d %d 20 0 1 0\n'
            % (pid, ppid, pid, pid, *ticks))
    (root / 'self').mkdir()
    if stat_line:
        (root / 'stat').write_text(stat_line)


def test_tree_seconds_sums_descendants_and_what_they_reaped(tmp_path):
    t = int(proccpu.TICK)
    _fake_proc(tmp_path, {10: (1, t, t, 2 * t, 0),     # reaped 2 s
                          11: (10, t, 0, 0, 0), 12: (11, 0, t, 0, 0),
                          13: (1, 5 * t, 0, 0, 0)})     # not a descendant
    assert proccpu.tree_seconds(10, root=str(tmp_path)) == \
        pytest.approx(6.0)
    assert proccpu.tree_seconds(11, root=str(tmp_path)) == \
        pytest.approx(2.0)
    assert proccpu.tree_seconds(99, root=str(tmp_path)) is None
    assert proccpu.tree_seconds(os.getpid()) > 0


def test_machine_busy_seconds_leaves_idle_and_iowait_out(tmp_path):
    t = int(proccpu.TICK)
    _fake_proc(tmp_path, {}, 'cpu  %d %d %d %d %d %d %d %d 0 0\n' % (
        t, t, t, 100 * t, 50 * t, t, t, t))
    assert proccpu.machine_busy_seconds(str(tmp_path)) == \
        pytest.approx(6.0)
