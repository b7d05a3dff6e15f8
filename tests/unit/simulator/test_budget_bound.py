"""The lower bound on active hosts for planners held to budgets."""

import itertools

import numpy as np
import pytest

from memmut.simulator import budget_bound as bb
from memmut.simulator import quality


def _bound(cpu, alive=None, migrations=0, overloaded=0, capacity=10.0,
           block_seconds=(1, 2, 3, 4)):
    cpu = np.asarray(cpu, dtype=float)
    if alive is None:
        alive = np.ones(cpu.shape, dtype=bool)
    return bb.budget_bound(cpu, alive, capacity,
                           bb.Budgets(migrations, overloaded), 1.0,
                           block_seconds=block_seconds)


def test_without_budgets_a_held_block_needs_its_largest_step():
    # one busy step: hosts that keep both VMs for the block hold it
    cpu = [[6, 2, 2, 2], [6, 2, 2, 2]]
    assert bb.block_table(cpu, np.ones((2, 4), bool), 10.0, 0, 0)[0, 0] == 2
    r = _bound(cpu, block_seconds=(4,))
    assert r.mean_hosts == pytest.approx(2.0)
    # blocks of one step are the per-step bound
    assert _bound(cpu, block_seconds=(1,)).mean_hosts == pytest.approx(1.25)
    # moving either VM away does not take its CPU off the busy step
    r = _bound(cpu, migrations=1, block_seconds=(4,))
    assert r.mean_hosts == pytest.approx(1.25)


def test_a_migration_lets_the_heavy_vm_out_of_the_block():
    cpu = [[9, 9, 9, 9], [3, 3, 3, 3], [3, 3, 3, 3]]
    table = bb.block_table(cpu, np.ones((3, 4), bool), 10.0, 2, 0)
    assert list(table[:, 0]) == [2, 1, 1]


def test_an_overloaded_step_is_skipped_per_step_of_the_budget():
    cpu = [[5, 5, 5, 5], [2, 2, 9, 2]]
    table = bb.block_table(cpu, np.ones((2, 4), bool), 10.0, 0, 2)
    assert list(table[0]) == [2, 1, 1]


def test_vms_that_arrive_inside_the_block_are_left_out():
    cpu = [[5, 5, 5, 5], [0, 0, 9, 9]]
    alive = np.array([[1, 1, 1, 1], [0, 0, 1, 1]], bool)
    assert bb.block_table(cpu, alive, 10.0, 0, 0)[0, 0] == 1


def test_the_dual_never_exceeds_the_best_split_of_the_budgets():
    rng = np.random.default_rng(3)
    for _ in range(20):
        # tables fall (or stay) with more migrations or overload
        # (host-steps: blocks of 2, 3 and 1 steps)
        tables = [size * np.minimum.accumulate(np.minimum.accumulate(
            rng.integers(0, 6, (4, 3)), axis=0), axis=1)
            for size in (2, 3, 1)]
        budgets = bb.Budgets(3, 2)
        best = min(
            sum(t[m, k] for t, m, k in zip(tables, ms, ks))
            for ms in itertools.product(range(4), repeat=3)
            for ks in itertools.product(range(3), repeat=3)
            if sum(ms) <= 3 and sum(ks) <= 2)
        value, _, _ = bb.dual_bound(tables, budgets)
        assert value <= best + 1e-9


def _plans(cpu, capacity, alive=None):
    """Brute force over every placement of every step: (host-steps,
    migrations, overloaded host-steps) of each plan. A VM not alive at a
    step has no host then (its placement there is ignored), and only a
    VM alive at both steps can migrate between them."""
    n, steps = cpu.shape
    if alive is None:
        alive = np.ones(cpu.shape, dtype=bool)
    out = set()
    for plan in itertools.product(
            itertools.product(range(n), repeat=n), repeat=steps):
        moves = sum(p[v] != q[v] for t, (p, q) in enumerate(
            zip(plan, plan[1:])) for v in range(n)
            if alive[v, t] and alive[v, t + 1])
        over = hosts = 0
        for t, place in enumerate(plan):
            on = np.array(place)[alive[:, t]]
            load = np.bincount(on, weights=cpu[alive[:, t], t],
                               minlength=n)
            over += int(np.count_nonzero(load > capacity + 1e-9))
            hosts += len(set(on.tolist()))
        out.add((hosts, moves, over))
    return out


