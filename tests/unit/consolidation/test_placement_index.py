"""The sorted best-fit index gives the same plans as Neat's scan.

:func:`placement.best_fit_decreasing` (bisect over hosts sorted by free
capacity) against :func:`placement.best_fit_decreasing_scan` (the
reference scan of every host per VM), and a planner round with a
placement session against the same round rebuilding the hosts'
figures for every placement (the path a third-party placement without
a session takes), on random small inputs. Values come from small sets
so that ties (equal free CPU, equal free memory) are frequent: the
tie-break is where the two could differ.
"""

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from memmut.consolidation import loader
from memmut.consolidation import placement as p
from memmut.consolidation import planner as pl

small = st.sampled_from([0.0, 50.0, 100.0, 150.0, 200.0, 300.0, 500.0])


@st.composite
def bfd_inputs(draw):
    n_on = draw(st.integers(0, 6))
    n_off = draw(st.integers(0, 4))
    n_vm = draw(st.integers(1, 8))
    on = ['h%d' % i for i in draw(st.permutations(range(n_on)))]
    off = ['o%d' % i for i in range(n_off)]
    hosts_cpu = {h: draw(small) for h in on}
    hosts_ram = {h: draw(small) for h in on}
    off_cpu = {h: draw(st.sampled_from([300.0, 500.0])) for h in off}
    off_ram = {h: draw(st.sampled_from([300.0, 500.0])) for h in off}
    vms_cpu = {'v%d' % i: [draw(small), draw(small)] for i in range(n_vm)}
    vms_ram = {'v%d' % i: draw(small) for i in range(n_vm)}
    last_n = draw(st.integers(1, 2))
    return (last_n, hosts_cpu, hosts_ram, off_cpu, off_ram, vms_cpu,
            vms_ram)


@settings(max_examples=400, deadline=None)
@given(bfd_inputs())
def test_index_matches_the_scan(args):
    assert p.best_fit_decreasing(*args) == p.best_fit_decreasing_scan(*args)


def worst_fit_decreasing_scan(last_n, hosts_cpu, hosts_ram, off_cpu,
                              off_ram, vms_cpu, vms_ram):
    """The reference worst fit: each VM, in the best fit's order, onto
    the host that fits with the most CPU left (ties: more memory, then
    the later in the index's rank: known hosts by name, then those
    switched on, in order); the smallest suspended host when none
    fits."""
    free = {h: [hosts_cpu[h], hosts_ram[h], (0, h)] for h in hosts_cpu}
    off = sorted((off_cpu[h], off_ram[h], h) for h in off_cpu)
    mapping = {}
    for c, r, vm in p._vm_order(last_n, vms_cpu, vms_ram):
        while True:
            fits = [h for h, f in free.items() if f[0] >= c and f[1] >= r]
            if fits:
                h = max(fits, key=lambda h: tuple(free[h]))
                free[h][0] -= c
                free[h][1] -= r
                mapping[vm] = h
                break
            if not off:
                return {}
            c0, r0, h = off.pop(0)
            switched = sum(1 for f in free.values() if f[2][0] == 1)
            free[h] = [c0, r0, (1, switched)]
    return mapping


@settings(max_examples=400, deadline=None)
@given(bfd_inputs())
def test_worst_fit_index_matches_its_scan(args):
    last_n, hosts_cpu, hosts_ram, off_cpu, off_ram, vms_cpu, vms_ram = args
    index = p.BestFitIndex(hosts_cpu, hosts_ram, off_cpu, off_ram)
    got = index.place(p._vm_order(last_n, vms_cpu, vms_ram), fit='worst')
    assert got == worst_fit_decreasing_scan(*args)


def test_worst_fit_takes_the_host_with_the_most_cpu_left():
    def index():
        return p.BestFitIndex({'a': 100.0, 'b': 300.0, 'c': 200.0},
                              {'a': 10.0, 'b': 5.0, 'c': 10.0})
    # b has the most CPU left but not the memory: c; the best fit is a
    assert index().place([(50.0, 8.0, 'x')], fit='worst') == {'x': 'c'}
    assert index().place([(50.0, 8.0, 'x')]) == {'x': 'a'}
    # c then has 150 left, a 100: the next goes to c again, the third
    # (150 > a's 100 and b's memory) to c, then nowhere: all or nothing
    ix = index()
    before = list(ix._keys)
    assert ix.place([(60.0, 1.0, 'x'), (60.0, 1.0, 'y')], fit='worst') \
        == {'x': 'b', 'y': 'b'}
    ix = index()
    assert ix.place([(150.0, 6.0, 'x'), (150.0, 6.0, 'y')],
                    allow_inactive=False, fit='worst') == {}
    assert ix._keys == before
    with pytest.raises(ValueError):
        ix.place([(1.0, 1.0, 'x')], fit='first')


