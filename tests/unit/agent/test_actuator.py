"""Balloon actuation: ordering, no overcommit, rate limit, failures."""

import logging

import pytest

from memmut.agent.mutualization import actuator
from memmut.agent.mutualization import algorithm1 as mut
from memmut.agent.mutualization import books as bookmod
from memmut.virt import driver as virt_driver
from tests.unit.agent.balloon_host import BalloonHost

MiB = 1024


class Clock:
    def __init__(self, t=1000.0):
        self.t = t

    def __call__(self):
        return self.t

    def sleep(self, s):
        self.t += s


def setup(release_mib=None, budget_mib=768, step=1.0, reclaim_wait=2.0):
    host = BalloonHost()
    host.add('idle', 384, 256, release_mib=release_mib)
    host.add('grow', 384, 256)
    host.add('flat', 384, 256)
    books = bookmod.Books(budget_mib * MiB + 512 * MiB, 512 * MiB)
    for g in host.guests.values():
        books.add_vm(g.uuid, 256 * MiB, g.actual_kb, g.booked_kb)
    clock = Clock()
    act = actuator.Actuator(host, books, max_step_fraction=step,
                            round_interval=10.0, reclaim_wait=reclaim_wait,
                            settle_timeout=30.0, clock=clock,
                            sleep=clock.sleep, poll_interval=0.5)
    return host, books, act, clock


def plan_for(books, wss_mib, policy='equal'):
    vms = [mut.VMDemand(u, a.init_kb, a.alloc_kb, wss_mib[u] * MiB,
                        a.booked_kb, 64 * MiB)
           for u, a in books.vms.items()]
    return mut.distribute(vms, books.pool_kb, policy)


def test_reclaims_are_issued_before_any_grant_and_books_balance():
    host, books, act, clock = setup()
    plan = plan_for(books, {'idle': 100, 'grow': 380, 'flat': 200})
    actions = act.apply(plan)
    kinds = [a.kind for a in actions]
    assert kinds == sorted(kinds, key=lambda k: k != mut.MOVE_RECLAIM)
    assert [c[0] for c in host.calls][:2] == ['idle', 'flat']
    assert host.calls[-1] == ('grow', 380 * MiB)
    assert all(a.ok for a in actions)
    books.check()
    assert books.vms['grow'].alloc_kb == 380 * MiB
    assert books.vms['idle'].alloc_kb == 100 * MiB
    assert books.pool_kb == (768 - 380 - 100 - 200) * MiB
    assert books.vms['grow'].role == 'client'
    assert books.vms['idle'].role == 'server'


def test_memory_not_yet_released_is_never_granted():
    # The idle guest frees only 40 MiB per look: after the 2 s wait
    # (4 looks + the first) it has released 160 of the 156 MiB... make it
    # slower: 20 MiB per look.
    host, books, act, clock = setup(release_mib=20)
    plan = plan_for(books, {'idle': 100, 'grow': 384, 'flat': 256})
    actions = act.apply(plan)
    books.check()
    idle = host.guests['idle']
    # the books count the idle VM at what it still holds
    assert books.vms['idle'].alloc_kb == idle.actual_kb > 100 * MiB
    released = 256 * MiB - idle.actual_kb
    grant = [a for a in actions if a.kind == mut.MOVE_GRANT][0]
    assert grant.amount_kb == released
    assert 'not yet released' in grant.reason
    # physical view: what the guests may use never exceeds the budget
    used = sum(max(g.actual_kb, g.target_kb) for g in host.guests.values())
    assert used <= books.budget_kb
    # later rounds finish the move; the target stays where it was set
    for _ in range(10):
        clock.t += 10
        act.reconcile(host.list_vms(), clock())
        books.check()
        act.apply(plan_for(books, {'idle': 100, 'grow': 384, 'flat': 256}))
        books.check()
        used = sum(max(g.actual_kb, g.target_kb)
                   for g in host.guests.values())
        assert used <= books.budget_kb
    assert books.vms['grow'].alloc_kb == 384 * MiB
    assert idle.target_kb == 100 * MiB
    assert all(kib >= 100 * MiB for u, kib in host.calls if u == 'idle')


