"""The controller's migration slots: a limit in all and per source host,
first come first served among those whose host is free."""

import threading
import time

import pytest

from memmut.globals import migration_slots


def waiter(slots, host, got, stop=None):
    def run():
        got.append((host, slots.acquire(host, stop, poll=0.01)))
    t = threading.Thread(target=run)
    t.start()
    return t


def settle():
    time.sleep(0.1)


def test_limits_in_all_and_per_source():
    slots = migration_slots.MigrationSlots(2, per_source=1)
    assert slots.acquire('h1')
    got = []
    t1 = waiter(slots, 'h1', got)       # h1 busy: waits
    settle()
    assert got == []
    assert slots.acquire('h2')          # a free host goes past it
    t3 = waiter(slots, 'h3', got)       # two running: waits
    settle()
    assert got == [] and slots.running == 2 and slots.peak == 2
    slots.release('h2')
    t3.join(2)
    # h3 took the slot: the h1 waiter's host was still busy
    assert got == [('h3', True)]
    slots.release('h1')
    slots.release('h3')
    t1.join(2)
    assert got[-1] == ('h1', True) and slots.running == 1


def test_the_first_waiter_with_a_free_host_goes_first():
    slots = migration_slots.MigrationSlots(1, per_source=0)
    assert slots.acquire('h1')
    got = []
    threads = []
    for host in ('a', 'b', 'c'):
        threads.append(waiter(slots, host, got))
        settle()
    for _ in range(3):
        slots.release(got[-1][0] if got else 'h1')
        settle()
    for t in threads:
        t.join(2)
    assert [h for h, _ in got] == ['a', 'b', 'c']


def test_a_waiter_gives_up_when_stopped():
    slots = migration_slots.MigrationSlots(1)
    assert slots.acquire('h1')
    stop = threading.Event()
    got = []
    t = waiter(slots, 'h2', got, stop)
    settle()
    stop.set()
    t.join(2)
    assert got == [('h2', False)] and slots.running == 1
    slots.release('h1')
    assert slots.acquire('h2') and slots.running == 1


def test_bad_limits():
    with pytest.raises(ValueError):
        migration_slots.MigrationSlots(0)
    with pytest.raises(ValueError):
        migration_slots.MigrationSlots(1, per_source=-1)
