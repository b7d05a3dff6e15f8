"""Shared by the mutualization functional test and benchmark.

:class:`StatsBadis` feeds memmut's Badis state machine
(:mod:`memmut.agent.badis`) with what the balloon statistics give through
the real libvirt driver, using memmut's own estimators: the guest's used
memory (:func:`memmut.agent.estimators.balloon_used`) stands for the
sampled WSS (like sampling, it cannot see above the allocation) and the
swap counters (:func:`~memmut.agent.estimators.swap_activity`,
:func:`~memmut.agent.estimators.swap_fallback_estimate`) for Geiger. It
returns objects shaped like ``memmut.agent.estimation.Estimate`` (uuid,
wss_kb, max_avg_kb, demand_kb, source, mode) -- the agent's own pipeline
produces those; this one needs no host-side page sampling, so it runs
anywhere the balloon does.
"""

import dataclasses

from memmut import objects
from memmut.agent import badis
from memmut.agent import estimators


@dataclasses.dataclass(frozen=True)
class StatsEstimate:
    uuid: str
    wss_kb: int
    max_avg_kb: int
    demand_kb: int
    source: str
    mode: str


class StatsBadis:
    def __init__(self, params, swap_in_threshold_kb=1024,
                 min_grow_kb=16 * 1024):
        self.badis = badis.BadisEstimator(params)
        self.prev = {}
        self.swap_in_threshold_kb = swap_in_threshold_kb
        self.min_grow_kb = min_grow_kb

    def observe(self, vms, now):
        out = {}
        for vm in vms:
            stats = vm.memory_stats
            if 'unused' not in stats or 'available' not in stats:
                continue            # the guest has not reported yet
            prev = self.prev.get(vm.uuid)
            self.prev[vm.uuid] = stats
            activity = None
            if prev is not None:
                activity = estimators.swap_activity(
                    prev, stats, self.swap_in_threshold_kb)
            ghost = estimators.swap_fallback_estimate(
                activity, vm.balloon_kb, self.min_grow_kb)
            swapping = bool(activity and activity.active)
            # The guest's used memory counts every page, pinned or not:
            # there is no pinned-page miss to learn from it, so it is not
            # offered to Badis in swapping rounds (where Badis would take
            # m_cur - sampled as pinned pages).
            sampled = None
            used = estimators.balloon_used(stats)
            if used is not None and not swapping:
                # balloon_used is in MemTotal terms ('available'); a balloon
                # also covers what the guest kernel keeps out of MemTotal
                # (about 48 MiB of a 256 MiB TCG test guest): add it, or
                # the VM is sized that much too small and thrashes.
                hidden = max(0, vm.balloon_kb - stats['available'])
                sampled = estimators.Estimate(
                    min(vm.balloon_kb, used.wss_kb + hidden), used.source)
            obs = badis.Observation(
                timestamp=now, m_cur_kb=vm.balloon_kb,
                booked_kb=vm.booked_kb, sampled=sampled, ghost=ghost,
                swapping=swapping)
            r = self.badis.observe(vm.uuid, obs)
            out[vm.uuid] = StatsEstimate(vm.uuid, r.wss.wss_kb, r.max_avg_kb,
                                         r.demand_kb, r.wss.source,
                                         r.mode.value)
        return out


class RecordingController:
    """The controller side of GMC_inform, checking each message's schema
    as the RPC server would."""

    def __init__(self):
        self.informs = []

    def gmc_inform(self, inform, timeout=None):
        self.informs.append(objects.ReservoirInform.from_primitive(
            inform.to_primitive()))


def held_kb(ctl, vms):
    """What the VMs may be using: per VM the larger of the balloon size the
    hypervisor reports and any target still being reached."""
    total = 0
    for vm in vms:
        p = ctl.actuator.pending.get(vm.uuid) if ctl.actuator else None
        total += max(vm.balloon_kb, p.target_kb if p else 0)
    return total
