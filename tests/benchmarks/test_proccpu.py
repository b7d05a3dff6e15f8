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