def test_rate_limit_per_round_interval():
    host, books, act, clock = setup(step=0.25)          # 96 MiB per 10 s
    wss = {'idle': 64, 'grow': 384, 'flat': 256}
    first = act.apply(plan_for(books, wss))
    reclaim = [a for a in first if a.kind == mut.MOVE_RECLAIM][0]
    assert reclaim.amount_kb == 96 * MiB and 'rate-limited' in reclaim.reason
    grant = [a for a in first if a.kind == mut.MOVE_GRANT][0]
    assert grant.amount_kb == 96 * MiB
    clock.t += 5                                        # half an interval
    act.reconcile(host.list_vms(), clock())
    second = act.apply(plan_for(books, wss))
    assert {(a.uuid, a.amount_kb) for a in second} == {
        ('idle', 48 * MiB), ('grow', 32 * MiB)}         # grow is done
    clock.t += 1                                        # a tenth
    act.reconcile(host.list_vms(), clock())
    third = act.apply(plan_for(books, wss))
    assert [(a.uuid, a.amount_kb) for a in third] == [('idle', 9830 - 2)]
    clock.t += 100
    act.reconcile(host.list_vms(), clock())
    fourth = act.apply(plan_for(books, wss))
    assert [a.amount_kb for a in fourth] == [112 * MiB - 9828 - 64 * MiB]
    assert books.vms['grow'].alloc_kb == 384 * MiB
    assert books.vms['idle'].alloc_kb == 64 * MiB
    books.check()


@pytest.mark.parametrize('error', [
    virt_driver.HypervisorUnavailable('libvirt went away'),
    virt_driver.VMNotFound('gone'),
    RuntimeError('driver bug')])
def test_failed_grant_is_rolled_back(error, caplog):
    host, books, act, clock = setup()
    host.fail['grow'] = error
    act.reconcile(host.list_vms(), clock())     # learns the VMs' names
    with caplog.at_level(logging.WARNING):
        actions = act.apply(plan_for(books, {'idle': 100, 'grow': 380,
                                             'flat': 256}))
    grant = [a for a in actions if a.kind == mut.MOVE_GRANT][0]
    assert not grant.ok and type(error).__name__ in grant.error
    books.check()
    assert books.vms['grow'].alloc_kb == 256 * MiB
    # the reclaimed memory is in the pool, not lost
    assert books.pool_kb == 156 * MiB
    assert 'vm-grow (grow)' in caplog.text and 'rolled back' in caplog.text
    # next round it is granted
    clock.t += 20
    act.reconcile(host.list_vms(), clock())
    act.apply(plan_for(books, {'idle': 100, 'grow': 380, 'flat': 256}))
    assert host.guests['grow'].target_kb == 380 * MiB
    books.check()


def test_failed_reclaim_books_nothing_and_grants_nothing():
    host, books, act, clock = setup()
    host.fail['idle'] = virt_driver.HypervisorUnavailable('down')
    actions = act.apply(plan_for(books, {'idle': 100, 'grow': 380,
                                         'flat': 256}))
    assert [(a.kind, a.ok) for a in actions] == [('reclaim', False)]
    assert books.vms['idle'].alloc_kb == 256 * MiB
    assert books.pool_kb == 0
    assert host.guests['grow'].target_kb == 256 * MiB
    books.check()


