"""Memory overload left to remote memory (remote_absorb), worked by hand.

Hosts of 1000 MHz and 1000 MiB under Neat's set (memory overload above
0.95 of the last value, placement up to 0.95 memory), as in
test_planner.py.
"""

import dataclasses

import pytest

from memmut.consolidation import loader
from memmut.consolidation import planner as pl
from memmut.consolidation import remote_absorb as ra

NEAT = pl.PlanParams(spec=loader.AlgorithmSpec.neat())


def host(name, lendable=None):
    return pl.PlannerHost(name, 1000.0, 1000.0, lendable=lendable)


def vm(name, where, cpu, ram):
    return pl.PlannerVM(name, where, [cpu, cpu], float(ram), [ram, ram])


def with_remote(f):
    return dataclasses.replace(NEAT, remote_memory_fraction=f)


# h1's working sets sum to 1020 MiB (over 950); h2 packs 300 MiB and
# lends 700.
HOSTS = [host('h1'), host('h2')]
VMS = [vm('a', 'h1', 100, 520), vm('b', 'h1', 100, 500),
       vm('c', 'h2', 600, 300)]


def test_without_remote_memory_the_overload_moves_a_vm():
    plan = pl.plan(HOSTS, VMS, NEAT)
    assert [m.resource for m in plan.migrations] == ['memory']
    assert plan.absorbed == {}


def test_an_overload_within_the_fraction_is_left_to_remote_memory():
    plan = pl.plan(HOSTS, VMS, with_remote(0.2))
    assert plan.migrations == []
    assert plan.overloaded == {} and plan.load == {}
    # the least extra memory that stops the detector: 1020 / 950 - 1 of
    # h1's memory, ~73.7 MiB, found by bisection within 0.2 / 256
    need = (1020.0 / 950.0 - 1.0) * 1000.0
    assert need <= plan.absorbed['h1'] <= need + 0.2 / 256 * 1000 + 1e-9
    # the host stays in its place and receives nothing
    assert 'h1' not in plan.underloaded


def test_a_spike_beyond_the_fraction_still_moves_vms():
    # 1020 / (1000 * 1.05) = 0.971 > 0.95: remote memory of 5 % does
    # not cover it.
    plan = pl.plan(HOSTS, VMS, with_remote(0.05))
    assert plan.absorbed == {}
    assert plan.overloaded == {'h1': 'memory'}
    assert len(plan.migrations) == 1


def test_lenders_must_cover_the_reservation():
    # h2 reports it can lend 50 MiB only: h1's ~74 MiB is refused.
    hosts = [host('h1'), host('h2', lendable=50.0)]
    plan = pl.plan(hosts, VMS, with_remote(0.2))
    assert plan.absorbed == {}
    assert [m.resource for m in plan.migrations] == ['memory']
    hosts = [host('h1'), host('h2', lendable=80.0)]
    assert set(pl.plan(hosts, VMS, with_remote(0.2)).absorbed) == {'h1'}


def test_a_cpu_overload_is_never_absorbed():
    # h1 also over 900 MHz: remote memory gives no CPU.
    vms = [vm('a', 'h1', 500, 520), vm('b', 'h1', 450, 500),
           vm('c', 'h2', 100, 300)]
    plan = pl.plan(HOSTS, vms, with_remote(0.2))
    assert plan.absorbed == {}
    assert plan.overloaded == {'h1': 'cpu+memory'}


def test_an_absorbing_host_receives_no_vms():
    # h1's VMs are packed on 300 MiB each but their memory load is 510
    # (1020 in all): by its packing h1 has room for d, the only host
    # with CPU for it (h2 has 200 MHz left under 0.8); absorbing, it is
    # no destination, so h3's VMs stay where they are.
    def packed(name, where, cpu, ram, load):
        return pl.PlannerVM(name, where, [cpu, cpu], float(ram),
                            [load, load])
    hosts = [host('h1'), host('h2'), host('h3')]
    vms = [packed('a', 'h1', 100, 300, 510), packed('b', 'h1', 100, 300, 510),
           vm('c', 'h2', 600, 300), vm('d', 'h3', 500, 10),
           vm('e', 'h3', 450, 10)]
    plan = pl.plan(hosts, vms, with_remote(0.2))
    assert set(plan.absorbed) == {'h1'}
    assert plan.migrations == [] and plan.failed == [('h3', 'overload')]
    # without remote memory h1 is overloaded: no destination either, and
    # its own VM moves to h2
    plan = pl.plan(hosts, vms, NEAT)
    assert plan.overloaded == {'h1': 'memory', 'h3': 'cpu'}


def test_choose_least_loaded_first_and_smaller_ones_after_a_refusal():
    c = [ra.Candidate('big', 1.2, 300.0), ra.Candidate('small', 1.05, 50.0),
         ra.Candidate('mid', 1.1, 100.0)]
    absorbed, refused = ra.choose(c, 200.0)
    assert absorbed == {'small': 50.0, 'mid': 100.0}
    assert refused == ['big']
    absorbed, refused = ra.choose(
        [ra.Candidate('a', 1.1, 150.0), ra.Candidate('b', 1.2, 10.0)],
        100.0)
    assert absorbed == {'b': 10.0} and refused == ['a']


def test_least_extra_is_an_upper_bound_within_the_resolution():
    need = 0.137
    g = ra.least_extra(lambda x: x < need, 0.5, steps=10)
    assert need <= g <= need + 0.5 / 2 ** 10


def test_lendable_prefers_the_report():
    assert ra.lendable(1000, 700) == 300
    assert ra.lendable(1000, 1100) == 0
    assert ra.lendable(1000, 700, reported=20) == 20
    assert ra.lendable(1000, 700, reported=-5) == 0


@pytest.mark.parametrize('f', [-0.1, 1.5])
def test_bad_fraction(f):
    with pytest.raises(ValueError, match='remote_memory_fraction'):
        with_remote(f)
