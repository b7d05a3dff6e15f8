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

Profiles (``profile``) change the character of the trace, to check that
consolidation settings are not tuned to one workload (issue 19):

``default``
    the trace above;
``bursty``
    burstier CPU: bursts five times as frequent and up to two hours long,
    and heavier noise (log-normal sigma 0.5 instead of 0.25);
``memory_spikes``
    correlated memory spikes: the VMs form ten groups; each group has a
    spike once or twice a day at a common time (a batch job, a backup),
    during which every VM of the group grows its working set to 60-95 %
    of its booking for 30 to 90 minutes;
``dense``
    more VMs per host: small flavours (512 MiB to 4 GiB, one vCPU up to
    2 GiB) and lighter CPU (about 3 % of a vCPU on average), so three to
    four times as many VMs share a host;
``diurnal``
    a shared daily cycle: every VM's CPU follows the same day (peak in the
    afternoon, a phase jitter of an hour) with an amplitude of 80 %, and
    its working set rises by up to a third with it.

Held-out profiles (:data:`HELD_OUT_PROFILES`): no default of memmut was
chosen on them; they check that the defaults chosen on the five above
carry over to a trace of yet another character (issue 19, stop 80):

``churn``
    short-lived VMs, as in a CI or batch cloud: ``n_vms`` slots, each
    re-occupied by a new VM (new flavour, shape and load) as soon as the
    last one leaves, lifetimes log-uniform between 2 and 48 hours; about
    ``n_vms`` VMs at any time, most with less than a day of history;
``heavy_tail``
    CPU held by few VMs, as on the Bitbrains trace: one VM in ten busy
    (30-70 % of its vCPUs on average, larger flavours more likely), the
    others at half the default profile's load;
``memory_growth``
    working sets that creep: every VM's working set grows by 0-20 % of its
    booking a day up to a plateau 10-30 % of its booking above its shape
    (a cache warming up), and one VM in three leaks instead (10-40 % a
    day) until it is restarted (every 1 to 3 days, the working set
    falling back to its shape).
