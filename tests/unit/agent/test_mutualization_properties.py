"""Invariants of Algorithm 1 over random hosts (hypothesis).

A host's balloons sit on whole 4 KiB pages (QEMU sizes a guest's RAM in
pages and the balloon moves pages), so Mem_act, Mem_init and booked memory
are drawn in pages; WSS, floors, headroom and the pool in KiB. Plans move
whole pages; test_any_kib_input_moves_whole_pages drops the alignment too.
"""

from hypothesis import assume
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from memmut.agent.mutualization import algorithm1 as mut
from memmut.agent.mutualization import books as bookmod

SETTINGS = settings(max_examples=300, deadline=None)
KB = st.integers(min_value=0, max_value=1 << 22)       # up to 4 GiB
PAGE = mut.PAGE_KB


@st.composite
def vm_demands(draw, i, aligned=True):
    unit = PAGE if aligned else 1
    init = unit * draw(st.integers(min_value=1, max_value=(1 << 22) // unit))
    booked = init + unit * draw(st.integers(min_value=0,
                                            max_value=(1 << 22) // unit))
    act = unit * draw(st.integers(min_value=0, max_value=booked // unit))
    wss = draw(st.integers(min_value=0, max_value=2 * booked))
    floor = draw(st.integers(min_value=0, max_value=init))
    return mut.VMDemand('vm%02d' % i, init, act, wss, booked, floor)


@st.composite
def hosts(draw, aligned=True):
    n = draw(st.integers(min_value=0, max_value=8))
    vms = [draw(vm_demands(i, aligned)) for i in range(n)]
    pool = draw(KB)
    assume(sum(min(v.floor_kb, v.init_kb) for v in vms) <=
           sum(v.act_kb for v in vms) + pool)
    return vms, pool


POLICIES = st.sampled_from([mut.EqualPolicy(), mut.ProportionalPolicy()])
# (headroom_kb, headroom_fraction, guaranteed_headroom_kb)
HEADROOM = st.tuples(st.integers(min_value=0, max_value=1 << 16),
                     st.sampled_from([0.0, 0.05, 0.2]),
                     st.sampled_from([0, 4096, 1 << 14]))


def plan_for(host, policy, headroom=(0, 0.0, 0)):
    vms, pool = host
    return mut.distribute(vms, pool, policy, headroom_kb=headroom[0],
                          headroom_fraction=headroom[1],
                          guaranteed_headroom_kb=headroom[2])


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
    wanted = {v.uuid: max(plan.floors[v.uuid],
                          min(plan.needs[v.uuid], v.init_kb))
              for v in vms}
    if sum(wanted.values()) <= budget:
        assert plan.guarantee_met
        for v in vms:
            # Never below min(WSS, Mem_init): Mem_init comes back when the
            # working set grows to it.
            assert plan.allocations[v.uuid] >= wanted[v.uuid]
            if plan.needs[v.uuid] >= v.init_kb:
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
        floor = min(v.floor_kb, v.init_kb)
        # the floor on a page boundary: up, or down by less than a page
        # when the budget cannot pay the floors in whole pages
        assert floor - PAGE < plan.floors[v.uuid] < floor + PAGE
        assert plan.floors[v.uuid] <= alloc <= v.booked_kb
        assert (alloc - v.act_kb) % PAGE == 0       # whole pages
        assert demand % PAGE == plan.needs[v.uuid] % PAGE == 0
        assert demand <= v.booked_kb
        assert alloc <= demand              # nobody gets more than it needs
        assert plan.needs[v.uuid] <= demand
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
@given(hosts(), POLICIES, HEADROOM)
def test_headroom_only_after_every_working_set(host, policy, headroom):
    # While some VM lacks part of its WSS, nobody holds headroom beyond its
    # own WSS, and nobody holds memory beyond Mem_init while some VM is
    # short of min(WSS, Mem_init).
    vms, _ = host
    plan = plan_for(host, policy, headroom)
    alloc, needs = plan.allocations, plan.needs
    if any(alloc[v.uuid] < needs[v.uuid] for v in vms):
        assert all(alloc[v.uuid] <= max(needs[v.uuid], plan.floors[v.uuid])
                   for v in vms)
    if any(alloc[v.uuid] < min(needs[v.uuid], v.init_kb) for v in vms):
        assert all(alloc[v.uuid] <= v.init_kb for v in vms)


@SETTINGS
@given(hosts(), POLICIES)
def test_pool_left_only_when_everyone_is_satisfied(host, policy):
    vms, _ = host
    plan = plan_for(host, policy)
    if plan.pool_after_kb >= PAGE:      # less is no page to give
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
    books = bookmod.Books(
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
                         max(plan.floors[v.uuid],
                             min(plan.demands[v.uuid], v.init_kb)))
             for v in vms}
    for v in vms:
        if v.uuid in plan.unmet_kb:
            # An unmet VM got at least as much extra as anyone, +-1 page.
            assert all(extra[v.uuid] >= e - PAGE for e in extra.values())


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
            exact = amount * r.want / total
            assert abs(shares.get(r.uuid, 0) - exact) < 1 + 1e-9


# -- the seed's guarantees, stated as properties ------------------------------

@SETTINGS
@given(hosts(), POLICIES, HEADROOM)
def test_roles_follow_the_seeds_prose(host, policy, headroom):
    # Server: gave memory (Mem_act < Mem_init); Client: holds more than its
    # Mem_init (the OCR'd "if Mem_act > Mem_init then Server" is a typo).
    vms, _ = host
    plan = plan_for(host, policy, headroom)
    for v in vms:
        alloc = plan.allocations[v.uuid]
        expected = (mut.ROLE_SERVER if alloc < v.init_kb else
                    mut.ROLE_CLIENT if alloc > v.init_kb else
                    mut.ROLE_NEUTRAL)
        assert plan.roles[v.uuid] == expected


@SETTINGS
@given(hosts(), POLICIES, HEADROOM)
def test_reclaims_take_only_unneeded_or_borrowed_memory(host, policy,
                                                        headroom):
    # While the budget covers every guarantee, a reclaim takes what the
    # VM does not need (it stays at its WSS or above: at most its headroom
    # goes) or what it borrowed (it stays at Mem_init or above): a Server
    # that still needs its memory is never squeezed to feed others.
    vms, _ = host
    plan = plan_for(host, policy, headroom)
    if not plan.guarantee_met:
        return
    init = {v.uuid: v.init_kb for v in vms}
    for m in plan.moves:
        if m.kind == mut.MOVE_RECLAIM:
            assert (m.to_kb >= plan.needs[m.uuid] or
                    m.to_kb >= init[m.uuid]), m
            if headroom[:2] == (0, 0.0):
                assert (m.to_kb >= plan.demands[m.uuid] or
                        m.to_kb >= init[m.uuid]), m


@SETTINGS
@given(hosts(), POLICIES, HEADROOM)
def test_borrowing_comes_only_from_the_pool_and_clients(host, policy,
                                                        headroom):
    # Memory beyond Mem_init is the pool plus what Clients borrowed plus
    # what Servers freed from their *unneeded* memory: it never exceeds the
    # budget minus everyone's min(WSS, Mem_init).
    vms, pool = host
    plan = plan_for(host, policy, headroom)
    if not plan.guarantee_met:
        return
    budget = sum(v.act_kb for v in vms) + pool
    beyond = sum(max(0, plan.allocations[v.uuid] - v.init_kb) for v in vms)
    base = sum(max(plan.floors[v.uuid],
                   min(plan.needs[v.uuid], v.init_kb)) for v in vms)
    assert beyond <= budget - base


@SETTINGS
@given(hosts(), POLICIES, HEADROOM)
def test_no_shortage_means_everyone_gets_its_demand(host, policy, headroom):
    vms, pool = host
    plan = plan_for(host, policy, headroom)
    budget = sum(v.act_kb for v in vms) + pool
    if sum(plan.demands.values()) <= budget:
        assert plan.allocations == plan.demands
        assert plan.unmet_kb == {}
        assert plan.pool_after_kb == budget - sum(plan.demands.values())
    else:
        assert plan.pool_after_kb < PAGE        # no whole page left


@SETTINGS
@given(hosts(), POLICIES, st.integers(min_value=1, max_value=1 << 22))
def test_more_pool_never_hurts_anyone(host, policy, more):
    # Monotonic in the pool (+-1 page for the largest-remainder rounding).
    vms, pool = host
    plan = mut.distribute(vms, pool, policy)
    richer = mut.distribute(vms, pool + more, policy)
    for v in vms:
        assert richer.allocations[v.uuid] >= (plan.allocations[v.uuid] -
                                              PAGE)


@SETTINGS
@given(st.integers(min_value=2, max_value=6),
       st.integers(min_value=1, max_value=1 << 20),
       st.integers(min_value=0, max_value=1 << 21),
       st.integers(min_value=0, max_value=1 << 22), POLICIES)
def test_identical_vms_get_identical_shares(n, init, wss_above, pool,
                                            policy):
    vms = [mut.VMDemand('vm%02d' % i, init, init, init + wss_above,
                        2 * init + (1 << 21), 0) for i in range(n)]
    plan = mut.distribute(vms, pool, policy)
    allocs = sorted(plan.allocations.values())
    assert allocs[-1] - allocs[0] <= PAGE
    assert all(a >= init for a in allocs)   # everyone keeps Mem_init


@SETTINGS
@given(hosts(), POLICIES)
def test_order_of_the_input_does_not_matter(host, policy):
    vms, pool = host
    plan = mut.distribute(vms, pool, policy)
    again = mut.distribute(list(reversed(vms)), pool, policy)
    assert again.allocations == plan.allocations
    assert again.moves == plan.moves


@SETTINGS
@given(hosts(), POLICIES)
def test_a_vm_regains_mem_init_within_one_round(host, policy):
    # The guarantee over two rounds: after any round, one VM's WSS grows to
    # its Mem_init (or beyond); the next round gives it Mem_init back if the
    # budget can give every VM min(demand, Mem_init).
    vms, _ = host
    assume(vms)
    plan = mut.distribute(vms, host[1], policy)
    grower = vms[0]
    nxt = [mut.VMDemand(v.uuid, v.init_kb, plan.allocations[v.uuid],
                        v.init_kb if v is grower else v.wss_kb, v.booked_kb,
                        v.floor_kb) for v in vms]
    second = mut.distribute(nxt, plan.pool_after_kb, policy)
    if second.guarantee_met:
        assert second.allocations[grower.uuid] == grower.init_kb


@SETTINGS
@given(hosts(), POLICIES, HEADROOM,
       st.integers(min_value=1, max_value=1 << 14))
def test_min_change_holds_back_only_small_headroom_moves(host, policy,
                                                         headroom, mc):
    vms, pool = host
    plan = mut.distribute(vms, pool, policy, headroom_kb=headroom[0],
                          headroom_fraction=headroom[1], min_change_kb=mc,
                          guaranteed_headroom_kb=headroom[2])
    budget = sum(v.act_kb for v in vms) + pool
    assert sum(plan.allocations.values()) + plan.pool_after_kb == budget
    assert plan.pool_after_kb >= 0
    free = pool
    for m in plan.moves:                    # never grants what is not there
        free += m.amount_kb if m.kind == mut.MOVE_RECLAIM else -m.amount_kb
        assert free >= 0
    act = {v.uuid: v.act_kb for v in vms}
    for v in vms:
        alloc, need = plan.allocations[v.uuid], plan.needs[v.uuid]
        assert alloc <= max(plan.demands[v.uuid], act[v.uuid])
        if 0 < abs(alloc - act[v.uuid]) < mc and min(alloc,
                                                     act[v.uuid]) >= need:
            # a small move within the headroom: only a reclaim the pool
            # could not cover (it funds another VM's WSS or floor)
            assert alloc < act[v.uuid]
            assert plan.pool_after_kb < act[v.uuid] - alloc
    # the working sets are served as without the deadband (the deadband on
    # demands aside, which the plan's needs already include)
    if plan.guarantee_met:
        for v in vms:
            assert plan.allocations[v.uuid] >= max(
                plan.floors[v.uuid], min(plan.needs[v.uuid], v.init_kb))


@settings(max_examples=1000, deadline=None)
@given(hosts(aligned=False), POLICIES, HEADROOM,
       st.sampled_from([0, 1, 4096]))
def test_any_kib_input_moves_whole_pages(host, policy, headroom, mc):
    # Whatever the sizes (a balloon off a page boundary, odd floors, an odd
    # pool), every move is whole pages, the books balance to the KiB, every
    # plan can be carried out in its order, and it is a fixed point.
    vms, pool = host
    plan = mut.distribute(vms, pool, policy, headroom_kb=headroom[0],
                          headroom_fraction=headroom[1], min_change_kb=mc,
                          guaranteed_headroom_kb=headroom[2])
    budget = sum(v.act_kb for v in vms) + pool
    assert sum(plan.allocations.values()) + plan.pool_after_kb == budget
    assert (plan.pool_after_kb - pool) % PAGE == 0
    # a floor gives up less than a page, or, when the budget is tight to
    # the KiB, also the sub-page remainders the other balloons keep
    residues = sum(v.act_kb % PAGE for v in vms)
    for v in vms:
        floor = min(v.floor_kb, v.init_kb)
        assert floor - PAGE - residues < plan.floors[v.uuid] < floor + PAGE
        assert plan.floors[v.uuid] >= 0
        assert (plan.floors[v.uuid] <= plan.allocations[v.uuid] <=
                v.booked_kb)
        assert (plan.allocations[v.uuid] - v.act_kb) % PAGE == 0
    free = pool
    for m in plan.moves:
        assert m.amount_kb > 0 and m.amount_kb % PAGE == 0, m
        free += m.amount_kb if m.kind == mut.MOVE_RECLAIM else -m.amount_kb
        assert free >= 0
    reserve = 1 << 20
    books = bookmod.Books(budget + reserve, reserve)
    for v in vms:
        books.add_vm(v.uuid, v.init_kb, v.act_kb, v.booked_kb)
    books.apply(plan)
    assert books.pool_kb == plan.pool_after_kb
    if mc == 0:
        again = mut.distribute(
            [mut.VMDemand(v.uuid, v.init_kb, plan.allocations[v.uuid],
                          v.wss_kb, v.booked_kb, v.floor_kb) for v in vms],
            plan.pool_after_kb, policy, headroom_kb=headroom[0],
            headroom_fraction=headroom[1],
            guaranteed_headroom_kb=headroom[2])
        assert again.moves == ()


def test_mem_init_under_the_lowest_page_of_the_grid_is_not_overdrawn():
    # found by hypothesis (session 8): Mem_init 1 KiB under a Mem_act of
    # 414 KiB rounded down to -2 KiB and the plan reclaimed 416 KiB from
    # a VM holding 414; the floors, tight to the KiB, did not fit the
    # budget in whole pages once no VM could go below zero
    d = mut.VMDemand
    vms = [d('vm00', 1, 0, 0, 1, 0), d('vm01', 1, 414, 0, 414, 0),
           d('vm02', 1, 157, 0, 562, 0), d('vm03', 98, 265, 0, 265, 0),
           d('vm04', 168, 1613, 0, 1613, 0), d('vm05', 667, 0, 0, 667, 632),
           d('vm06', 667, 0, 0, 667, 632),
           d('vm07', 1464, 0, 0, 1464, 1185)]
    plan = mut.distribute(vms, 0, 'equal')
    assert min(plan.allocations.values()) >= 0
    assert sum(plan.allocations.values()) + plan.pool_after_kb == 2449
    books = bookmod.Books(2449 + (1 << 20), 1 << 20)
    for v in vms:
        books.add_vm(v.uuid, v.init_kb, v.act_kb, v.booked_kb)
    books.apply(plan)
    assert books.pool_kb == plan.pool_after_kb
