"""Invariants of Algorithm 1 over random hosts (hypothesis)."""

from hypothesis import assume
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from memmut.agent import mutualization as mut
from memmut.agent import reservoir

SETTINGS = settings(max_examples=300, deadline=None)
KB = st.integers(min_value=0, max_value=1 << 22)       # up to 4 GiB


@st.composite
def vm_demands(draw, i):
    init = draw(st.integers(min_value=1, max_value=1 << 22))
    booked = init + draw(st.integers(min_value=0, max_value=1 << 22))
    act = draw(st.integers(min_value=0, max_value=booked))
    wss = draw(st.integers(min_value=0, max_value=2 * booked))
    floor = draw(st.integers(min_value=0, max_value=init))
    return mut.VMDemand('vm%02d' % i, init, act, wss, booked, floor)


@st.composite
def hosts(draw):
    n = draw(st.integers(min_value=0, max_value=8))
    vms = [draw(vm_demands(i)) for i in range(n)]
    pool = draw(KB)
    assume(sum(min(v.floor_kb, v.init_kb) for v in vms) <=
           sum(v.act_kb for v in vms) + pool)
    return vms, pool


POLICIES = st.sampled_from([mut.EqualPolicy(), mut.ProportionalPolicy()])
HEADROOM = st.tuples(st.integers(min_value=0, max_value=1 << 16),
                     st.sampled_from([0.0, 0.05, 0.2]))


def plan_for(host, policy, headroom=(0, 0.0)):
    vms, pool = host
    return mut.distribute(vms, pool, policy, headroom_kb=headroom[0],
                          headroom_fraction=headroom[1])


@SETTINGS
@given(hosts(), POLICIES, HEADROOM)
def test_conservation(host, policy, headroom):
    vms, pool = host
    plan = plan_for(host, policy, headroom)
    budget = sum(v.act_kb for v in vms) + pool
    assert sum(plan.allocations.values()) + plan.pool_after_kb == budget
    assert plan.pool_after_kb >= 0
    assert set(plan.allocations) == {v.uuid for v in vms}


@SETTINGS
@given(hosts(), POLICIES, HEADROOM)
def test_guarantee_when_budget_allows(host, policy, headroom):
    vms, pool = host
    plan = plan_for(host, policy, headroom)
    budget = sum(v.act_kb for v in vms) + pool
    wanted = {v.uuid: max(v.floor_kb, min(plan.demands[v.uuid], v.init_kb))
              for v in vms}
    if sum(wanted.values()) <= budget:
        assert plan.guarantee_met
        for v in vms:
            # Never below min(WSS, Mem_init): Mem_init comes back when the
            # working set grows to it.
            assert plan.allocations[v.uuid] >= wanted[v.uuid]
            if plan.demands[v.uuid] >= v.init_kb:
                assert plan.allocations[v.uuid] >= v.init_kb
    else:
        assert not plan.guarantee_met


@SETTINGS
@given(hosts(), POLICIES, HEADROOM)
def test_bounds(host, policy, headroom):
    vms, _ = host
    plan = plan_for(host, policy, headroom)
    for v in vms:
        alloc = plan.allocations[v.uuid]
        demand = plan.demands[v.uuid]
        assert min(v.floor_kb, v.init_kb) <= alloc <= v.booked_kb
        assert demand <= v.booked_kb
        assert alloc <= demand              # nobody gets more than it needs
        assert plan.unmet_kb.get(v.uuid, 0) == demand - alloc


@SETTINGS
@given(hosts(), POLICIES)
def test_extra_only_after_every_guarantee(host, policy):
    vms, _ = host
    plan = plan_for(host, policy)
    short_of_init = [v for v in vms if plan.allocations[v.uuid] <
                     min(plan.demands[v.uuid], v.init_kb)]
    if short_of_init:
        assert all(plan.allocations[v.uuid] <= v.init_kb for v in vms)


@SETTINGS
@given(hosts(), POLICIES)
def test_pool_left_only_when_everyone_is_satisfied(host, policy):
    vms, _ = host
    plan = plan_for(host, policy)
    if plan.pool_after_kb > 0:
        assert plan.unmet_kb == {}


@SETTINGS
@given(hosts(), POLICIES, HEADROOM)
def test_moves_reclaim_first_and_never_overdraw(host, policy, headroom):
    vms, pool = host
    plan = plan_for(host, policy, headroom)
    kinds = [m.kind for m in plan.moves]
    assert kinds == sorted(kinds, key=lambda k: k != mut.MOVE_RECLAIM)
    budget = sum(v.act_kb for v in vms) + pool
    alloc = {v.uuid: v.act_kb for v in vms}
    free = pool
    seen = set()
    for m in plan.moves:
        assert m.uuid not in seen           # one move per VM
        seen.add(m.uuid)
        assert m.amount_kb > 0 and m.from_kb == alloc[m.uuid]
        sign = -1 if m.kind == mut.MOVE_RECLAIM else 1
        alloc[m.uuid] += sign * m.amount_kb
        free -= sign * m.amount_kb
        assert alloc[m.uuid] == m.to_kb
        assert free >= 0                    # never grants what is not there
        assert sum(alloc.values()) <= budget
    assert alloc == plan.allocations and free == plan.pool_after_kb


@SETTINGS
@given(hosts(), POLICIES)
def test_books_accept_every_plan(host, policy):
    vms, pool = host
    plan = plan_for(host, policy)
    reserve = 1 << 20
    books = reservoir.Books(
        sum(v.act_kb for v in vms) + pool + reserve, reserve)
    for v in vms:
        books.add_vm(v.uuid, v.init_kb, v.act_kb, v.booked_kb)
    assert books.pool_kb == pool
    books.apply(plan)                       # check() after every move
    assert books.pool_kb == plan.pool_after_kb


@SETTINGS
@given(hosts(), POLICIES)
def test_fixed_point(host, policy):
    vms, _ = host
    plan = plan_for(host, policy)
    again = mut.distribute(
        [mut.VMDemand(v.uuid, v.init_kb, plan.allocations[v.uuid], v.wss_kb,
                      v.booked_kb, v.floor_kb) for v in vms],
        plan.pool_after_kb, policy)
    assert again.moves == ()
    assert again.allocations == plan.allocations


@SETTINGS
@given(hosts())
def test_equal_is_max_min_fair(host):
    vms, _ = host
    plan = plan_for(host, mut.EqualPolicy())
    if not plan.guarantee_met:
        return
    extra = {v.uuid: max(0, plan.allocations[v.uuid] -
                         max(v.floor_kb, min(plan.demands[v.uuid],
                                             v.init_kb)))
             for v in vms}
    for v in vms:
        if v.uuid in plan.unmet_kb:
            # An unmet VM got at least as much extra as anyone, +-1 KiB.
            assert all(extra[v.uuid] >= e - 1 for e in extra.values())


@SETTINGS
@given(st.integers(min_value=0, max_value=1 << 24),
       st.lists(st.integers(min_value=0, max_value=1 << 22), max_size=10),
       POLICIES)
def test_split_contract(amount, wants, policy):
    reqs = [mut.Request('vm%02d' % i, w, w, 0, 0)
            for i, w in enumerate(wants)]
    shares = mut._split(policy, amount, reqs)   # raises on a breach
    assert sum(shares.values()) == min(amount, sum(wants))
    if isinstance(policy, mut.ProportionalPolicy) and amount < sum(wants):
        total = sum(wants)
        for r in reqs:
            exact = amount * r.want_kb / total
            assert abs(shares.get(r.uuid, 0) - exact) < 1 + 1e-9
