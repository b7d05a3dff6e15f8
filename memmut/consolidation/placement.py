"""VM placement (Neat's ``neat.globals.vm_placement.bin_packing``).

The factory ``best_fit_decreasing_factory(time_step, migration_time,
params)`` returns ``decide(hosts_cpu_usage, hosts_cpu_total,
hosts_ram_usage, hosts_ram_total, inactive_hosts_cpu, inactive_hosts_ram,
vms_cpu, vms_ram, state=None) -> (mapping, state)`` with Neat's
arguments: per active host its CPU use and capacity (MHz) and memory use
and capacity; per inactive (suspended) host its capacities; per VM its CPU
history (MHz, newest last) and memory. ``mapping`` maps every VM to a
host, or is ``{}`` when they cannot all be placed (all or nothing).

Best Fit Decreasing: VMs by decreasing CPU demand (the mean of their last
``last_n_vm_cpu`` values), each onto the active host with the least
available CPU that still fits its CPU and memory (ties: less memory, then
host name); when none fits, the next inactive host (smallest first) is
switched on. Available = ``threshold * capacity - usage`` per resource
(``cpu_threshold`` 0.8, ``ram_threshold`` 0.95). Unlike Neat's code the
thresholds also apply to the hosts it switches on (Neat offered them at
full capacity) and available amounts are not truncated to integers.
"""

import numpy as np

from memmut.consolidation import algorithm


def _mean_last(history, n):
    if np.isscalar(history):
        return float(history)
    tail = history[-n:]
    return float(sum(tail)) / len(tail) if len(tail) else 0.0


def get_available_resources(threshold, usage, total):
    """Map host -> ``threshold * total - usage``."""
    return {h: threshold * total[h] - u for h, u in usage.items()}


def best_fit_decreasing(last_n_vm_cpu, hosts_cpu, hosts_ram,
                        inactive_hosts_cpu, inactive_hosts_ram,
                        vms_cpu, vms_ram):
    """BFD on available capacities; returns VM -> host or ``{}``."""
    vms = sorted(((_mean_last(vms_cpu[vm], last_n_vm_cpu),
                   float(vms_ram[vm]), vm) for vm in vms_cpu),
                 key=lambda t: (-t[0], -t[1], t[2]))
    names = sorted(hosts_cpu)
    cpu = np.array([hosts_cpu[h] for h in names], dtype=float)
    ram = np.array([hosts_ram[h] for h in names], dtype=float)
    order = np.arange(len(names), dtype=float)
    inactive = sorted((inactive_hosts_cpu[h], inactive_hosts_ram[h], h)
                      for h in inactive_hosts_cpu)
    inactive.reverse()                         # pop() takes the smallest
    mapping = {}
    for vm_cpu, vm_ram, vm in vms:
        while True:
            idx = np.flatnonzero((cpu >= vm_cpu) & (ram >= vm_ram))
            if len(idx):
                c = cpu[idx]
                idx = idx[c == c.min()]
                r = ram[idx]
                idx = idx[r == r.min()]
                # Host names sort like their position in ``names`` for
                # hosts known at the start; switched-on ones come after.
                best = int(idx[np.argmin(order[idx])])
                mapping[vm] = names[best]
                cpu[best] -= vm_cpu
                ram[best] -= vm_ram
                break
            if not inactive:
                return {}
            c0, r0, h = inactive.pop()
            names.append(h)
            cpu = np.append(cpu, float(c0))
            ram = np.append(ram, float(r0))
            order = np.append(order, float(len(order)))
    return mapping


@algorithm.parameters(cpu_threshold=0.8, ram_threshold=0.95, last_n_vm_cpu=2)
def best_fit_decreasing_factory(time_step, migration_time, params):
    cpu_t = float(params['cpu_threshold'])
    ram_t = float(params['ram_threshold'])
    last_n = int(params['last_n_vm_cpu'])
    if last_n < 1:
        raise ValueError('last_n_vm_cpu must be at least 1')

    def decide(hosts_cpu_usage, hosts_cpu_total, hosts_ram_usage,
               hosts_ram_total, inactive_hosts_cpu, inactive_hosts_ram,
               vms_cpu, vms_ram, state=None):
        mapping = best_fit_decreasing(
            last_n,
            get_available_resources(cpu_t, hosts_cpu_usage,
                                    hosts_cpu_total),
            get_available_resources(ram_t, hosts_ram_usage,
                                    hosts_ram_total),
            {h: cpu_t * c for h, c in inactive_hosts_cpu.items()},
            {h: ram_t * r for h, r in inactive_hosts_ram.items()},
            vms_cpu, vms_ram)
        return mapping, state
    return decide


# Neat's defaults (Terracotta's config; neat.conf used cpu 0.95).
