"""A plan made in hindsight within issue 19's migration budget.

:mod:`memmut.simulator.budget_bound` bounds from below what any planner
within the migration and CPU-overload budgets needs; this module builds
an actual plan, knowing the whole trace, that spends the budget the way
that bound suggests (few VMs carry most of the CPU):

* the *light* VMs (all but the ``heavy`` ones) never move: they are
  packed once, first-fit decreasing by their peak, each into the first
  host whose summed CPU and memory *series* over the window stay within
  capacity with it (the peak of the sum, not the sum of the peaks);
* the *heavy* VMs are packed anew every ``block`` steps into what the
  light ones leave over that block (the same series test), staying on
  their host while they fit, the largest first;
* a host is on at a step when one of its VMs is alive then;
* a VM larger than a host's capacity (possible at fill targets below
  100 %) gets a host of its own.

Otherwise it never overloads a host (every step is checked), so its
active hosts are achievable with the trace known in advance and no CPU
overload: an
upper bound on what a clairvoyant planner within the budget needs, where
the budget bound is a lower bound. The gap between it and memmut's
planner is what not knowing the future costs (and the planner's
headroom); the gap between it and the bound, the bound's looseness and
this heuristic's.
"""

import dataclasses

import numpy as np

_EPS = 1e-9


class _Hosts:
    """Hosts with their CPU and memory load series over the steps."""

    def __init__(self, n_steps, cpu_cap, mem_cap):
        self.cpu = np.zeros((0, n_steps))
        self.mem = np.zeros((0, n_steps))
        self.cpu_cap = cpu_cap
        self.mem_cap = mem_cap

    def fits(self, c, m, sl):
        """Hosts that take series ``c``, ``m`` over ``sl`` (boolean)."""
        if not len(self.cpu):
            return np.zeros(0, dtype=bool)
        return (((self.cpu[:, sl] + c) <= self.cpu_cap + _EPS).all(axis=1) &
                ((self.mem[:, sl] + m) <= self.mem_cap + _EPS).all(axis=1))

    def add(self, h, c, m, sl):
        if h == len(self.cpu):
            self.cpu = np.vstack([self.cpu, np.zeros(self.cpu.shape[1])])
            self.mem = np.vstack([self.mem, np.zeros(self.mem.shape[1])])
        self.cpu[h, sl] += c
        self.mem[h, sl] += m

    def first_fit(self, c, m, sl):
        ok = np.flatnonzero(self.fits(c, m, sl))
        return int(ok[0]) if len(ok) else len(self.cpu)


@dataclasses.dataclass
class Plan:
    active: np.ndarray          # hosts on at each step
    where: np.ndarray           # (VMs, steps): its host, -1 not alive
    migrations: int             # heavy VMs moved between blocks
    heavy: int
    block_steps: int

    @property
    def mean_hosts(self):
        return float(self.active.mean()) if len(self.active) else 0.0


def plan(cpu, mem, alive, cpu_cap, mem_cap, heavy, block_steps):
    """The two-tier plan of the ``heavy`` VMs of most CPU (over the
    window) re-packed every ``block_steps`` steps, the rest never
    moved."""
    cpu = np.where(alive, np.clip(cpu, 0.0, None), 0.0)
    mem = np.where(alive, np.clip(mem, 0.0, None), 0.0)
    n, n_steps = cpu.shape
    if block_steps < 1:
        raise ValueError('block_steps must be at least 1')
    by_cpu = np.argsort(-cpu.sum(axis=1), kind='stable')
    heavy_set = set(by_cpu[:heavy].tolist())
    hosts = _Hosts(n_steps, cpu_cap, mem_cap)
    where = np.full((n, n_steps), -1)
    every = slice(0, n_steps)
    size = np.maximum(cpu.max(axis=1) / cpu_cap, mem.max(axis=1) / mem_cap)
    for v in np.argsort(-size, kind='stable'):
        if v in heavy_set or not alive[v].any():
            continue
        h = hosts.first_fit(cpu[v], mem[v], every)
        hosts.add(h, cpu[v], mem[v], every)
        where[v, alive[v]] = h
    moves = 0
    last = {}
    heavy_order = [v for v in np.argsort(-size, kind='stable')
                   if v in heavy_set]
    for a in range(0, n_steps, block_steps):
        sl = slice(a, min(n_steps, a + block_steps))
        for v in heavy_order:
            if not alive[v, sl].any():
                continue
            c, m = cpu[v, sl], mem[v, sl]
            prev = last.get(v)
            if prev is not None and hosts.fits(c, m, sl)[prev]:
                h = prev
            else:
                h = hosts.first_fit(c, m, sl)
                if prev is not None and alive[v, a - 1] and alive[v, a]:
                    moves += 1
            hosts.add(h, c, m, sl)
            where[v, sl] = np.where(alive[v, sl], h, -1)
            last[v] = h
    active = np.zeros(n_steps)
    for t in range(n_steps):
        placed = where[:, t]
        active[t] = len(np.unique(placed[placed >= 0]))
    return Plan(active=active, where=where, migrations=moves, heavy=heavy,
                block_steps=block_steps)


def best_plan(cpu, mem, alive, cpu_cap, mem_cap, max_migrations,
              heavy_counts=(0, 5, 10, 20, 30, 50, 80, 120),
              block_steps=(12, 24, 48, 96, 288)):
    """The plan of fewest mean active hosts within ``max_migrations``
    over the tried heavy counts and block lengths."""
    best = None
    for k in heavy_counts:
        for b in (block_steps if k else (cpu.shape[1],)):
            p = plan(cpu, mem, alive, cpu_cap, mem_cap, k, b)
            if p.migrations <= max_migrations and (
                    best is None or p.mean_hosts < best.mean_hosts):
                best = p
    return best
