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

from memmut.consolidation import algorithm


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
