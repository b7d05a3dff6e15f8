"""Incremental host sums against sums from scratch, over many rounds."""

import dataclasses

import hypothesis
from hypothesis import strategies as st
import numpy as np
import pytest

from memmut.consolidation import history_sums as hs
from memmut.consolidation import loader
from memmut.consolidation import planner as pl


class Cluster:
    """VMs with growing CPU and memory-load series, arriving, leaving and
    migrating between hosts; each round sees windows of ``length``
    samples (fewer for young VMs) ending at the current sample."""

    def __init__(self, rng, hosts=6, vms=30, length=8, steps=80,
                 as_lists=False, trimmed=False):
        self.rng = rng
        # Windows now and then cut shorter than the samples allow (a
        # caller breaking the append-only promise): must be detected.
        self.trimmed = trimmed
        self.length = length
        self.as_lists = as_lists
        self.hosts = ['h%d' % i for i in range(hosts)]
        # Values spread over many magnitudes so that the order of the
        # additions shows in the last bits.
        scale = 10.0 ** rng.integers(-3, 6, size=(vms, 1))
        self.cpu = rng.random((vms, steps)) * scale
        self.mem = rng.random((vms, steps)) * scale * 7.0
        self.arrive = rng.integers(0, steps // 2, size=vms)
        self.leave = self.arrive + rng.integers(steps // 4, steps, size=vms)
        self.where = {v: self.hosts[rng.integers(hosts)]
                      for v in range(vms)}
        self.order = list(range(vms))

    def churn(self):
        """Migrations, and now and then a new VM order (the planner's
        host lists follow the order of the VMs it is given)."""
        for v in self.rng.choice(len(self.where), size=2, replace=False):
            if self.rng.random() < 0.5:
                self.where[int(v)] = self.hosts[
                    self.rng.integers(len(self.hosts))]
        if self.rng.random() < 0.1:
            self.rng.shuffle(self.order)

    def vms(self, t, end=True):
        out = []
        for v in self.order:
            if not self.arrive[v] <= t <= self.leave[v]:
                continue
            lo = max(self.arrive[v], t - self.length + 1)
            if self.trimmed and self.rng.random() < 0.2:
                lo = min(t, lo + int(self.rng.integers(1, 3)))
            c, m = self.cpu[v, lo:t + 1], self.mem[v, lo:t + 1]
            if self.as_lists:
                c, m = c.tolist(), m.tolist()
            out.append(pl.PlannerVM('vm-%d' % v, self.where[v], c,
                                    float(m[-1]) * 1.05, m,
                                    history_end=int(t) if end else None))
        return out

    def planner_hosts(self):
        return [pl.PlannerHost(h, 2.0e5, 2.0e6) for h in self.hosts]


def _by_host(vms):
    on = {}
    for v in vms:
        on.setdefault(v.host, []).append(v)
    return on


def _same(a, b):
    # Bit for bit (numpy's array_equal would also take -0.0 for 0.0).
    return (a.shape == b.shape and
            np.array_equal(a.view(np.uint64) & ~np.uint64(1 << 63),
                           b.view(np.uint64) & ~np.uint64(1 << 63)))


@pytest.mark.parametrize('seed', range(12))
@pytest.mark.parametrize('as_lists,trimmed', [(False, False),
                                              (True, False),
                                              (False, True)])
def test_incremental_sums_equal_sums_from_scratch(seed, as_lists, trimmed):
    rng = np.random.default_rng(seed)
    cl = Cluster(rng, length=int(rng.integers(2, 12)), as_lists=as_lists,
                 trimmed=trimmed)
    cache = hs.HistorySums()
    t = 1
    while t < cl.cpu.shape[1]:
        vms = cl.vms(t)
        on = _by_host(vms)
        for name in sorted(on):
            got = cache.host_sums(name, on[name], pl._host_sums,
                                  pl._sum_right_aligned)
            want = pl._host_sums(on[name])
            assert _same(got[0], want[0]) and _same(got[1], want[1]), (
                seed, t, name)
            with pytest.raises(ValueError):
                got[0][0] = 1.0         # shared with the next round
        cache.retain(on)
        assert len(cache) == len(on)
        cl.churn()
        # Rounds every 1-3 samples, now and then twice at one sample.
        t += int(rng.choice([0, 1, 1, 1, 2, 3]))
    assert cache.reused > (0 if trimmed else cache.computed / 2)


def test_without_sample_numbers_every_host_is_summed_afresh():
    cl = Cluster(np.random.default_rng(1))
    cache = hs.HistorySums()
    for t in range(20, 30):
        on = _by_host(cl.vms(t, end=False))
        for name in sorted(on):
            cache.host_sums(name, on[name], pl._host_sums,
                            pl._sum_right_aligned)
    assert cache.reused == 0 and cache.computed > 0


def test_moved_on():
    # Full windows sliding by one, and by two.
    assert hs._moved_on([5, 5], [5, 5], 1)
    assert hs._moved_on([5, 5], [5, 5], 2)
    # A young VM grows with the window.
    assert hs._moved_on([5, 3], [5, 4], 1)
    assert hs._moved_on([3, 3], [4, 4], 1)
    # ... but one that did not grow lost samples: not the same series.
    assert not hs._moved_on([5, 3], [5, 3], 1)
    # Fewer samples than were taken since.
    assert not hs._moved_on([5, 5], [5, 1], 1)
    # One-sample sums are pairwise in numpy: never built upon.
    assert not hs._moved_on([1, 1], [1, 1], 1)


@hypothesis.settings(max_examples=40, deadline=None)
@hypothesis.given(seed=st.integers(0, 2 ** 32 - 1),
                  set_name=st.sampled_from(['default', 'neat']))
def test_plans_equal_over_rounds_with_arrivals_departures_and_moves(
        seed, set_name):
    """A controller loop: each round's states fed to the next, its
    migrations applied; with and without the kept sums, every round
    makes the same plan."""
    rng = np.random.default_rng(seed)
    spec = (loader.AlgorithmSpec() if set_name == 'default'
            else loader.AlgorithmSpec.neat())
    algos = loader.build_all(spec, 300.0, 60.0)
    cl = Cluster(rng, hosts=5, vms=24, length=int(rng.integers(2, 30)),
                 steps=60)
    # Loads that overload and underload hosts now and then.
    cl.cpu *= 2.0e5 / 8 / cl.cpu.max(axis=1, keepdims=True) * \
        rng.uniform(0.2, 1.5, size=(cl.cpu.shape[0], 1))
    cl.mem *= 2.0e6 / 8 / cl.mem.max(axis=1, keepdims=True)
    cache = hs.HistorySums()
    states = {}
    moves = 0
    for t in range(2, 60, int(rng.integers(1, 3))):
        hosts = [dataclasses.replace(h, state=states.get(h.name))
                 for h in cl.planner_hosts()]
        vms = cl.vms(t)
        scratch = pl.plan_round(hosts, vms, algos)
        kept = pl.plan_round(hosts, vms, algos, sums=cache)
        assert kept == scratch, t
        states = scratch.states
        for m in scratch.migrations:
            cl.where[int(m.vm.split('-')[1])] = m.destination
        moves += len(scratch.migrations)
        cl.churn()
    assert cache.reused > 0
