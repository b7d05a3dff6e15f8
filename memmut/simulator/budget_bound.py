"""A lower bound on active hosts for planners held to budgets (issue 19).

The per-step lower bound (:func:`memmut.simulator.quality.lower_bound`)
re-packs every step for free. A planner held to issue 19's other goals
may not: it may move at most ``M`` VMs over the window (migrations per
VM-day) and leave hosts CPU-overloaded for at most ``K`` host-steps (CPU
overload time). This module computes, from the trace alone, how many
hosts *any* planner within those two budgets must keep on, on average.

The argument, for one block ``B`` of consecutive steps:

* Let ``S`` be the VMs alive through ``B`` that no migration moves inside
  ``B``, and ``H`` the hosts they sit on. Every host of ``H`` is on at
  every step of ``B``, so ``N(t) >= |H|`` there.
* At a step where no host is overloaded, ``|H| * C >= sum_S cpu(t)``
  (``C`` a host's CPU). So if ``k`` steps of ``B`` have an overloaded
  host, ``|H|`` is at least the ``(k+1)``-th largest of
  ``f(t) = sum_S cpu(t) / C`` over ``B``.
* ``S`` misses at most ``m`` of the VMs alive through ``B``, ``m`` the
  migrations inside ``B``, and the planner chooses which. Two lower
  bounds of ``f``'s ``(k+1)``-th largest hold whatever it chose:
  (a) per step, ``f(t) >= (F(t) - top_m(t)) / C`` with ``F`` the sum over
  all VMs alive through ``B`` and ``top_m(t)`` its ``m`` largest at
  ``t``, so the ``(k+1)``-th largest of that; (b) over the ``q`` steps
  ``Q`` of ``B`` with the largest ``F``, at most ``k`` of which lie above
  the ``(k+1)``-th largest, ``(sum_Q F - top_m(sum_Q cpu_v) - k *
  max_Q F) / (C * (q - k))``, ``top_m(sum_Q cpu_v)`` the ``m`` largest
  per-VM sums over ``Q`` (the VMs the planner would best move).
* ``|H|`` is an integer: the bound rounds up. Call it ``h_B(m, k)``.
* The moved VMs still need CPU: at a step without an overloaded host,
  ``N(t)`` is also at least ``ceil(sum cpu(t) / C)`` over every VM alive
  then (the per-step bound on CPU). So the block needs at least
  ``sum_t max(h_B, lb(t))`` host-steps, less the ``k`` largest excesses
  of ``lb(t)`` over ``h_B`` (the overloaded steps, at best for the
  planner): ``v_B(m, k)``.

Summed over the blocks of a partition, ``sum_t N(t) >= sum_B v_B(m_B,
k_B)`` for the planner's own split of its budgets (``sum m_B <= M``,
``sum k_B <= K``: a step with an overloaded host is at least one
overloaded host-step). The least of that over all splits is bounded
from below by Lagrangian duality: for any ``lambda, mu >= 0``,
``sum_B min_{m,k} (v_B(m, k) + lambda m + mu k) - lambda M - mu K``.
The result is the largest over a grid of multipliers and over several
block lengths (every partition gives a valid bound). Memory is left out
(the bound holds without it; on the Bitbrains windows CPU is what binds
the per-step bound), as are copies' CPU and VMs that arrive or leave
inside a block: each omission only lowers the bound.

It is a bound, not a plan: no planner is known to reach it.
"""

import dataclasses
import math

import numpy as np

# block lengths tried, in seconds: 5 minutes to a day
BLOCK_SECONDS = (300, 900, 1800, 3600, 7200, 14400, 28800, 43200, 86400)
# multipliers tried, in host-steps per migration / per overloaded step
_GRID = (0.0,) + tuple(2.0 ** e for e in range(-8, 13))


@dataclasses.dataclass(frozen=True)
class Budgets:
    """What a planner may spend over the window: ``migrations`` (VMs
    moved) and ``overloaded_host_steps`` (steps x hosts CPU-overloaded)."""
    migrations: float
    overloaded_host_steps: float

    def __post_init__(self):
        if self.migrations < 0 or self.overloaded_host_steps < 0:
            raise ValueError('budgets must not be negative')

    @property
    def whole(self):
        """``(migrations, overloaded host-steps)`` as the whole numbers
        a plan can spend."""
        return (int(math.floor(self.migrations + 1e-9)),
                int(math.floor(self.overloaded_host_steps + 1e-9)))


def goal_budgets(alive, step_seconds, per_vm_day, overload_fraction,
                 host_steps):
    """Issue 19's budgets for a window: ``per_vm_day`` migrations per
    VM-day of the VMs alive in it, and ``overload_fraction`` of
    ``host_steps`` (the host-steps a planner that meets the distance goal
    may keep on, e.g. 1.15 x the per-step bound's sum)."""
    vm_days = float(np.count_nonzero(alive)) * step_seconds / 86400.0
    return Budgets(migrations=float(per_vm_day * vm_days),
                   overloaded_host_steps=float(overload_fraction *
                                               host_steps))


