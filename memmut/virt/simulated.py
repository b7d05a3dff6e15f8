"""A simulated hypervisor: VMs whose memory demand follows a schedule.

It is the embedded default (``memmut-demo`` runs on a laptop with no cloud)
and the fast test double of the libvirt driver. The guest model is small but
keeps the properties the estimators rely on: memory above the balloon target
is swapped (swap_in/swap_out/major_fault grow with the deficit), memory below
it shows as unused or page cache, and balloon changes take effect at once.
"""

import dataclasses
import random
import threading
import time
import uuid as uuidlib

from oslo_log import log as logging

from memmut.evaluation import workloads
from memmut.virt import balloon_floor
from memmut.virt import driver

LOG = logging.getLogger(__name__)

KIB_PER_MIB = 1024
# What the guest kernel and its daemons keep resident whatever the workload.
GUEST_BASE_KB = 48 * KIB_PER_MIB
# The part of it the guest touches in any interval; the rest (kernel text,
# page tables, pinned buffers) stays resident without being accessed, which
# is what Badis's pinned-page correction is for (seed 004 §2.6.1).
GUEST_ACTIVE_KB = 16 * KIB_PER_MIB
# Share of the booked memory a guest would fill with page cache if free.
CACHE_SHARE = 0.10
# Fraction of the memory deficit the guest pages in and out per second while
# it thrashes; it makes swap traffic grow with how far the balloon is short.
CHURN_PER_SECOND = 0.25
SIM_NAMESPACE = uuidlib.UUID('6d656d6d-7574-4000-8000-73696d766d73')
# The start of every error message about a [simulated_hypervisor] vms entry.
BAD_SPEC = 'bad [simulated_hypervisor] vms entry %r: '


class SimSpecError(ValueError):
    """A [simulated_hypervisor] vms entry that cannot be used."""


@dataclasses.dataclass
class SimVM:
    name: str
    uuid: str
    booked_kb: int
    steps: list
    balloon_kb: int = 0
    cpu_share: float = 0.2
    swap_in_kb: float = 0.0
    swap_out_kb: float = 0.0
    minor_fault: float = 0.0
    rss_kb: int = 0
    cpu_time_ns: float = 0.0
    last_t: float = 0.0
    demand_kb: int = 0
    floor_kb: int = 0           # the VM's own balloon floor (0: none)

    def __post_init__(self):
        if not self.balloon_kb:
            self.balloon_kb = self.booked_kb


def parse_vm_spec(spec, step_seconds):
    """``NAME:BOOKED_MIB:SHAPE[:PEAK_MIB]`` -> SimVM."""
    parts = spec.split(':')
    if len(parts) not in (3, 4) or not parts[0]:
        raise SimSpecError((BAD_SPEC + 'want NAME:BOOKED_MIB:SHAPE'
                                       '[:PEAK_MIB]') % spec)
    name, booked, shape = parts[:3]
    try:
        booked_mib = int(booked)
        peak_mib = int(parts[3]) if len(parts) == 4 else int(booked_mib * .9)
    except ValueError:
        raise SimSpecError((BAD_SPEC + 'sizes must be integers in MiB') % spec)
    if booked_mib <= 0 or not 0 < peak_mib:
        raise SimSpecError((BAD_SPEC + 'sizes must be positive') % spec)
    try:
        steps = workloads.shape_schedule(shape, peak_mib, step_seconds)
    except workloads.ScheduleError as e:
        raise SimSpecError((BAD_SPEC + '%s') % (spec, e))
    return SimVM(name=name,
                 uuid=str(uuidlib.uuid5(SIM_NAMESPACE, name)),
                 booked_kb=booked_mib * KIB_PER_MIB,
                 steps=steps)


def guest_memory(vm, demand_kb):
    """Split the balloon target the way a Linux guest would report it."""
    actual = vm.balloon_kb
    room = max(0, actual - GUEST_BASE_KB)
    resident = min(demand_kb, room)
    cache = min(room - resident, int(CACHE_SHARE * vm.booked_kb))
    unused = room - resident - cache
    return resident, cache, unused, max(0, demand_kb - room)