def test_reconcile_adopts_outside_changes_and_expired_targets(caplog):
    host, books, act, clock = setup(release_mib=0)      # never releases
    act.apply(plan_for(books, {'idle': 100, 'grow': 256, 'flat': 256}))
    assert books.vms['idle'].alloc_kb == 256 * MiB      # still held
    clock.t += 31                                       # settle_timeout
    host.guests['flat'].target_kb = 200 * MiB           # outside memmut
    with caplog.at_level(logging.WARNING):
        resyncs, refused = act.reconcile(host.list_vms(), clock())
    assert not refused
    assert 'did not reach its balloon target' in caplog.text
    assert [(r.uuid, r.to_kb) for r in resyncs] == [('flat', 200 * MiB)]
    assert books.vms['idle'].alloc_kb == 256 * MiB
    assert books.pool_kb == 56 * MiB
    books.check()


def test_outside_growth_beyond_budget_is_refused_not_booked():
    host, books, act, clock = setup()
    host.guests['flat'].target_kb = 300 * MiB           # budget is full
    resyncs, refused = act.reconcile(host.list_vms(), clock())
    assert refused == ['flat'] and not resyncs
    assert books.vms['flat'].alloc_kb == 256 * MiB
    books.check()


def _odd_demands(books):
    return [mut.VMDemand(u, a.init_kb, a.alloc_kb,
                         {'idle': 100 * MiB + 3, 'grow': 300 * MiB + 1,
                          'flat': 256 * MiB}[u], a.booked_kb)
            for u, a in books.vms.items()]


def test_targets_are_whole_pages():
    # Algorithm 1 plans whole pages (a demand 1 KiB into a page gets the
    # page): the actuator sets exactly the planned targets.
    host, books, act, clock = setup()
    plan = mut.distribute(_odd_demands(books), books.pool_kb)
    act.apply(plan)
    assert all(kib % 4 == 0 for _, kib in host.calls)
    assert host.guests['idle'].target_kb == 100 * MiB + 4
    assert host.guests['grow'].target_kb == 300 * MiB + 4
    assert sorted(host.calls) == sorted((m.uuid, m.to_kb)
                                        for m in plan.moves)
    books.check()


def test_a_plan_off_page_boundaries_is_rounded_safely():
    # A plan in KiB (page_kb=1, as a planner that ignores pages would
    # make): reclaims round up, grants down, so rounding never takes
    # memory the plan did not free.
    host, books, act, clock = setup()
    act.apply(mut.distribute(_odd_demands(books), books.pool_kb, page_kb=1))
    assert all(kib % 4 == 0 for _, kib in host.calls)
    assert host.guests['idle'].target_kb == 100 * MiB + 4
    assert host.guests['grow'].target_kb == 300 * MiB
    books.check()


def test_grants_within_mem_init_come_before_borrowing():
    host, books, act, clock = setup(release_mib=20, reclaim_wait=0.0)
    # grow gave memory earlier; now both it and flat want more
    books.reclaim('grow', 100 * MiB)
    host.guests['grow'].target_kb = host.guests['grow'].actual_kb = (
        156 * MiB)
    books.reclaim('idle', 40 * MiB)
    host.guests['idle'].target_kb = host.guests['idle'].actual_kb = (
        216 * MiB)
    # pool 140 MiB: grow wants back to 256 (guarantee), flat beyond init
    vms = [mut.VMDemand('idle', 256 * MiB, 216 * MiB, 216 * MiB,
                        384 * MiB),
           mut.VMDemand('grow', 256 * MiB, 156 * MiB, 256 * MiB,
                        384 * MiB),
           mut.VMDemand('flat', 256 * MiB, 256 * MiB, 384 * MiB,
                        384 * MiB)]
    plan = mut.distribute(vms, books.pool_kb, 'equal')
    assert plan.allocations['grow'] == 256 * MiB
    books.reclaim('idle', 0)
    # the pool shrinks (as if exported) before the grants
    books.export('x', 120 * MiB)
    actions = act.apply(plan)
    by = {a.uuid: a for a in actions}
    assert by['grow'].to_kb == 176 * MiB        # all 20 MiB left
    assert 'flat' not in by
    books.check()
