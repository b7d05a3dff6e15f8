"""Shared by the mutualization functional test and benchmark.

The functional test still drives Algorithm 1 with this stand-in, not the
agent's own pipeline: on its scenario the pipeline without access
sampling or memstore shrinks a guest whose working set is rising until it
is OOM-killed (issue 13's thrashing guard is what removes it).

:class:`StatsBadis` feeds memmut's Badis state machine
(:mod:`memmut.agent.wss.badis`) with what the balloon statistics give through
the real libvirt driver, using memmut's own estimators: the guest's used
memory (:func:`memmut.agent.wss.techniques.balloon_used`) stands for the
sampled WSS (like sampling, it cannot see above the allocation) and the
swap counters (:func:`~memmut.agent.wss.techniques.swap_activity`,
:func:`~memmut.agent.wss.techniques.swap_fallback_estimate`) for Geiger. It
returns objects shaped like ``memmut.agent.wss.estimate.Estimate`` (uuid,
wss_kb, max_avg_kb, demand_kb, source, mode) -- the agent's own pipeline
produces those; this one needs no host-side page sampling, so it runs
anywhere the balloon does.

The Geiger stand-in grows a swapping VM by what it read back from swap in
the round (:func:`~memmut.agent.wss.techniques.swap_fallback_estimate`), but
that counts every re-read of the same pages: a VM cycling over a working
set 30 MiB above its allocation reads hundreds of MiB back per round and
asked for its whole booked size, which under a shortage took memory from a
VM that really needed it (the ch.3 benchmark's equal run lost 1.3 GiB to
swap that way). Real Geiger reuse distances (memstore) do not have that
bias; without them this stand-in *probes* (:meth:`StatsBadis._probe`):
it asks for ``probe_kb`` more, doubles the step only after the previous
request was granted and the VM still swaps, holds a request the pool could
not grant yet, and never asks for more than was read back.
``probe_kb=None`` restores the unbounded stand-in.
"""

import dataclasses

from memmut import objects
from memmut.agent.wss import badis
from memmut.agent.wss import techniques as estimators


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
                 min_grow_kb=16 * 1024, probe_kb=32 * 1024):
        self.badis = badis.BadisEstimator(params)
        self.prev = {}
        self.probes = {}            # uuid -> (escalations, last request)
        self.swap_in_threshold_kb = swap_in_threshold_kb
        self.min_grow_kb = min_grow_kb
        self.probe_kb = probe_kb

    def _probe(self, vm, ghost):
        """Bound the stand-in's estimate of a swapping VM: the first
        swapping round asks for ``probe_kb`` more, each later round that
        found the previous request granted and still swapping asks for
        twice the step; a request not yet granted (the pool is short) is
        held, not escalated -- the VM being still short of it says nothing
        about a larger deficit. Never more than was read back."""
        level, last = self.probes.get(vm.uuid, (-1, None))
        slack = 4 * 1024            # balloon rounding, pages in flight
        if last is not None and vm.balloon_kb + slack < last:
            request = last
        else:
            level += 1
            request = vm.balloon_kb + max(self.min_grow_kb,
                                          self.probe_kb << min(level, 16))
        request = min(ghost.wss_kb, request)
        self.probes[vm.uuid] = (level, request)
        return estimators.TechniqueEstimate(request, ghost.source)

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
            if ghost is not None and self.probe_kb is not None:
                ghost = self._probe(vm, ghost)
            elif not swapping:
                self.probes.pop(vm.uuid, None)
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
                sampled = estimators.TechniqueEstimate(
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
