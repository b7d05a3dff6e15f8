"""One round of consolidation, worked by hand.

Hosts have 1000 MHz and 1000 MiB; Neat's set applies
(``AlgorithmSpec.neat()``, the defaults before issue 19): CPU overload
above 0.9 (last value), memory overload above 0.95, underload when the
mean of the last 2 values is at most 0.5 on both resources, placement up
to 0.8 CPU and 0.95 memory, selection of the VM freeing most CPU per MiB.
The migration-aware defaults are worked in test_migration_aware.py.
"""

import dataclasses
import json

import hypothesis
from hypothesis import strategies as st
import pytest

from memmut.consolidation import loader
from memmut.consolidation import planner as pl


pytestmark = pytest.mark.usefixtures('incremental_plans')

NEAT_SPEC = loader.AlgorithmSpec.neat()
NEAT = pl.PlanParams(spec=NEAT_SPEC)


def host(name, active=True, state=None):
    return pl.PlannerHost(name, 1000.0, 1000.0, active=active, state=state)


def vm(name, where, cpu, ram, mem=None):
    return pl.PlannerVM(name, where, [cpu, cpu], float(ram),
                        [ram, ram] if mem is None else mem)


def test_cpu_overload_switches_a_host_on():
    # h1: 400 + 300 + 250 = 950 MHz > 900. CPU per MiB: a 4, b 3, c 0.83:
    # a goes; 550 left. a needs 400 MHz: h2 has 800 - 600 = 200 -> h3 is
    # switched on.
    hosts = [host('h1'), host('h2'), host('h3', active=False)]
    vms = [vm('a', 'h1', 400, 100), vm('b', 'h1', 300, 100),
           vm('c', 'h1', 250, 300), vm('d', 'h2', 600, 100)]
    plan = pl.plan(hosts, vms, NEAT)
    assert plan.migrations == [('a', 'h1', 'h3', 'cpu', 'overload')]
    assert plan.activate == ['h3'] and plan.deactivate == []
    assert plan.overloaded == {'h1': 'cpu'}
    assert not plan.migrations[0].memory_caused


def test_memory_overload_is_caused_by_memory():
    # h1's working sets: 500 + 470 = 970 MiB > 950. CPU per MiB: a 0.2,
    # b 0.213 -> b leaves, 500 MiB left. h2 takes it (200 MHz and 850 MiB
    # free).
    hosts = [host('h1'), host('h2')]
    vms = [vm('a', 'h1', 100, 500), vm('b', 'h1', 100, 470, [400, 470]),
           vm('c', 'h2', 600, 100)]
    plan = pl.plan(hosts, vms, NEAT)
    assert plan.migrations == [('b', 'h1', 'h2', 'memory', 'overload')]
    assert plan.migrations[0].memory_caused
    assert plan.counts() == {('overload', 'memory'): 1}


def test_selection_stops_when_the_host_recovers():
    # 4 x 240 = 960 MHz: one VM out leaves 720 <= 900.
    hosts = [host('h1'), host('h2', active=False), host('h3', active=False)]
    vms = [vm(n, 'h1', 240, 100) for n in 'abcd']
    plan = pl.plan(hosts, vms, NEAT)
    assert [m.vm for m in plan.migrations] == ['a']     # tie: by id
    params = pl.PlanParams(spec=dataclasses.replace(
        NEAT_SPEC, overload_parameters={'threshold': 0.5}))
    # down to 480 <= 500: two VMs leave, together onto one new host
    plan = pl.plan(hosts, vms, params)
    assert [(m.vm, m.destination) for m in plan.migrations] == \
        [('a', 'h2'), ('b', 'h2')]


def test_underload_empties_the_lightest_host():
    # h1 (100 MHz) and h2 (300 MHz) are both underloaded; h1 first: a
    # moves to h2, h1 is suspended; h2 received VMs, so it stays.
    hosts = [host('h1'), host('h2')]
    vms = [vm('a', 'h1', 100, 100), vm('b', 'h2', 300, 100)]
    plan = pl.plan(hosts, vms, NEAT)
    assert plan.migrations == [('a', 'h1', 'h2', 'cpu', 'underload')]
    assert plan.deactivate == ['h1']
    assert plan.states['h2']['received'] is True


