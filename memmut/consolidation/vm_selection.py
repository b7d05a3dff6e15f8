"""VM selection (Neat's ``neat.locals.vm_selection.algorithms``).

Factories ``f(time_step, migration_time, params)`` return
``decide(vms_cpu, vms_ram, state=None) -> (list of VM ids, state)``:
``vms_cpu`` maps a VM id to its CPU history (MHz, newest last) and
``vms_ram`` to its memory (what it is packed on: WSS^max_avg plus headroom,
or its booked memory). One VM is selected per call; the planner calls
again while the host stays overloaded.

Ties are broken by VM id so that decisions are repeatable (Neat's depend on
dict order). ``minimum_migration_time_max_cpu`` returns the smallest-memory
VM with the highest mean of its last ``last_n`` CPU values; unlike Neat's
code it returns one even when all those means are 0.
"""

import random as _random

import numpy as np

from memmut.consolidation import algorithm
from memmut.consolidation import overload


def _last(history):
    return float(history[-1]) if len(history) else 0.0


def _mean_last(history, n):
    tail = history[-n:]
    return float(sum(tail)) / len(tail) if len(tail) else 0.0


def random_choice(vms_cpu, rng):
    return rng.choice(sorted(vms_cpu))


def minimum_utilization(vms_cpu):
    """The VM with the lowest last CPU value."""
    return min(sorted(vms_cpu), key=lambda vm: _last(vms_cpu[vm]))


def minimum_migration_time(vms_ram):
    """The VM with the least memory (the shortest live migration)."""
    return min(sorted(vms_ram), key=lambda vm: vms_ram[vm])


def minimum_migration_time_max_cpu(last_n, vms_cpu, vms_ram):
    """Among the VMs with the least memory, the busiest one."""
    min_ram = min(vms_ram.values())
    candidates = [vm for vm in sorted(vms_ram) if vms_ram[vm] <= min_ram]
    return max(candidates,
               key=lambda vm: (_mean_last(vms_cpu.get(vm, ()), last_n),
                               # max() keeps the first of equals: prefer
                               # the smallest id.
                               -candidates.index(vm)))


def minimum_migration_time_per_cpu(last_n, vms_cpu, vms_ram):
    """The VM that frees the most CPU per MiB to migrate (memmut's).

    Removing VMs one at a time until a CPU-overloaded host recovers, this
    greedy choice keeps the total migration time (memory moved) small for
    the CPU freed. Neat's minimum-migration-time choice assumes memory
    grows with a VM's load (true of flavours, not of working sets): packed
    on WSS, the smallest VMs are mostly idle, and selecting them sheds
    dozens of VMs to free a few GHz. VMs without CPU use come last (the
    least memory first among them).
    """
    def key(vm):
        c = _mean_last(vms_cpu.get(vm, ()), last_n)
        r = max(float(vms_ram[vm]), 1e-9)
        # Larger CPU/MiB first; then less memory; then id.
        return (-(c / r), r, vm)
    return min(vms_ram, key=key)


def _one_vm(choose, among='ram'):
    """``decide`` selecting one VM with ``choose(vms_cpu, vms_ram)``; none
    when the history it chooses ``among`` (``cpu`` or ``ram``) is empty."""
    def decide(vms_cpu, vms_ram, state=None):
        if not (vms_cpu if among == 'cpu' else vms_ram):
            return [], state
        return [choose(vms_cpu, vms_ram)], state
    return decide


def _last_n(params):
    last_n = int(params['last_n'])
    if last_n < 1:
        raise ValueError('last_n must be at least 1')
    return last_n


@algorithm.parameters(seed=None)
def random_factory(time_step, migration_time, params):
    rng = _random.Random(params.get('seed'))
    return _one_vm(lambda cpu, ram: random_choice(cpu, rng), among='cpu')


@algorithm.parameters()
def minimum_utilization_factory(time_step, migration_time, params):
    return _one_vm(lambda cpu, ram: minimum_utilization(cpu), among='cpu')


@algorithm.parameters()
def minimum_migration_time_factory(time_step, migration_time, params):
    return _one_vm(lambda cpu, ram: minimum_migration_time(ram))


@algorithm.parameters(last_n=2)
def minimum_migration_time_max_cpu_factory(time_step, migration_time,
                                           params):
    last_n = _last_n(params)
    return _one_vm(lambda cpu, ram: minimum_migration_time_max_cpu(
        last_n, cpu, ram))


@algorithm.parameters(last_n=2)
def minimum_migration_time_per_cpu_factory(time_step, migration_time,
                                           params):
    last_n = _last_n(params)
    return _one_vm(lambda cpu, ram: minimum_migration_time_per_cpu(
        last_n, cpu, ram))


