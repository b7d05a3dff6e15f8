"""Group commit of reports (memmut.globals.report_writer)."""

import threading

import pytest

from memmut.globals import report_writer


class Store:
    """store_many / store_one that record their calls; ``gate`` holds the
    first batch until released so that the next calls queue up."""

    def __init__(self, fail=()):
        self.batches = []
        self.singles = []
        self.fail = set(fail)
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Event()
        self.known = set()

    def many(self, reports):
        self.entered.set()
        self.gate.wait(10)
        self.batches.append(list(reports))
        if self.fail & set(reports):
            raise RuntimeError('refused')
        out = []
        for r in reports:
            out.append(r not in self.known)
            self.known.add(r)
        return out

    def one(self, report):
        self.singles.append(report)
        if report in self.fail:
            raise RuntimeError('refused %s' % report)
        new = report not in self.known
        self.known.add(report)
        return new


def _calls(writer, reports):
    results = {}

    def call(r):
        try:
            results[r] = writer.store(r)
        except Exception as e:
            results[r] = e
    threads = [threading.Thread(target=call, args=(r,)) for r in reports]
    for t in threads:
        t.start()
    return threads, results


def _wait_queued(w, n):
    for _ in range(1000):
        if len(w._queue) == n:
            return
        threading.Event().wait(0.01)
    raise AssertionError('%d calls never queued' % n)


def _behind_a_held_batch(store, max_batch, first, rest):
    """Store ``first`` while the store holds its batch, queue ``rest``
    behind it, then let it go: the results of both calls' lists."""
    w = report_writer.ReportWriter(store.many, store.one, max_batch)
    w.start()
    try:
        store.gate.clear()
        threads, res1 = _calls(w, first)
        assert store.entered.wait(10)
        more, res2 = _calls(w, rest)
        _wait_queued(w, len(rest))
        store.gate.set()
        for t in threads + more:
            t.join(10)
    finally:
        w.stop()
    return w, res1, res2


def test_reports_received_while_a_batch_is_written_share_the_next():
    store = Store()
    # 20 calls arrive while r0's batch is being written
    w, res1, res2 = _behind_a_held_batch(
        store, 64, ['r0'], ['r%d' % i for i in range(1, 21)])
    assert [len(b) for b in store.batches] == [1, 20]
    assert res1 == {'r0': True}
    assert set(res2.values()) == {True} and len(res2) == 20
    assert (w.batches, w.reports) == (2, 21)
    assert store.singles == []


def test_a_batch_is_at_most_max_batch_and_answers_in_order():
    store = Store()
    _, _, res = _behind_a_held_batch(
        store, 8, ['x'], ['r%d' % i for i in range(20)] + ['x'])
    assert max(len(b) for b in store.batches) == 8
    assert sum(len(b) for b in store.batches) == 22
    # the second 'x' was known: False, as the database would say
    assert res['x'] is False


def test_a_refused_report_fails_its_own_call_only():
    store = Store(fail={'bad'})
    _, _, res = _behind_a_held_batch(store, 64, ['r0'], ['a', 'bad', 'b'])
    assert res['a'] is True and res['b'] is True
    assert isinstance(res['bad'], RuntimeError)
    assert sorted(store.singles) == ['a', 'b', 'bad']


def test_an_error_of_a_batch_of_one_reaches_its_caller():
    store = Store(fail={'bad'})
    w = report_writer.ReportWriter(store.many, store.one, 64)
    w.start()
    try:
        with pytest.raises(RuntimeError):
            w.store('bad')
        assert w.store('good') is True
    finally:
        w.stop()
    assert store.singles == []


def test_stop_stores_what_is_queued_and_later_calls_store_directly():
    store = Store()
    w = report_writer.ReportWriter(store.many, store.one, 64)
    w.start()
    store.gate.clear()
    first, _ = _calls(w, ['r0'])
    assert store.entered.wait(10)
    rest, res = _calls(w, ['r1', 'r2'])
    _wait_queued(w, 2)
    stopper = threading.Thread(target=w.stop)
    stopper.start()
    store.gate.set()
    stopper.join(10)
    for t in first + rest:
        t.join(10)
    assert res == {'r1': True, 'r2': True} and not w.running
    assert w.store('r3') is True and store.singles == ['r3']


def test_a_batch_size_of_one_runs_no_thread():
    store = Store()
    w = report_writer.ReportWriter(store.many, store.one, 1)
    w.start()
    assert not w.running
    assert w.store('r') is True and store.singles == ['r']
    assert store.batches == []
    with pytest.raises(ValueError):
        report_writer.ReportWriter(store.many, store.one, 0)


def test_several_writers_write_batches_at_once():
    """Two writers: a second batch is written while the first is held."""
    inside = []
    both = threading.Barrier(2, timeout=10)
    lock = threading.Lock()

    def many(reports):
        with lock:
            inside.append(list(reports))
        both.wait()          # fails unless two batches are inside at once
        return [True] * len(reports)

    w = report_writer.ReportWriter(many, lambda r: True, 64, writers=2)
    w.start()
    try:
        first, res = _calls(w, ['a'])
        for _ in range(1000):
            if inside:
                break
            threading.Event().wait(0.01)
        second, res2 = _calls(w, ['b'])
        for t in first + second:
            t.join(10)
    finally:
        w.stop()
    assert res == {'a': True} and res2 == {'b': True}
    assert sorted(map(len, inside)) == [1, 1] and w.batches == 2
    with pytest.raises(ValueError):
        report_writer.ReportWriter(many, lambda r: True, 64, writers=0)


def test_sqlite_gets_one_writer(db):
    assert report_writer.writers_for(db, 2) == 1

    class Other:
        class engine:
            class dialect:
                name = 'postgresql'
    assert report_writer.writers_for(Other, 3) == 3


def test_a_call_the_writer_could_not_answer_raises():
    def many(reports):
        return []           # answers none of them (a bug): never hang

    w = report_writer.ReportWriter(many, lambda r: True, 64)
    w.start()
    try:
        with pytest.raises(RuntimeError):
            w.store('r')
    finally:
        w.stop()