def test_underload_blamed_on_memory_when_memory_released_it():
    # CPU has been underloaded for 5 rounds, memory only now: memory was
    # the condition met last.
    hosts = [host('h1', state={'cpu_underload_rounds': 5,
                               'memory_underload_rounds': 0}),
             host('h2')]
    vms = [vm('a', 'h1', 100, 100), vm('b', 'h2', 600, 100)]
    plan = pl.plan(hosts, vms, NEAT)
    assert plan.migrations == [('a', 'h1', 'h2', 'memory', 'underload')]
    assert plan.states['h1']['cpu_underload_rounds'] == 6
    assert plan.states['h1']['memory_underload_rounds'] == 1


def test_underload_needs_both_resources_unless_any():
    # h1: CPU 0.1 but memory 0.6 of the host: not underloaded under 'all'
    hosts = [host('h1'), host('h2')]
    vms = [vm('a', 'h1', 100, 600), vm('b', 'h2', 600, 100)]
    assert pl.plan(hosts, vms, NEAT).migrations == []
    plan = pl.plan(hosts, vms, pl.PlanParams(
        underload_combination='any', spec=NEAT_SPEC))
    assert plan.migrations == [('a', 'h1', 'h2', 'cpu', 'underload')]


def test_underload_moves_nothing_when_the_vms_do_not_all_fit():
    # a and b (50 MHz, working sets 200 MiB: h1 is underloaded) are packed
    # on 400 MiB each (with headroom); h2 has 950 - 300 = 650 MiB free:
    # one fits, not both -> nothing moves.
    hosts = [host('h1'), host('h2')]
    vms = [vm('a', 'h1', 50, 400, [200, 200]),
           vm('b', 'h1', 50, 400, [200, 200]), vm('c', 'h2', 600, 300)]
    plan = pl.plan(hosts, vms, NEAT)
    assert plan.migrations == []
    assert plan.failed == [('h1', 'underload')]
    assert plan.deactivate == []


def test_grace_rounds_protect_a_host_that_just_received_vms():
    hosts = [host('h1', state={'received': True,
                               'rounds_since_received': 0}), host('h2')]
    vms = [vm('a', 'h1', 100, 100), vm('b', 'h2', 600, 100)]
    plan = pl.plan(hosts, vms, NEAT)
    assert plan.migrations == []
    assert plan.states['h1']['rounds_since_received'] == 1
    plan = pl.plan(hosts, vms, pl.PlanParams(
        underload_grace_rounds=0, spec=NEAT_SPEC))
    assert len(plan.migrations) == 1


def test_idle_hosts_are_suspended_and_states_are_json():
    hosts = [host('h1'), host('h2'), host('h3', active=False)]
    vms = [vm('a', 'h1', 600, 100)]
    plan = pl.plan(hosts, vms, pl.PlanParams(spec=dataclasses.replace(
        NEAT_SPEC, overload='otf', memory_overload='mhod',
        memory_overload_parameters={})))
    assert plan.deactivate == ['h2']
    json.dumps(plan.states)
    assert plan.states['h1']['cpu_overload'] == {'overload': 0, 'total': 1}


def test_moves_unpack_as_tuples_and_apply():
    hosts = [host('h1'), host('h2')]
    vms = [vm('a', 'h1', 100, 100), vm('b', 'h2', 300, 100)]
    plan = pl.plan(hosts, vms, NEAT)
    ((v, src, dst, resource, kind),) = plan.migrations
    assert (v, src, dst, resource, kind) == ('a', 'h1', 'h2', 'cpu',
                                             'underload')
    assert pl.apply(plan, {'a': 'h1', 'b': 'h2'}) == {'a': 'h2', 'b': 'h2'}


def test_migration_time_estimate():
    vms = [vm('a', 'h1', 1, 1000), vm('b', 'h1', 1, 3000)]
    assert pl.migration_time(vms, pl.PlanParams(bandwidth_mb_s=20)) == 100
    assert pl.migration_time(vms, pl.PlanParams(migration_time=7)) == 7


