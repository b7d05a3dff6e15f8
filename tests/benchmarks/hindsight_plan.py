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


def _fit(load_c, load_m, c, m, cpu_cap, mem_cap):
    """Whether loads (a host's series, or hosts x steps) take ``c`` and
    ``m`` at every step (per host on the last axis)."""
    return (((load_c + c) <= cpu_cap + _EPS).all(axis=-1) &
            ((load_m + m) <= mem_cap + _EPS).all(axis=-1))


def _active(where):
    """Hosts on at each step: those holding a VM alive then."""
    return np.array([len(np.unique(col[col >= 0])) for col in where.T],
                    dtype=float)


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
        return _fit(self.cpu[:, sl], self.mem[:, sl], c, m, self.cpu_cap,
                    self.mem_cap)

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
    return Plan(active=_active(where), where=where, migrations=moves,
                heavy=heavy,
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


def sticky_plan(cpu, mem, alive, cpu_cap, mem_cap, block_steps, budget):
    """A clairvoyant re-packing every ``block_steps`` steps that moves as
    little as it can: each block, the VMs of a host that would overflow
    in the block leave it (the largest at its worst step first), they
    and the new VMs go first-fit decreasing into the hosts that hold
    them through the block, and while the migrations so far stay within
    ``budget`` x the share of the window elapsed, the least loaded
    hosts are emptied into the others when all their VMs fit there.
    Every VM alive in a block is held through it, so no host is ever
    overloaded (a VM larger than a host gets one of its own)."""
    cpu = np.where(alive, np.clip(cpu, 0.0, None), 0.0)
    mem = np.where(alive, np.clip(mem, 0.0, None), 0.0)
    n, n_steps = cpu.shape
    if block_steps < 1:
        raise ValueError('block_steps must be at least 1')
    host_of = np.full(n, -1)
    where = np.full((n, n_steps), -1)
    moves = 0
    next_id = 0
    for a in range(0, n_steps, block_steps):
        b = min(n_steps, a + block_steps)
        live = np.flatnonzero(alive[:, a:b].any(axis=1))
        was = set(np.flatnonzero(alive[:, a - 1]).tolist()) if a else set()
        c, m = cpu[:, a:b], mem[:, a:b]
        size = np.maximum(c.max(axis=1) / cpu_cap, m.max(axis=1) / mem_cap)
        members = {}
        for v in live:
            if host_of[v] >= 0:
                members.setdefault(host_of[v], []).append(v)
        load = {h: [c[vs].sum(axis=0), m[vs].sum(axis=0)]
                for h, vs in members.items()}
        homeless = [v for v in live if host_of[v] < 0]
        # hosts that would overflow shed VMs, the largest at the worst
        # step first
        for h, vs in members.items():
            lc, lm = load[h]
            while len(vs) and ((lc > cpu_cap + _EPS).any() or
                               (lm > mem_cap + _EPS).any()):
                worst = int(np.argmax(np.maximum(lc / cpu_cap,
                                                 lm / mem_cap)))
                v = max(vs, key=lambda x: max(c[x, worst] / cpu_cap,
                                              m[x, worst] / mem_cap))
                vs.remove(v)
                lc -= c[v]
                lm -= m[v]
                homeless.append(v)
        members = {h: vs for h, vs in members.items() if vs}
        load = {h: load[h] for h in members}

        def place(v):
            for h in sorted(members):
                if _fit(load[h][0], load[h][1], c[v], m[v], cpu_cap,
                        mem_cap):
                    return h
            return None

        def put(v, h):
            nonlocal next_id
            if h is None:
                h = next_id
                next_id += 1
                members[h] = []
                load[h] = [np.zeros(b - a), np.zeros(b - a)]
            members[h].append(v)
            load[h][0] = load[h][0] + c[v]
            load[h][1] = load[h][1] + m[v]
            return h

        for v in sorted(homeless, key=lambda x: -size[x]):
            h = put(v, place(v))
            if host_of[v] >= 0 and h != host_of[v] and v in was:
                moves += 1
            host_of[v] = h
        # empty the least loaded hosts while the budget allows
        allowance = budget * b / n_steps - moves
        for h in sorted(members, key=lambda x: load[x][0].sum()):
            vs = members.get(h)
            if not vs or len(vs) > allowance:
                continue
            trial_members = {k: list(x) for k, x in members.items()}
            trial_load = {k: [x[0].copy(), x[1].copy()]
                          for k, x in load.items()}
            dest_of = {}
            for v in sorted(vs, key=lambda x: -size[x]):
                dest = next((k for k in sorted(trial_members)
                             if k != h and trial_members[k] and _fit(
                                 trial_load[k][0], trial_load[k][1], c[v],
                                 m[v], cpu_cap, mem_cap)), None)
                if dest is None:
                    break
                dest_of[v] = dest
                trial_members[dest].append(v)
                trial_load[dest][0] += c[v]
                trial_load[dest][1] += m[v]
            if len(dest_of) < len(vs):
                continue
            for v, dest in dest_of.items():
                if v in was:
                    moves += 1
                    allowance -= 1
                host_of[v] = dest
            trial_members[h] = []
            members, load = trial_members, trial_load
        for h, vs in members.items():
            for v in vs:
                where[v, a:b] = np.where(alive[v, a:b], h, -1)
    return Plan(active=_active(where), where=where, migrations=moves, heavy=n,
                block_steps=block_steps)


def best_sticky(cpu, mem, alive, cpu_cap, mem_cap, max_migrations,
                block_steps=(12, 48), shares=(1.0, 0.9, 0.8, 0.6, 0.0)):
    """The :func:`sticky_plan` of fewest mean active hosts whose
    migrations, forced moves included, stay within ``max_migrations``
    (its evacuations given ``shares`` of the budget); None when the
    forced moves alone exceed it."""
    best = None
    for b in block_steps:
        for share in shares:
            p = sticky_plan(cpu, mem, alive, cpu_cap, mem_cap, b,
                            share * max_migrations)
            if p.migrations <= max_migrations and (
                    best is None or p.mean_hosts < best.mean_hosts):
                best = p
    return best
