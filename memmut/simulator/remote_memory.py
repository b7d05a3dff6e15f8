"""What remote memory serves of the hosts' memory overload, per interval.

The planner may leave a host overloaded on memory to remote memory
(:mod:`memmut.consolidation.remote_absorb`, ``[consolidation]
remote_memory_fraction``). The simulator then accounts for what the
agents would do (global mutualization, seed 004 §4.3): the part of a
host's VMs' memory use beyond its memory (its *excess*) is served from
what the other active hosts have free, up to ``fraction`` of the host's
memory (the VMs' remote caps, summed); what is not served is what its
guests swap to their local disks.

A lender's free memory is its memory less the larger of its VMs' use and
what they are ballooned to (what the agents give them: the packing
memory), as a reservoir would be. When the lenders' free memory is short
of what the hosts in excess ask for, each gets the same share of what it
asked for (the controller's first-fit of allocations is not modelled).
"""

import numpy as np

# MiB below which an excess counts as served (float noise).
EPSILON_MB = 0.5


def serve(used, allocated, active, memory_mb, fraction):
    """``(served, unserved)`` MiB per host for one interval.

    ``used``/``allocated``: per host, its VMs' memory use and what they
    are ballooned to (MiB); ``active``: hosts that are on;
    ``fraction``: of a host's memory remote memory may serve (0: none,
    every excess unserved).
    """
    used = np.asarray(used, dtype=float)
    active = np.asarray(active, dtype=bool)
    excess = np.where(active, np.maximum(0.0, used - memory_mb), 0.0)
    if fraction <= 0 or not excess.any():
        return np.zeros_like(excess), excess
    asked = np.minimum(excess, fraction * memory_mb)
    free = np.where(active & (excess <= 0),
                    np.maximum(0.0, memory_mb - np.maximum(
                        used, np.asarray(allocated, dtype=float))), 0.0)
    total, pool = asked.sum(), free.sum()
    served = asked if total <= pool else asked * (pool / total)
    return served, excess - served