"""

import numpy as np

from memmut.simulator import trace as trace_mod
from memmut.evaluation import workloads

FLAVOURS_MB = np.array([1024, 2048, 4096, 8192, 16384, 32768])
FLAVOUR_P = np.array([0.15, 0.25, 0.25, 0.2, 0.1, 0.05])
CORE_MHZ = 2600.0


TUNED_PROFILES = ('default', 'bursty', 'memory_spikes', 'dense', 'diurnal')
HELD_OUT_PROFILES = ('churn', 'heavy_tail', 'memory_growth')
PROFILES = TUNED_PROFILES + HELD_OUT_PROFILES
DENSE_FLAVOURS_MB = np.array([512, 1024, 2048, 4096])
DENSE_FLAVOUR_P = np.array([0.3, 0.35, 0.25, 0.1])


def generate(n_vms=100, days=2.0, seed=0, step=300.0, profile='default'):
    """A :class:`memmut.simulator.trace.Trace` of ``n_vms`` VMs."""
    if n_vms < 1:
        raise ValueError('need at least one VM')
    if days <= 0:
        raise ValueError('days must be positive')
    if profile not in PROFILES:
        raise ValueError('unknown profile %r (known: %s)'
                         % (profile, ', '.join(PROFILES)))
    rng = np.random.default_rng(seed)
    # The profiles' own draws come from a second stream, so the default
    # profile gives the same trace as before profiles existed.
    prng = np.random.default_rng([seed, 19])
    t_steps = max(2, int(round(days * 86400.0 / step)))
    t = np.arange(t_steps)
    shapes = sorted(workloads.SHAPES)
    lives = None
    if profile == 'churn':
        # One row per VM: the slots' successive tenants.
        lives = _churn_lives(n_vms, t_steps, step, prng)
        n_vms = len(lives)
    if profile == 'dense':
        booked = rng.choice(DENSE_FLAVOURS_MB, size=n_vms,
                            p=DENSE_FLAVOUR_P).astype(float)
        cores = np.maximum(1, booked // 2048).astype(float)
    else:
        booked = rng.choice(FLAVOURS_MB, size=n_vms,
                            p=FLAVOUR_P).astype(float)
        cores = np.maximum(1, booked // 4096).astype(float)
    cap = cores * CORE_MHZ
    mem = np.zeros((n_vms, t_steps))
    cpu = np.zeros((n_vms, t_steps))
    first = np.zeros(n_vms, dtype=int)
    last = np.full(n_vms, t_steps - 1, dtype=int)
    day_steps = 86400.0 / step
    base_mean = 0.03 if profile == 'dense' else 0.06
    burst_p = 0.02 if profile == 'bursty' else 0.004
    burst_max = 25 if profile == 'bursty' else 13
    noise_sd = 0.5 if profile == 'bursty' else 0.25
    # diurnal: one shared day, peak at 15:00 (phase jitter +-1 h)
    shared_phase = -2 * np.pi * (15.0 / 24.0 - 0.25)
    # memory_spikes: group spike times (steps within a day)
    groups = prng.integers(0, 10, n_vms)
    spikes = [sorted(prng.integers(0, int(day_steps), prng.integers(1, 3)))
              for _ in range(10)]
    spike_len = [int(prng.integers(6, 19)) for _ in range(10)]
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

        base = cap[v] * min(0.5, rng.lognormal(np.log(base_mean), 0.6))
        if profile == 'heavy_tail':
            # Busy VMs more likely among the larger flavours (a database,
            # a build server), the rest at half the load.
            busy = prng.random() < 0.05 + 0.1 * min(1.0, cores[v] / 4.0)
            base = cap[v] * prng.uniform(0.3, 0.7) if busy else base / 2
        if profile == 'diurnal':
            jitter = prng.uniform(-1, 1) * 2 * np.pi / 24.0
            wave = np.sin(2 * np.pi * t / day_steps + shared_phase + jitter)
            daily = 1.0 + 0.8 * wave
            mem[v] = np.clip(mem[v] * (1.0 + 0.33 * np.maximum(0.0, wave)),
                             1.0, booked[v])
        else:
            daily = 1.0 + 0.5 * np.sin(2 * np.pi * t / day_steps
                                       + rng.uniform(0, 2 * np.pi))
        if profile == 'diurnal':     # keep the default stream's draws
            rng.uniform(0, 2 * np.pi)
        load = base * daily * rng.lognormal(0.0, noise_sd, t_steps)
        bursts = rng.random(t_steps) < burst_p
        for b in np.flatnonzero(bursts):
            length = int(rng.integers(3, burst_max))
            load[b:b + length] = np.maximum(
                load[b:b + length], cap[v] * rng.uniform(0.5, 1.0))
        cpu[v] = np.clip(load, 0.0, cap[v])

        if profile == 'memory_spikes':
            g = groups[v]
            level = booked[v] * prng.uniform(0.6, 0.95)
            for day in range(int(np.ceil(t_steps / day_steps))):
                for s0 in spikes[g]:
                    a = int(day * day_steps + s0)
                    mem[v, a:a + spike_len[g]] = np.maximum(
                        mem[v, a:a + spike_len[g]], level)

        if profile == 'memory_growth':
            mem[v] = np.clip(mem[v] + _creep_mb(booked[v], t, day_steps,
                                                prng),
                             1.0, booked[v])

        r = rng.random()
        if lives is not None:
            first[v], last[v] = lives[v]
        elif r < 0.2:
            first[v] = int(rng.integers(1, max(2, t_steps // 2)))
        elif r < 0.3:
            last[v] = int(rng.integers(t_steps // 2, t_steps))
    alive = (t[None, :] >= first[:, None]) & (t[None, :] <= last[:, None])
    mem[~alive] = 0.0
    cpu[~alive] = 0.0
    source = 'synthetic(vms=%d, days=%g, seed=%d%s)' % (
        n_vms, days, seed,
        '' if profile == 'default' else ', profile=%s' % profile)
    return trace_mod.Trace(
        names=['syn-%04d' % i for i in range(n_vms)], step=float(step),
        start=0.0, cpu=cpu, mem=mem, booked=booked, cpu_capacity=cap,
        first=first, last=last, source=source)


def _churn_lives(slots, t_steps, step, rng):
    """``(first, last)`` steps of every tenant of ``slots`` slots, each
    taken again the step after its tenant leaves; lifetimes log-uniform
    between 2 and 48 hours, the first tenants already some way into
    theirs."""
    lo, hi = np.log(2 * 3600.0 / step), np.log(48 * 3600.0 / step)
    lives = []
    for _ in range(slots):
        a = -int(rng.integers(0, int(np.exp(hi))))
        while a < t_steps:
            b = a + max(1, int(np.exp(rng.uniform(lo, hi))))
            if b > 0:
                lives.append((max(0, a), min(b, t_steps) - 1))
            a = b
    return lives


def _creep_mb(booked, t, day_steps, rng):
    """What a creeping working set adds at each step (``memory_growth``):
    0-20 % of the booking a day, or for one VM in three a leak of 10-40 %
    a day reset by a restart every 1 to 3 days."""
    if rng.random() < 1.0 / 3.0:
        rate = rng.uniform(0.1, 0.4)
        period = rng.uniform(1.0, 3.0) * day_steps
        age = (t + rng.uniform(0, period)) % period
        return booked * rate * age / day_steps
    # a cache that warms up to a plateau
    rate = rng.uniform(0.0, 0.2)
    return np.minimum(booked * rate * t / day_steps,
                      booked * rng.uniform(0.1, 0.3))