@pytest.mark.parametrize('seed', range(6))
def test_no_plan_within_the_budgets_beats_the_bound(seed):
    rng = np.random.default_rng(seed)
    cpu = rng.integers(1, 10, (3, 3)).astype(float)
    # half the cases with VMs that arrive or leave
    alive = (rng.uniform(size=cpu.shape) > 0.25 if seed % 2
             else np.ones(cpu.shape, dtype=bool))
    plans = _plans(cpu, 10.0, alive)
    for migrations, overloaded in ((0, 0), (1, 0), (0, 1), (2, 1)):
        cheapest = min(h for h, m, o in plans
                       if m <= migrations and o <= overloaded)
        r = _bound(cpu, alive, migrations=migrations,
                   overloaded=overloaded, block_seconds=(1, 2, 3))
        assert r.mean_hosts * 3 <= cheapest + 1e-9, (cpu, alive,
                                                     migrations, overloaded)


def test_block_host_steps():
    h = np.array([[2, 1], [1, 1]])
    lb = np.array([3, 1, 2])
    v = bb.block_host_steps(h, lb)
    # h 2: max(2, lb) at each step = 3 + 2 + 2
    assert v[0, 0] == 7
    # h 1: 3 + 1 + 2, and with an overloaded step (k = 1) less the
    # largest excess of lb over h (3 - 1)
    assert v[1, 0] == 6
    assert v[0, 1] == v[1, 1] == 4


def _random_cpu(seed, high, shape):
    """Random CPU of VMs alive throughout, and its per-step bound."""
    cpu = np.random.default_rng(seed).uniform(0, high, shape)
    alive = np.ones(cpu.shape, dtype=bool)
    per_step = quality.lower_bound(cpu, np.zeros(cpu.shape), alive,
                                   1.0, 1.0)[0]
    return cpu, alive, per_step


def test_moved_vms_still_count_at_every_step_without_overload():
    cpu, alive, per_step = _random_cpu(7, 0.5, (30, 48))
    r = bb.budget_bound(cpu, alive, 1.0, bb.Budgets(1000, 0), 1.0,
                        block_seconds=(1, 12, 48))
    assert r.mean_hosts >= per_step.mean() - 1e-9


def test_goal_budgets():
    alive = np.ones((10, 288), bool)     # 10 VM-days at 5-minute steps
    b = bb.goal_budgets(alive, 300.0, 0.15, 0.003, 1000.0)
    assert b.migrations == pytest.approx(1.5)
    assert b.overloaded_host_steps == pytest.approx(3.0)


def test_bad_input_is_refused():
    with pytest.raises(ValueError):
        bb.Budgets(-1, 0)
    with pytest.raises(ValueError):
        bb.budget_bound(np.ones((2, 3)), np.ones((2, 2), bool), 1.0,
                        bb.Budgets(0, 0), 1.0)
    with pytest.raises(ValueError):
        bb.block_table(np.ones((1, 1)), np.ones((1, 1), bool), 0.0, 0, 0)
    with pytest.raises(ValueError):
        bb.blocks(5, 0)


def test_without_budgets_it_is_the_held_cpu_bound():
    cpu, alive, per_step = _random_cpu(5, 0.4, (40, 24))
    for hold in (1, 6, 24):
        r = bb.budget_bound(cpu, alive, 1.0, bb.Budgets(0, 0), 1.0,
                            block_seconds=(hold,))
        held = quality.held_lower_bound(per_step, hold)
        assert r.mean_hosts == pytest.approx(held.mean())