def test_bad_input():
    with pytest.raises(ValueError, match='unknown host'):
        pl.plan([host('h1')], [vm('a', 'nowhere', 1, 1)])
    with pytest.raises(ValueError):
        pl.PlanParams(underload_combination='some')
    with pytest.raises(loader.AlgorithmError):
        pl.plan([host('h1')], [], pl.PlanParams(
            spec=loader.AlgorithmSpec(overload='nope')))


def test_sum_right_aligned_equal_and_unequal_lengths():
    import numpy as np
    same = [np.array([0.1, 0.2, 0.3]), [1, 2, 3], (0.7, 0.7, 0.7)]
    out = pl._sum_right_aligned(same)
    assert out.dtype == np.float64
    assert out.tolist() == np.add.reduce(
        np.array(same, dtype=float), axis=0).tolist()
    # the last value is exactly the Python sum of the last values
    assert out[-1] == 0.3 + 3 + 0.7
    assert pl._sum_right_aligned([[1, 2, 3], [5]]).tolist() == [1, 2, 8]
    assert pl._sum_right_aligned([(), ()]).tolist() == []
    assert pl._sum_right_aligned([]).tolist() == []


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(
    st.integers(min_value=1, max_value=8),
    st.integers(min_value=0, max_value=12),
    st.sampled_from(['arrays', 'ragged', 'lists', 'ints', 'mixed']),
    st.randoms(use_true_random=False))
def test_host_sums_equal_the_sums_one_kind_at_a_time(k, n, shape, rnd):
    """The one-concatenation path gives bit for bit the sums of
    _sum_right_aligned, and any other input takes that path itself."""
    import numpy as np

    def series(length):
        xs = [rnd.uniform(-1e6, 1e6) * 10 ** rnd.randint(-12, 0)
              for _ in range(length)]
        if shape == 'lists':
            return xs
        if shape == 'ints' or (shape == 'mixed' and rnd.random() < 0.5):
            return np.array([int(x) for x in xs])
        if shape == 'mixed' and rnd.random() < 0.5:
            return xs
        return np.array(xs)
    vms = []
    for i in range(k):
        length = rnd.randint(0, n) if shape == 'ragged' else n
        vms.append(pl.PlannerVM('v%d' % i, 'h', series(length), 1.0,
                                series(length)))
    cpu, mem = pl._host_sums(vms)
    want_c = pl._sum_right_aligned([v.cpu_history for v in vms])
    want_m = pl._sum_right_aligned([v.mem_history for v in vms])
    assert cpu.dtype == mem.dtype == np.float64
    assert cpu.tobytes() == want_c.tobytes()
    assert mem.tobytes() == want_m.tobytes()


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(
    st.integers(min_value=0, max_value=8),
    st.integers(min_value=0, max_value=12),
    st.integers(min_value=1, max_value=15),
    st.booleans(),
    st.randoms(use_true_random=False))
def test_peaks_from_the_concatenation_equal_the_peaks_one_by_one(
        k, n, window, ragged, rnd):
    import numpy as np

    from memmut.consolidation import placement
    histories = [np.array([rnd.uniform(-1e9, 1e9)
                           for _ in range(rnd.randint(0, n) if ragged
                                          else n)])
                 for _ in range(k)]
    assert placement.peaks(histories, window) == \
        [placement._peak_last(h, window) for h in histories]


def test_plan_records_the_load_of_overloaded_hosts():
    # h1: 950 MHz of 1000 at its last sample; the move-order priority of
    # its moves (memmut.consolidation.move_order) reads it.
    hosts = [host('h1'), host('h2'), host('h3', active=False)]
    vms = [vm('a', 'h1', 400, 100), vm('b', 'h1', 300, 100),
           vm('c', 'h1', 250, 300), vm('d', 'h2', 600, 100)]
    plan = pl.plan(hosts, vms, NEAT)
    assert plan.overloaded == {'h1': 'cpu'}
    assert plan.load == {'h1': pytest.approx(0.95)}