def block_table(cpu, alive, capacity, m_max, k_max):
    """``h[m, k]``: hosts a block's unmoved VMs need whichever ``m`` VMs
    the planner moves inside the block and whichever ``k`` of its steps
    have an overloaded host (integers, the module's (a) and (b)).

    ``cpu``, ``alive``: (VMs, steps of the block); ``capacity``: a host's
    CPU in the same unit."""
    if capacity <= 0:
        raise ValueError('capacity must be positive')
    cpu = np.asarray(cpu, dtype=float)
    through = np.asarray(alive, dtype=bool).all(axis=1)
    c = np.clip(cpu[through], 0.0, None)
    n, length = c.shape
    m_max = max(0, min(int(m_max), n))
    k_max = max(0, min(int(k_max), length))
    table = np.zeros((m_max + 1, k_max + 1))
    if n == 0 or length == 0:
        return table.astype(int)
    total = c.sum(axis=0)
    # (a): the (k+1)-th largest over the block of (F(t) - top_m(t)) / C
    top = np.vstack([np.zeros(length),
                     np.cumsum(-np.sort(-c, axis=0), axis=0)])[:m_max + 1]
    g = -np.sort(-(total[None, :] - top), axis=1) / capacity
    ks = np.arange(k_max + 1)
    table = np.maximum(table, np.where(ks[None, :] < length,
                                       g[:, np.minimum(ks, length - 1)],
                                       0.0))
    # (b): averaged over Q, the q steps of the largest F
    order = np.argsort(-total, kind='stable')
    per_vm = np.cumsum(c[:, order], axis=1)          # sum over Q per VM
    sum_q = np.cumsum(total[order])
    peak = total[order[0]]
    for q in range(1, length + 1):
        top_q = np.concatenate([[0.0], np.cumsum(-np.sort(-per_vm[:, q - 1]))
                                ])[:m_max + 1]
        kk = ks[ks < q]
        val = ((sum_q[q - 1] - top_q[:, None] - kk[None, :] * peak)
               / (capacity * (q - kk[None, :])))
        table[:, :len(kk)] = np.maximum(table[:, :len(kk)], val)
    return np.ceil(table - 1e-9).astype(int)


def blocks(n_steps, length):
    """Consecutive ``(start, stop)`` blocks of ``length`` steps (the last
    may be shorter)."""
    if length < 1:
        raise ValueError('length must be at least 1')
    return [(a, min(n_steps, a + length))
            for a in range(0, n_steps, length)]


def block_host_steps(table, per_step):
    """Host-steps a block needs: at every step at least its ``h[m, k]``
    (the unmoved VMs' hosts) and, at a step without an overloaded host,
    at least ``per_step`` there (every VM alive then, moved or not, needs
    CPU somewhere); the ``k`` overloaded steps drop the largest excesses
    of ``per_step`` over ``h``. Returns a table like ``table``."""
    h = np.asarray(table, dtype=float)
    lb = np.asarray(per_step, dtype=float)
    excess = -np.sort(-np.maximum(lb[None, None, :] - h[:, :, None], 0.0),
                      axis=2)
    dropped = np.concatenate([np.zeros(h.shape[:2] + (1,)),
                              np.cumsum(excess, axis=2)], axis=2)
    k = np.minimum(np.arange(h.shape[1]), len(lb))
    return (len(lb) * h + dropped[:, :, -1] -
            dropped[:, np.arange(h.shape[1]), k])


def dual_bound(tables, budgets, grid=_GRID):
    """Lower bound on ``sum_t N(t)`` from each block's table of
    host-steps (:func:`block_host_steps`), by Lagrangian duality over the
    two budgets; returns ``(bound, lambda, mu)``. Every pair of
    multipliers gives a valid bound; the best of a coarse grid is
    refined around it."""
    m_cap, k_cap = budgets.whole
    groups = {}
    for t in tables:
        t = np.asarray(t, dtype=float)[:m_cap + 1, :k_cap + 1]
        groups.setdefault(t.shape, []).append(t)
    stacks = []
    for shape, ts in groups.items():
        m = np.arange(shape[0], dtype=float)[None, :, None]
        k = np.arange(shape[1], dtype=float)[None, None, :]
        stacks.append((np.stack(ts), m, k))

    def value(lam, mu):
        total = -lam * budgets.migrations - mu * budgets.overloaded_host_steps
        for t, m, k in stacks:
            total += float((t + lam * m + mu * k).min(axis=(1, 2)).sum())
        return total

    best = max((value(lam, mu), lam, mu) for lam in grid for mu in grid)
    for factor in (2.0 ** 0.25, 2.0 ** 0.125):
        steps = (1 / factor, 1.0, factor)
        lam0, mu0 = best[1], best[2]
        best = max([best] + [(value(lam0 * f, mu0 * g), lam0 * f, mu0 * g)
                             for f in steps for g in steps])
    return best


@dataclasses.dataclass
class Result:
    mean_hosts: float          # lower bound on the mean active hosts
    block_steps: int           # the block length that gave it
    multipliers: tuple         # (lambda, mu) at the best
    by_block_steps: dict       # block length -> its bound (mean hosts)


def budget_bound(cpu, alive, capacity, budgets, step_seconds,
                 block_seconds=BLOCK_SECONDS):
    """Lower bound on the mean active hosts over the steps of ``cpu``
    (VMs x steps) for any planner within ``budgets``; the best over
    ``block_seconds``."""
    cpu = np.asarray(cpu, dtype=float)
    alive = np.asarray(alive, dtype=bool)
    if cpu.shape != alive.shape:
        raise ValueError('cpu and alive must have the same shape')
    n_steps = cpu.shape[1]
    if n_steps == 0:
        raise ValueError('no steps')
    m_max, k_max = budgets.whole
    per_step = np.ceil(np.where(alive, np.clip(cpu, 0.0, None), 0.0)
                       .sum(axis=0) / capacity - 1e-9)
    found = {}
    best = None
    for seconds in block_seconds:
        length = min(n_steps, max(1, int(round(seconds / step_seconds))))
        if length in found:
            continue
        tables = [block_host_steps(
            block_table(cpu[:, a:b], alive[:, a:b], capacity, m_max, k_max),
            per_step[a:b]) for a, b in blocks(n_steps, length)]
        value, lam, mu = dual_bound(tables, budgets)
        found[length] = float(max(0.0, value) / n_steps)
        if best is None or found[length] > best.mean_hosts:
            best = Result(found[length], length, (lam, mu), found)
    return best
