"""A seeded synthetic trace: the simulator's default, no data needed.

Each VM gets a flavour (booked memory and vCPUs), a working-set shape from
:mod:`memmut.evaluation.workloads`
(W1 rising, W2 falling, W3 hill, W4 valley, W5
oscillating) scaled to a peak between 10 % and 60 % of its booking, each
shape step lasting 1 to 6 hours and the shape repeating, with 4 %
multiplicative noise; and a CPU series: a per-VM base load (log-normal,
about 8 % of its vCPUs on average, like the Bitbrains VMs) following a
daily sine with a random phase, noise, and occasional bursts of 15 to 60
minutes at 50-100 % of its vCPUs. Most VMs exist from the start; 20 %
arrive during the first half and 10 % leave during the second.

The same seed gives the same trace.
"""

import numpy as np

from memmut.simulator import trace as trace_mod
from memmut.evaluation import workloads

FLAVOURS_MB = np.array([1024, 2048, 4096, 8192, 16384, 32768])
FLAVOUR_P = np.array([0.15, 0.25, 0.25, 0.2, 0.1, 0.05])
CORE_MHZ = 2600.0


def generate(n_vms=100, days=2.0, seed=0, step=300.0):
    """A :class:`memmut.simulator.trace.Trace` of ``n_vms`` VMs."""
    if n_vms < 1:
        raise ValueError('need at least one VM')
    if days <= 0:
        raise ValueError('days must be positive')
    rng = np.random.default_rng(seed)
    t_steps = max(2, int(round(days * 86400.0 / step)))
    t = np.arange(t_steps)
    shapes = sorted(workloads.SHAPES)
    booked = rng.choice(FLAVOURS_MB, size=n_vms, p=FLAVOUR_P).astype(float)
    cores = np.maximum(1, booked // 4096).astype(float)
    cap = cores * CORE_MHZ
    mem = np.zeros((n_vms, t_steps))
    cpu = np.zeros((n_vms, t_steps))
    first = np.zeros(n_vms, dtype=int)
    last = np.full(n_vms, t_steps - 1, dtype=int)
    day_steps = 86400.0 / step
    for v in range(n_vms):
        fractions = np.array(workloads.SHAPES[shapes[rng.integers(
            len(shapes))]])
        peak = booked[v] * rng.uniform(0.1, 0.6)
        step_len = int(rng.integers(int(3600 / step), int(6 * 3600 / step)
                                    + 1))
        phase = int(rng.integers(len(fractions) * step_len))
        f = fractions[((t + phase) // step_len) % len(fractions)]
        noise = rng.normal(1.0, 0.04, t_steps)
        mem[v] = np.clip(peak * f * noise, 1.0, booked[v])

        base = cap[v] * min(0.5, rng.lognormal(np.log(0.06), 0.6))
        daily = 1.0 + 0.5 * np.sin(2 * np.pi * t / day_steps
                                   + rng.uniform(0, 2 * np.pi))
        load = base * daily * rng.lognormal(0.0, 0.25, t_steps)
        bursts = rng.random(t_steps) < 0.004
        for b in np.flatnonzero(bursts):
            length = int(rng.integers(3, 13))
            load[b:b + length] = np.maximum(
                load[b:b + length], cap[v] * rng.uniform(0.5, 1.0))
        cpu[v] = np.clip(load, 0.0, cap[v])

        r = rng.random()
        if r < 0.2:
            first[v] = int(rng.integers(1, max(2, t_steps // 2)))
        elif r < 0.3:
            last[v] = int(rng.integers(t_steps // 2, t_steps))
    alive = (t[None, :] >= first[:, None]) & (t[None, :] <= last[:, None])
    mem[~alive] = 0.0
    cpu[~alive] = 0.0
    return trace_mod.Trace(
        names=['syn-%04d' % i for i in range(n_vms)], step=float(step),
        start=0.0, cpu=cpu, mem=mem, booked=booked, cpu_capacity=cap,
        first=first, last=last,
        source='synthetic(vms=%d, days=%g, seed=%d)' % (n_vms, days, seed))
