"""Rounds read rolled-up samples as they read raw ones: the unit cases of
test_rounds plan the same after their samples are rolled up."""

import pytest

from memmut.consolidation import planner
from memmut.globals import rounds
from tests.unit.globals import test_rounds as tr

GIB_KB = tr.GIB_KB


def underloaded(db, clock):
    return tr.underloaded_pair(db, clock)


def memory_overload(db, clock):
    return tr.populate(db, clock, {
        'h1': (8, 2 * GIB_KB, [tr.VMSpec(u, booked_kb=GIB_KB,
                                         wss_kb=700 << 10)
                               for u in 'abcd']),
        'h2': (8, 2 * GIB_KB, []),
        'h3': (8, 2 * GIB_KB, [])})


def both_overloaded(db, clock):
    return tr.populate(db, clock, {
        'h1': (1, 2 * GIB_KB, [tr.VMSpec(u, booked_kb=GIB_KB,
                                         wss_kb=900 << 10, cores=0.5)
                               for u in 'abc']),
        'h2': (8, 8 * GIB_KB, [])})


def cpu_mixed(db, clock):
    return tr.populate(db, clock, {
        'h1': (2, 8 * GIB_KB, [tr.VMSpec(u, cores=c) for u, c in
                               (('a', 0.9), ('b', 0.7), ('c', 0.6))]),
        'h2': (4, 8 * GIB_KB, [tr.VMSpec('d', cores=0.1)]),
        'h3': (4, 8 * GIB_KB, [tr.VMSpec('e', cores=0.2)])})


def _plan(db, clock, basis):
    """The planner's input and plan (no round recorded: a round's states
    would carry over into the next)."""
    conf = tr.round_conf(memory_basis=basis)
    data = rounds.build_input(conf, db, clock())
    plan = planner.plan(data.hosts, data.vms,
                        planner.PlanParams.from_conf(conf))
    vms = [(v.uuid, v.host, list(v.cpu_history), v.ram,
            list(v.mem_history)) for v in data.vms]
    return (vms, [(m.vm, m.source, m.destination, m.resource, m.kind)
                  for m in plan.migrations], plan.overloaded,
            plan.underloaded, plan.deactivate)


@pytest.mark.parametrize('case', [underloaded, memory_overload,
                                  both_overloaded, cpu_mixed])
@pytest.mark.parametrize('raw_window', [600.0, 4000.0])
@pytest.mark.parametrize('basis', ['wss', 'booked'])
def test_rolled_up_samples_give_the_same_plans(db, clock, case, raw_window,
                                               basis):
    case(db, clock)
    raw = _plan(db, clock, basis)
    rolled = db.rollup_samples(clock() - raw_window, 300.0)
    assert rolled > 0
    assert _plan(db, clock, basis) == raw
