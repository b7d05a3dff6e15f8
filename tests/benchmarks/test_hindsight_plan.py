"""The two-tier plan made in hindsight (consolidation_bounds' rung)."""

import numpy as np
import pytest

from tests.benchmarks import hindsight_plan as hp


def _placements(cpu, mem, alive, cap_c, cap_m, heavy, block):
    """The plan, checked: no host over capacity at any step."""
    p = hp.plan(cpu, mem, alive, cap_c, cap_m, heavy, block)
    assert p.active.shape == (cpu.shape[1],)
    return p


def _check_loads(p, cpu, mem, alive, cap=1.0):
    assert ((p.where >= 0) == alive).all()
    for t in range(cpu.shape[1]):
        on = p.where[:, t]
        live = on >= 0
        if not live.any():
            continue
        for series in (cpu, mem):
            load = np.bincount(on[live], weights=series[live, t])
            assert load.max() <= cap + 1e-9
        assert p.active[t] == len(set(on[live]))


def test_light_vms_share_a_host_when_their_peaks_do_not_meet():
    # peaks at different steps: one host holds both (a sum of peaks
    # would say two)
    cpu = np.array([[0.8, 0.1, 0.1], [0.1, 0.1, 0.8]])
    mem = np.full(cpu.shape, 0.1)
    alive = np.ones(cpu.shape, dtype=bool)
    p = _placements(cpu, mem, alive, 1.0, 1.0, 0, 3)
    assert list(p.active) == [1, 1, 1]
    assert p.migrations == 0


def test_a_heavy_vm_moves_only_when_it_no_longer_fits():
    # VM 0 heavy; VM 1 light and static, busy in the second block
    cpu = np.array([[0.6, 0.6, 0.6, 0.6], [0.2, 0.2, 0.6, 0.6]])
    mem = np.full(cpu.shape, 0.1)
    alive = np.ones(cpu.shape, dtype=bool)
    p = _placements(cpu, mem, alive, 1.0, 1.0, 1, 2)
    assert p.migrations == 1
    assert list(p.active) == [1, 1, 2, 2]
    # the same blocks with room to stay: no move
    cpu[1, 2:] = 0.3
    p = _placements(cpu, mem, alive, 1.0, 1.0, 1, 2)
    assert p.migrations == 0
    assert list(p.active) == [1, 1, 1, 1]


def _random_inputs(seed, shape, dead):
    """CPU and memory per (VM, step) and which VMs live, ``dead`` the
    fraction of (VM, step) cells without the VM."""
    rng = np.random.default_rng(seed)
    return (rng.uniform(0, 0.3, shape), rng.uniform(0, 0.1, shape),
            rng.uniform(size=shape) > dead)


def test_no_host_is_ever_overloaded():
    cpu, mem, alive = _random_inputs(11, (60, 96), 0.1)
    for heavy, block in ((0, 96), (10, 12), (30, 24)):
        _check_loads(hp.plan(cpu, mem, alive, 1.0, 1.0, heavy, block),
                     cpu, mem, alive)


def test_arrivals_are_not_migrations():
    cpu = np.array([[0.0, 0.0, 0.5, 0.5], [0.5, 0.5, 0.5, 0.5]])
    alive = np.array([[0, 0, 1, 1], [1, 1, 1, 1]], dtype=bool)
    p = hp.plan(cpu, np.zeros(cpu.shape), alive, 1.0, 1.0, 2, 2)
    assert p.migrations == 0


def test_best_plan_keeps_to_the_budget():
    rng = np.random.default_rng(2)
    cpu = rng.uniform(0, 0.4, (40, 48))
    alive = np.ones(cpu.shape, dtype=bool)
    best = hp.best_plan(cpu, np.zeros(cpu.shape), alive, 1.0, 1.0, 3,
                        heavy_counts=(0, 5, 20), block_steps=(1, 6))
    assert best.migrations <= 3
    static = hp.plan(cpu, np.zeros(cpu.shape), alive, 1.0, 1.0, 0, 48)
    assert best.mean_hosts <= static.mean_hosts


def test_bad_block_is_refused():
    with pytest.raises(ValueError):
        hp.plan(np.ones((1, 2)), np.ones((1, 2)), np.ones((1, 2), bool),
                1.0, 1.0, 0, 0)


def test_sticky_never_overloads_and_keeps_to_its_budget():
    cpu, mem, alive = _random_inputs(4, (50, 72), 0.05)
    for block, budget in ((6, 0), (6, 20), (24, 100)):
        p = hp.sticky_plan(cpu, mem, alive, 1.0, 1.0, block, budget)
        _check_loads(p, cpu, mem, alive)
    forced = hp.sticky_plan(cpu, mem, alive, 1.0, 1.0, 6, 0).migrations
    best = hp.best_sticky(cpu, mem, alive, 1.0, 1.0, forced + 10,
                          block_steps=(6,))
    assert best.migrations <= forced + 10
    assert hp.best_sticky(cpu, mem, alive, 1.0, 1.0, forced - 1,
                          block_steps=(6,)) is None


def test_sticky_empties_a_host_only_within_its_budget():
    # two VMs busy in the first block, idle after it: together they fit
    # one host from the second block on
    cpu = np.array([[0.7, 0.7, 0.2, 0.2], [0.7, 0.7, 0.2, 0.2]])
    mem = np.full(cpu.shape, 0.1)
    alive = np.ones(cpu.shape, dtype=bool)
    p = hp.sticky_plan(cpu, mem, alive, 1.0, 1.0, 2, 0)
    assert list(p.active) == [2, 2, 2, 2] and p.migrations == 0
    p = hp.sticky_plan(cpu, mem, alive, 1.0, 1.0, 2, 2)
    assert list(p.active) == [2, 2, 1, 1] and p.migrations == 1


def test_sticky_moves_what_no_longer_fits():
    # VM 1 grows in the second block: one of the two leaves (a forced
    # move, whatever the budget)
    cpu = np.array([[0.5, 0.5, 0.5, 0.5], [0.3, 0.3, 0.7, 0.7]])
    mem = np.full(cpu.shape, 0.1)
    alive = np.ones(cpu.shape, dtype=bool)
    p = hp.sticky_plan(cpu, mem, alive, 1.0, 1.0, 2, 0)
    _check_loads(p, cpu, mem, alive)
    assert list(p.active) == [1, 1, 2, 2] and p.migrations == 1
