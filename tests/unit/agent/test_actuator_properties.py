"""The actuator over random rounds (hypothesis): whatever the plans, the
guests' release speed and the failures, the books balance after every step,
never count a VM below what it may be using, and so the guests never hold
more than the budget."""

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from memmut.agent.mutualization import actuator
from memmut.agent.mutualization import algorithm1 as mut
from memmut.agent.mutualization import books as bookmod
from memmut.virt import driver as virt_driver
from tests.unit.agent.balloon_host import BalloonHost

MiB = 1024
BUDGET = 768 * MiB
INIT = 256 * MiB
NAMES = ('a', 'b', 'c')

ERRORS = st.sampled_from([
    None, None, None,
    virt_driver.HypervisorUnavailable('libvirt went away'),
    virt_driver.VMNotFound('gone'),
    virt_driver.InvalidBalloonTarget('refused'),
    RuntimeError('driver bug')])

ROUND = st.fixed_dictionaries({
    'wss_mib': st.tuples(*[st.integers(min_value=0, max_value=384)] * 3),
    'fail': st.tuples(*[ERRORS] * 3),
    'dt': st.sampled_from([0.5, 2.0, 10.0, 40.0]),
    'policy': st.sampled_from(['equal', 'proportional']),
})


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t

    def sleep(self, s):
        self.t += s


def held(host):
    """What each guest may be using: its balloon or a larger target."""
    return {u: max(g.actual_kb, g.target_kb)
            for u, g in host.guests.items()}


@settings(max_examples=150, deadline=None)
@given(st.tuples(*[st.sampled_from([None, 0, 4, 32, 128])] * 3),
       st.sampled_from([0.25, 0.5, 1.0]),
       st.lists(ROUND, min_size=1, max_size=12))
def test_books_and_host_stay_consistent(release, step, rounds):
    host = BalloonHost()
    for name, rel in zip(NAMES, release):
        host.add(name, 384, 256, release_mib=rel)
    books = bookmod.Books(BUDGET + 512 * MiB, 512 * MiB)
    for g in host.guests.values():
        books.add_vm(g.uuid, INIT, g.actual_kb, g.booked_kb)
    clock = Clock()
    act = actuator.Actuator(host, books, max_step_fraction=step,
                            round_interval=10.0, reclaim_wait=2.0,
                            settle_timeout=30.0, clock=clock,
                            sleep=clock.sleep, poll_interval=0.5)

    def check():
        books.check()
        h = held(host)
        for u, kb in h.items():
            assert books.vms[u].alloc_kb >= kb, (u, books.summary(), h)
        assert sum(h.values()) <= books.budget_kb

    for r in rounds:
        clock.t += r['dt']
        _, refused = act.reconcile(host.list_vms(), clock())
        assert refused == []            # memmut alone moves the balloons
        check()
        for name, err in zip(NAMES, r['fail']):
            if err is not None:
                host.fail[name] = err
        vms = [mut.VMDemand(u, a.init_kb, a.alloc_kb,
                            r['wss_mib'][NAMES.index(u)] * MiB,
                            a.booked_kb, 64 * MiB)
               for u, a in books.vms.items()]
        plan = mut.distribute(vms, books.pool_kb, r['policy'])
        actions = act.apply(plan)
        check()
        for a in actions:
            assert a.ok == (a.error is None)
            if not a.ok:
                # a failed change books nothing (or is rolled back)
                assert books.vms[a.uuid].alloc_kb == a.from_kb, a
            if a.kind == mut.MOVE_GRANT and a.ok:
                # granted only from the pool, never above the plan
                assert a.to_kb <= a.planned_to_kb
            if a.kind == mut.MOVE_RECLAIM:
                # never below the plan (which is in whole pages)
                assert a.to_kb >= a.planned_to_kb
        host.fail.clear()
    # with time and no failures, the last plan is reached where guests
    # release memory at all
    if all(rel != 0 for rel in release):
        wss = rounds[-1]['wss_mib']
        for _ in range(30):
            clock.t += 10.0
            act.reconcile(host.list_vms(), clock())
            vms = [mut.VMDemand(u, a.init_kb, a.alloc_kb,
                                wss[NAMES.index(u)] * MiB, a.booked_kb,
                                64 * MiB)
                   for u, a in books.vms.items()]
            plan = mut.distribute(vms, books.pool_kb, rounds[-1]['policy'])
            act.apply(plan)
            check()
        act.reconcile(host.list_vms(), clock())
        final = mut.distribute(
            [mut.VMDemand(u, a.init_kb, a.alloc_kb,
                          wss[NAMES.index(u)] * MiB, a.booked_kb, 64 * MiB)
             for u, a in books.vms.items()], books.pool_kb,
            rounds[-1]['policy'])
        # Algorithm 1 plans whole pages, so every plan can be carried out:
        # nothing is left, not even page rounding. (With plans in KiB,
        # reclaims of 3 KiB and 1 KiB from two VMs could fund a 4 KiB grant
        # that the balloons never carried out: it stayed pending for good.)
        assert final.moves == (), final.moves
