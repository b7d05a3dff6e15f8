"""The consolidation lease on a real PostgreSQL: controllers racing for it
(separate engines, so separate connections and transactions) never both
hold it, and never both run a round."""

import threading
import time

import pytest

from memmut.db import api as db_api
from memmut.db import migration
from memmut.globals import leader
from memmut.globals import rounds
from tests.unit.conftest import FakeClock
from tests.unit.globals import test_rounds as tr

CONTROLLERS = 8


@pytest.fixture
def dbs(postgres_url):
    migration.upgrade(postgres_url)
    clock = FakeClock()
    out = [db_api.Database(postgres_url, clock=clock)
           for _ in range(CONTROLLERS)]
    yield clock, out
    for d in out:
        d.close()


def race(n, action):
    """``action(i)`` in n threads released together; the results."""
    barrier = threading.Barrier(n)
    results = [None] * n

    def run(i):
        barrier.wait()
        results[i] = action(i)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def test_exactly_one_controller_gets_the_lease(dbs):
    _, databases = dbs
    assert databases[0].engine.dialect.name == 'postgresql'
    for attempt in range(10):
        name = 'race-%d' % attempt      # fresh row: the INSERT race
        got = race(CONTROLLERS, lambda i: databases[i].acquire_lease(
            name, 'c%d' % i, 60.0, now=1000.0))
        assert sum(got) == 1, got
        # Expired row: the conditional UPDATE race.
        got = race(CONTROLLERS, lambda i: databases[i].acquire_lease(
            name, 'c%d' % i, 60.0, now=2000.0))
        assert sum(got) == 1, got


class Counting(rounds.RoundRunner):
    """Counts the rounds planning at the same time (in real time)."""
    lock = threading.Lock()
    inside = 0
    most = 0

    def _plan_and_execute(self, *args):
        cls = Counting
        with cls.lock:
            cls.inside += 1
            cls.most = max(cls.most, cls.inside)
        try:
            time.sleep(0.2)
            return super()._plan_and_execute(*args)
        finally:
            with cls.lock:
                cls.inside -= 1


def test_two_controllers_racing_never_both_run_a_round(dbs):
    clock, databases = dbs
    tr.underloaded_pair(databases[0], clock)
    runners = [Counting(
        tr.round_conf(), databases[i], clock=clock,
        leader=leader.Leadership(databases[i], 'ctl-%d' % i, 900.0))
        for i in range(2)]
    winners = []
    for _ in range(5):
        results = race(2, lambda i: runners[i].run(dry_run=True))
        ran = [i for i, r in enumerate(results) if r.status != 'busy']
        assert len(ran) == 1, [r.reason for r in results]
        winners.append(ran[0])
        # The leader gives it up (it stops): the next race is open.
        runners[ran[0]].release()
    done = databases[0].list_rounds()
    assert len(done) == 5
    assert all(r.status == 'completed' for r in done)
    assert Counting.most == 1


def test_a_restarted_controller_takes_its_dead_lease_at_once(dbs):
    # A controller process takes the lease and is killed (SIGKILL: it
    # cannot give it up). While it runs nobody else gets the lease; once it
    # is gone, the controllers restarted on its host race for it and
    # exactly one takes it at once, long before the expiry.
    from tests.harness import lease_holder
    clock, databases = dbs
    proc, theirs = lease_holder.start(databases[0].url, 'node-1', clock())
    try:
        restarted = [leader.Leadership(databases[i],
                                       leader.holder_id('node-1'), 900.0,
                                       clock=clock)
                     for i in range(CONTROLLERS)]
        assert not any(race(CONTROLLERS, lambda i: restarted[i].acquire()))
        assert databases[0].get_lease(leader.CONSOLIDATION).holder == theirs
        proc.kill()
        proc.wait()
        clock.advance(1.0)          # far within the 900 s lease
        got = race(CONTROLLERS, lambda i: restarted[i].acquire())
        assert sum(got) == 1, got
        winner = restarted[got.index(True)]
        lease = databases[0].get_lease(leader.CONSOLIDATION)
        assert (lease.holder, lease.acquired_at) == (winner.holder, clock())
        # the winner renews it; the others stay out
        assert winner.acquire()
        assert sum(race(CONTROLLERS,
                        lambda i: restarted[i].acquire())) == 1
    finally:
        proc.kill()
        proc.wait()


def test_the_migration_budget_is_counted_on_postgresql(dbs):
    # The unit case (tests/unit/globals/test_rounds.py) on PostgreSQL:
    # the budget's count of the window's migrations joins migrations to
    # their rounds, skipping dry runs.
    clock, (db, *_) = dbs
    tr.test_migration_budget_is_counted_from_the_database(db, clock)
