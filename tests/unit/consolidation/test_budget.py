"""The migration budget for underload evacuations, worked by hand.

Hosts of 1000 MHz and 1000 MiB under Neat's set (see test_planner.py):
underloaded at a mean CPU and memory of at most 0.5, placement up to 0.8
CPU, best fit (the fullest host that takes the VM).
"""

import dataclasses

import pytest

from memmut.consolidation import budget
from memmut.consolidation import loader
from memmut.consolidation import planner as pl


pytestmark = pytest.mark.usefixtures('incremental_plans')

# A budget of about ``burst`` migrations a day: no allowance per VM.
TINY = 1e-9
NEAT = pl.PlanParams(spec=loader.AlgorithmSpec.neat(),
                     migration_budget=TINY, migration_budget_burst=3)


def host(name, active=True):
    return pl.PlannerHost(name, 1000.0, 1000.0, active=active)


def vm(name, where, cpu, ram=100.0):
    return pl.PlannerVM(name, where, [cpu, cpu], float(ram), [ram, ram])


def cluster():
    # h1: three VMs, 60 MHz in all (the lightest); h2: one VM, 100 MHz;
    # h3: 600 MHz, not underloaded, 200 MHz free below 0.8.
    return ([host('h1'), host('h2'), host('h3')],
            [vm('a', 'h1', 20), vm('b', 'h1', 20), vm('c', 'h1', 20),
             vm('d', 'h2', 100), vm('e', 'h3', 600)])


def test_allowance_and_ledger():
    assert budget.allowance(0.1, 86400.0, 500) == pytest.approx(50.0)
    assert budget.allowance(0.1, 43200.0, 500, burst=10) == \
        pytest.approx(35.0)
    assert budget.left(0.1, 86400.0, 500, 60) == pytest.approx(-10.0)
    with pytest.raises(ValueError):
        budget.allowance(-1, 86400.0, 1)
    with pytest.raises(ValueError):
        budget.Ledger(0)
    ledger = budget.Ledger(3600.0)
    ledger.record(0.0, 5)
    ledger.record(1800.0, 0)
    ledger.record(3000.0, 2)
    assert ledger.spent(3000.0) == 7
    assert ledger.spent(3600.0) == 2        # the first round left it
    assert ledger.spent(7200.0) == 0


def test_lightest_first_spends_the_budget_on_the_host_with_most_vms():
    hosts, vms = cluster()
    plan = pl.plan(hosts, vms, NEAT)
    # h1 (0.06) goes first: its 3 VMs use the 3 migrations up; h2's one
    # VM no longer fits in the budget.
    assert sorted(m.vm for m in plan.migrations) == ['a', 'b', 'c']
    assert {m.destination for m in plan.migrations} == {'h3'}
    assert plan.deactivate == ['h1']
    assert plan.over_budget == ['h2']


def test_fewest_vms_first_switches_off_a_host_for_one_migration():
    hosts, vms = cluster()
    plan = pl.plan(hosts, vms, dataclasses.replace(
        NEAT, underload_order='fewest_vms'))
    assert plan.migrations == [('d', 'h2', 'h3', 'cpu', 'underload')]
    assert plan.deactivate == ['h2']
    assert plan.over_budget == ['h1']


def test_recent_migrations_use_the_budget_up():
    hosts, vms = cluster()
    plan = pl.plan(hosts, vms, NEAT, recent_migrations=3)
    assert plan.migrations == [] and plan.deactivate == []
    assert plan.over_budget == ['h1', 'h2']
    # no budget: both hosts are emptied as Neat would
    plan = pl.plan(hosts, vms, dataclasses.replace(NEAT, migration_budget=0),
                   recent_migrations=3)
    assert sorted(plan.deactivate) == ['h1', 'h2']
    assert plan.over_budget == []


def test_overload_moves_are_never_held_back():
    # h1: 950 MHz > 0.9 although the budget is spent many times over.
    hosts = [host('h1'), host('h2', active=False)]
    vms = [vm('a', 'h1', 400), vm('b', 'h1', 300), vm('c', 'h1', 250)]
    plan = pl.plan(hosts, vms, NEAT, recent_migrations=100)
    assert [m.kind for m in plan.migrations] == ['overload']


def test_bad_budget_parameters():
    for bad in ({'migration_budget': -0.1},
                {'migration_budget_window': 0},
                {'migration_budget_burst': -1},
                {'underload_order': 'heaviest'}):
        with pytest.raises(ValueError):
            pl.PlanParams(**bad)