class SimDriver(driver.Driver):
    name = 'sim'

    def __init__(self, conf, clock=time.monotonic, vms=None):
        self._conf = conf.simulated_hypervisor
        self.configure_floor(conf)
        self._clock = clock
        self._start = clock()
        self._rng = random.Random(self._conf.seed)
        self._lock = threading.Lock()
        specs = vms if vms is not None else self._conf.vms
        self.vms = {}
        for spec in specs:
            vm = (spec if isinstance(spec, SimVM)
                  else parse_vm_spec(spec, self._conf.step_seconds))
            if vm.uuid in self.vms:
                raise SimSpecError('duplicate simulated VM name %r' % vm.name)
            self.vms[vm.uuid] = vm
        self._last_cpu = (0.0, 0.0)
        self.stats_periods = {}

    def now(self):
        """Simulated seconds since the driver started."""
        return (self._clock() - self._start) * self._conf.time_scale

    def connect(self):
        pass

    def _advance(self, vm, t):
        dt = max(0.0, t - vm.last_t)
        vm.last_t = t
        demand = workloads.wss_at(vm.steps, t) * KIB_PER_MIB
        # Small seeded jitter: real working sets are never perfectly flat.
        demand = int(demand * (1 + self._rng.uniform(-0.01, 0.01)))
        vm.demand_kb = demand
        resident, cache, unused, deficit = guest_memory(vm, demand)
        churn = deficit * CHURN_PER_SECOND * dt
        vm.swap_out_kb += churn
        vm.swap_in_kb += churn
        vm.minor_fault += resident / 4 * 0.01 * dt
        vm.rss_kb = min(vm.balloon_kb,
                        max(vm.rss_kb, GUEST_BASE_KB + resident + cache))
        vm.cpu_time_ns += vm.cpu_share * dt * 1e9
        return resident, cache, unused

    def _info(self, vm, t):
        resident, cache, unused = self._advance(vm, t)
        stats = {
            'actual': vm.balloon_kb,
            'unused': unused,
            'available': vm.balloon_kb,
            'usable': unused + cache,
            'disk_caches': cache,
            'swap_in': int(vm.swap_in_kb),
            'swap_out': int(vm.swap_out_kb),
            'major_fault': int(vm.swap_in_kb / 4),
            'minor_fault': int(vm.minor_fault),
            'rss': vm.rss_kb,
            'last_update': int(t),
        }
        return driver.VMInfo(uuid=vm.uuid, name=vm.name, state='running',
                             booked_kb=vm.booked_kb,
                             balloon_kb=vm.balloon_kb, memory_stats=stats,
                             cpu_time_ns=int(vm.cpu_time_ns),
                             domain_type='sim')

    def list_vms(self):
        with self._lock:
            t = self.now()
            return [self._info(vm, t) for vm in self.vms.values()]

    def host_info(self):
        with self._lock:
            t = self.now()
            used = sum(vm.rss_kb for vm in self.vms.values())
            busy = sum(vm.cpu_time_ns for vm in self.vms.values()) / 1e9
            last_t, last_busy = self._last_cpu
            self._last_cpu = (t, busy)
        total = self._conf.host_memory_mb * KIB_PER_MIB
        span = (t - last_t) * self._conf.host_cpus
        util = min(1.0, (busy - last_busy) / span) if span > 0 else 0.0
        return driver.HostInfo(memory_total_kb=total,
                               memory_free_kb=max(0, total - used),
                               cpu_count=self._conf.host_cpus,
                               cpu_util=util)

    def _vm(self, uuid):
        try:
            return self.vms[uuid]
        except KeyError:
            raise driver.VMNotFound(uuid)

    # The ``sim`` sampling back-end asks this driver for access samples.
    simulates_access_sampling = True

    def access_sample(self, uuid, pages):
        """Access sampling of ``pages`` random pages of the VM's RAM.

        What a host-side sampler would see: each sampled page of the guest
        RAM (booked size; ballooned-out pages are never accessed) was
        accessed with probability (resident working set + the active part
        of the guest kernel) / booked, drawn independently, so the result
        carries the binomial noise of real sampling. Returns ``(accessed,
        sampled, span_kb)``.
        """
        if pages <= 0:
            raise ValueError('pages must be positive')
        with self._lock:
            vm = self._vm(uuid)
            resident, _cache, _unused = self._advance(vm, self.now())
            touched = min(vm.balloon_kb, resident + GUEST_ACTIVE_KB)
            p = touched / vm.booked_kb
            accessed = sum(1 for _ in range(pages) if self._rng.random() < p)
            return accessed, pages, vm.booked_kb

    def set_stats_period(self, uuid, seconds):
        self._vm(uuid)
        self.stats_periods[uuid] = seconds

    def _floor_inputs(self, uuid):
        with self._lock:
            vm = self._vm(uuid)
            return (vm.booked_kb, balloon_floor.boot_reserved_kb(
                self._info(vm, self.now()).memory_stats), vm.floor_kb or None)

    def _set_balloon(self, uuid, kib):
        with self._lock:
            vm = self._vm(uuid)
            if not 0 < kib <= vm.booked_kb:
                raise driver.InvalidBalloonTarget(
                    'balloon target %d KiB for %s is outside 1..%d KiB'
                    % (kib, vm.name, vm.booked_kb))
            # Catch the VM up to now under its old size, then resize.
            self._advance(vm, self.now())
            vm.balloon_kb = int(kib)