def test_index_rolls_back_a_set_that_does_not_fit():
    index = p.BestFitIndex({'a': 100.0, 'b': 50.0}, {'a': 10.0, 'b': 10.0},
                           {'off': 500.0}, {'off': 500.0})
    before = (list(index._keys), list(index._inactive))
    # the first VM fits a, the second switches 'off' on, the third fits
    # nowhere: nothing changes
    assert index.place([(90.0, 5.0, 'x'), (400.0, 10.0, 'y'),
                        (1000.0, 1.0, 'z')]) == {}
    assert (index._keys, index._inactive) == before
    assert index.place([(90.0, 5.0, 'x')], allow_inactive=False,
                       exclude=('a',)) == {}
    assert index._keys == before[0]


@st.composite
def rounds(draw):
    n_hosts = draw(st.integers(1, 7))
    hosts = [pl.PlannerHost('h%d' % i, 1000.0, 1000.0,
                            active=draw(st.booleans()))
             for i in range(n_hosts)]
    vms = []
    level = st.sampled_from([0.0, 50.0, 100.0, 200.0, 250.0, 400.0])
    for i in range(draw(st.integers(0, 12))):
        where = draw(st.sampled_from([h.name for h in hosts]))
        cpu = [draw(level) for _ in range(3)]
        ram = draw(st.sampled_from([50.0, 100.0, 200.0, 300.0]))
        vms.append(pl.PlannerVM('v%02d' % i, where, cpu, ram,
                                [ram] * 3))
    combination = draw(st.sampled_from(['all', 'any']))
    return hosts, vms, pl.PlanParams(underload_combination=combination,
                                     underload_grace_rounds=0)


@pytest.mark.parametrize('spec', [loader.AlgorithmSpec.neat(),
                                  loader.AlgorithmSpec()],
                         ids=['neat', 'migration_aware'])
@settings(max_examples=300, deadline=None)
@given(case=rounds())
def test_planner_session_gives_the_same_plan(spec, case):
    hosts, vms, params = case
    algos = loader.build_all(spec, 300.0, 30.0)
    fast = pl.plan_round(hosts, vms, algos, params)
    decide = algos.placement

    def no_session(*args, **kwargs):
        return decide(*args, **kwargs)
    no_session.usage_window = getattr(decide, 'usage_window', 0)
    slow_algos = loader.Algorithms(
        algos.cpu_underload, algos.cpu_overload, algos.memory_underload,
        algos.memory_overload, algos.vm_selection, no_session)
    slow = pl.plan_round(hosts, vms, slow_algos, params)
    assert fast == slow


def test_peaks_in_one_reduction_equal_the_peaks_one_by_one():
    import numpy as np

    from memmut.consolidation import placement as pl
    rng = np.random.default_rng(3)
    same = [rng.random(60) * 1000 for _ in range(7)]
    ragged = same[:3] + [rng.random(5), np.zeros(0), [1, 7, 2]]
    for histories in (same, ragged, [list(h) for h in same],
                      [[3, 9, 4], [1, 2, 8]]):
        for n in (1, 4, 48, 100):
            assert pl.peaks(histories, n) == \
                [pl._peak_last(h, n) for h in histories]


def test_a_session_given_the_demands_places_as_it_computes_them():
    import numpy as np

    from memmut.consolidation import loader
    from memmut.consolidation import placement as pl
    rng = np.random.default_rng(5)
    decide = loader.build('placement', 'peak_best_fit_decreasing', 300.0,
                          60.0)
    hosts = ['h%d' % i for i in range(20)]
    cpu_use = {h: float(rng.uniform(0, 60000)) for h in hosts}
    ram_use = {h: float(rng.uniform(0, 200000)) for h in hosts}
    total_c = dict.fromkeys(hosts, 83200.0)
    total_r = dict.fromkeys(hosts, 262144.0)
    vms_cpu = {'v%d' % i: rng.random(100) * 8000 for i in range(30)}
    vms_ram = {v: float(rng.uniform(1000, 16000)) for v in vms_cpu}

    def session():
        return decide.session(cpu_use, total_c, ram_use, total_r,
                              {'off': 83200.0}, {'off': 262144.0})
    s = session()
    assert s.peak_window == decide.usage_window
    demands = dict(zip(vms_cpu, pl.peaks(list(vms_cpu.values()),
                                         s.peak_window)))
    assert session().place(vms_cpu, vms_ram, demands=demands) == \
        s.place(vms_cpu, vms_ram)