def longest_relief(window, cpu_target, ram_target, vms_cpu, vms_ram,
                   host_cpu, host_ram, host_cpu_history, host_mem_history,
                   vms_mem, period=0, lead=0):
    """The VMs whose departure keeps the host under its targets longest.

    Over the last ``window`` samples of the host's CPU and memory-load
    histories (the forecast: the recent past repeats), count the samples
    still above ``cpu_target * host_cpu`` or ``ram_target * host_ram``
    without each candidate; pick the candidate leaving the fewest, then
    the least excess (summed overshoot, relative to the targets), then
    the least memory (the shortest migration), then the smallest id;
    repeat on what is left until no sample is above the targets (or no
    candidate is left). The targets sit below the overload thresholds, so
    a host leaves an overload with headroom (hysteresis) instead of just
    under the threshold, and the VMs chosen are those that cause its
    peaks, not the ones that happen to be busy at the last sample.

    With ``period`` > 0 the memory samples also hold the seasonal
    forecast of the next ``lead`` samples: the memory load now plus the
    rise the candidates showed after the same time one ``period`` ago
    (:func:`memmut.consolidation.overload.seasonal_rises`), each
    candidate's share being its last value plus its own rise. A host
    that the seasonal memory forecast declared overloaded while its
    recent samples are under the targets then sends away the VMs that
    rose, not the smallest ones (stop 79: on
    ``memory_spikes`` those moved VMs whose rise was 0, a dozen per
    round, and the host overflowed all the same). The candidates are
    the VMs on the host (those that just arrived and are held back by
    the dwell time count with no rise).
    """
    names = sorted(vms_ram)
    if not names:
        return []
    tc = cpu_target * float(host_cpu)
    tm = ram_target * float(host_ram)

    def tail(series):
        a = np.zeros(window)
        s = np.asarray(series, dtype=float)[-window:]
        if len(s):
            a[window - len(s):] = s
        return a
    hc = tail(host_cpu_history)
    hm = tail(host_mem_history)
    vc = np.array([tail(vms_cpu.get(n, ())) for n in names])
    vm = np.array([tail(vms_mem.get(n, ())) for n in names])
    if period > 0 and lead > 0:
        rise = np.array([overload.seasonal_rises(vms_mem.get(n, ()),
                                                 period, lead)
                         for n in names])
        now = vm[:, -1:]
        hm = np.concatenate([hm, hm[-1] + rise.sum(axis=0)])
        vm = np.concatenate([vm, now + rise], axis=1)
    ram = np.array([float(vms_ram[n]) for n in names])
    left = np.ones(len(names), dtype=bool)
    chosen = []
    while left.any():
        if not ((hc > tc).any() or (hm > tm).any()):
            break
        ac = hc[None, :] - vc
        am = hm[None, :] - vm
        over = (ac > tc).sum(axis=1) + (am > tm).sum(axis=1)
        excess = (np.maximum(0.0, ac - tc).sum(axis=1) / max(tc, 1e-9)
                  + np.maximum(0.0, am - tm).sum(axis=1) / max(tm, 1e-9))
        idx = np.flatnonzero(left)
        # lexicographic: over, excess, ram, position (names are sorted)
        best = min(idx, key=lambda i: (over[i], excess[i], ram[i], i))
        chosen.append(names[best])
        left[best] = False
        hc = hc - vc[best]
        hm = hm - vm[best]
    return chosen


# period 0: no seasonal forecast in the memory samples (memmut's
# default too: stop 79 measured "1d" letting memory spikes through).
@algorithm.parameters(window='1h', cpu_target=0.8, ram_target=0.9,
                      last_n=2, period=0, lead='1h')
def longest_relief_factory(time_step, migration_time, params):
    """Host-aware: the planner passes the host's capacities and
    histories (``decide.host_aware``); without them (a caller that does
    not know the host) it falls back to
    :func:`minimum_migration_time_per_cpu`. ``window``, ``period`` and
    ``lead``: samples or durations
    (:func:`memmut.consolidation.algorithm.samples`)."""
    window = algorithm.samples(params, 'window', time_step, 1)
    cpu_t, ram_t = float(params['cpu_target']), float(params['ram_target'])
    last_n = _last_n(params)
    period = algorithm.samples(params, 'period', time_step)
    lead = algorithm.samples(params, 'lead', time_step)
    if period and lead > period:
        raise ValueError('lead must not exceed period')

    def decide(vms_cpu, vms_ram, state=None, host_cpu=None, host_ram=None,
               host_cpu_history=None, host_mem_history=None, vms_mem=None):
        if not vms_ram:
            return [], state
        if host_cpu is None or host_cpu_history is None:
            return [minimum_migration_time_per_cpu(last_n, vms_cpu,
                                                   vms_ram)], state
        chosen = longest_relief(
            window, cpu_t, ram_t, vms_cpu, vms_ram, host_cpu, host_ram,
            host_cpu_history,
            host_mem_history if host_mem_history is not None else (),
            vms_mem or {}, period, lead)
        if not chosen:    # the detector fired, the targets are met
            chosen = [minimum_migration_time_per_cpu(last_n, vms_cpu,
                                                     vms_ram)]
        return chosen, state
    decide.host_aware = True
    return decide
