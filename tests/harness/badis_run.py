"""The agent loop of the Badis benchmark and functional test: one TCG
guest polled through memmut's libvirt driver, one estimator through the
agent's own pipeline, with balloon actuation (scaled-down rounds)."""

import re
import time

from memmut.agent.mutualization import on_demand
from memmut.agent.wss import badis
from memmut.agent.wss import estimate
from memmut.agent.wss import pipeline
from memmut.agent.wss import swap_monitors as swapmod
from memmut.evaluation import baselines
from memmut.evaluation import workloads
from memmut.memstore import reuse
from memmut.virt import driver as virt_driver
from memmut.virt.libvirt import driver
from tests import common

MIB = 1024
BOOKED_MIB = 256
PEAK_MIB = 160
SHADOWS = ('balloon_stats', 'balloon_stats_nocache')
ACTIVE = ('none', 'badis', 'zballoond', 'selfballoon')
# Not an estimator: the balloon driven by the workload's true working set
# (read from the guest's console at each poll, so one poll late) through
# the same actuator. Its throughput loss is what saving that memory costs
# the guest on this bed (reclaim and swap-out under TCG), whatever the
# estimate: the floor under every estimator's vm_over.
ORACLE = 'oracle'
# Not an estimator either: Badis sampling and estimating as in a
# ``badis`` run, the balloon left at the booking. Its vm_over is what the
# test bed's sampling costs the guest (smaps and clear_refs of the whole
# QEMU process every round on TCG), apart from what the estimate costs.
OBSERVE = 'observe'

# Scaled-down Badis: 1 s rounds instead of 60 s, max-average over 3
# estimates and a 4 s slice instead of 5 and 1 h (the schedules' steps last
# seconds, not hours).
# The floor: this guest cannot give up about 76 MiB (51 MiB its kernel
# reserved at boot + about 25 MiB of slab, page tables and the initramfs
# inside MemTotal); a floor below that lets an estimator that descends
# blindly (Zballoond in W_i,d, where Committed_AS is small) inflate the
# balloon into the guest's unswappable memory and OOM-kill it. 96 MiB
# leaves it room to swap.
AGENT_OPTIONS = {
    'badis': {'round_interval': 1.0, 'average_window': 3, 'time_slice': 4.0,
              'headroom_kb': 16 * MIB, 'headroom_fraction': 0.05,
              'floor_kb': 96 * MIB, 'min_change_kb': 4 * MIB,
              'max_step_fraction': 0.125, 'max_grow_fraction': 0.5,
              'swap_in_threshold_kb': 1024, 'round_tolerance': 0.1,
              'react_to_swapping': True,
              # the smallest balloon change, as in production (16 MiB of
              # a guest of several GiB there; 4 MiB of 256 MiB here)
              'pinned_probe_step_kb': 4 * MIB,
              'shrink_floor_step_kb': 4 * MIB,
              'hindsight_min_kb': 4 * MIB,
              # bad shrinks: swap-ins within 3 rounds (180 s at 60 s)
              'shrink_swapin_window': 3.0},
    'agent': {'sampling_backend': 'smaps', 'balloon_actuation': True},
}
POLL_S = 0.5
# The one-poll-late oracle drives the same balloon target as the loop.
ORACLE_TARGET = badis.TargetParams(**{
    k: AGENT_OPTIONS['badis'][k] for k in (
        'headroom_kb', 'headroom_fraction', 'max_step_fraction',
        'min_change_kb', 'floor_kb', 'max_grow_fraction')})

_STEP = re.compile(r'^MEMWORK (end )?step=(\d+) wss_mib=(\d+)', re.M)
_DONE = re.compile(r'^MEMWORK done .*passes=(\d+)', re.M)


def set_badis_options(pairs):
    """Apply ``KEY=VALUE`` overrides (a benchmark's ``--badis-option``)
    to :data:`AGENT_OPTIONS` ``[badis]``: true/false, int, float or str.
    """
    for pair in pairs or ():
        key, _, value = pair.partition('=')
        AGENT_OPTIONS['badis'][key.strip()] = option_value(value)


def option_value(value):
    """An option's ``VALUE`` text as true/false, int, float or str."""
    low = value.lower()
    if low in ('true', 'false'):
        return low == 'true'
    try:
        return int(value)
    except ValueError:
        try:
            return float(value)
        except ValueError:
            return value


def agent_conf(libvirt_options, **groups):
    opts = {g: dict(v) for g, v in AGENT_OPTIONS.items()}
    for g, v in groups.items():
        opts.setdefault(g, {}).update(v)
    opts['libvirt'] = dict(libvirt_options, domain_type='qemu')
    return common.private_conf(**opts)


def schedule(shape, step_s, peak_mib=PEAK_MIB):
    return workloads.shape_schedule(shape, peak_mib, step_s)


def base_kb(g, booked_kb):
    """Memory the guest cannot give up when idle: booked - MemAvailable."""
    first = g.wait_stat(lambda s: s.get('memavail_kb', 0) > 0, timeout=30)
    return booked_kb - first['memavail_kb']


def current_wss_mib(log_text, sched=None):
    """The working set the schedule asks for now, from the guest's
    console: the step of the last ``MEMWORK step=`` line; once a step's
    ``end`` line is out, the next step of ``sched`` (memwork prints a
    step's first line only after its first pass, which takes seconds when
    the guest swaps: the new working set is being touched from the moment
    the previous step ends)."""
    found = _STEP.findall(log_text)
    if not found:
        return 0
    end, step, mib = found[-1]
    if end and sched is not None and int(step) + 1 < len(sched):
        return sched[int(step) + 1].mib
    return int(mib)


def memstore_monitor(g, percentile):
    """Geiger's reading function for the guest's memstore swap export."""
    def read(vm):
        if vm.uuid != g.uuid or g.swap_server is None:
            return None
        return reuse.ReuseReading.from_stats(g.swap_server.stats(
            reset=True, percentile=percentile))
    return read


class Run:
    """The agent loop for one guest and one estimator; ``rows`` has one
    dict per poll."""

    def __init__(self, g, conf, estimator, booked_kb, base, poll=POLL_S,
                 sched=None, done=None, oracle=None):
        self.g = g
        # estimator ORACLE: console text -> the true working set (KiB)
        self.oracle = oracle
        if estimator == ORACLE and oracle is None:
            raise ValueError('the oracle run needs the true working set')
        # the console line that ends the run (memwork's done line; the
        # redis guest's ``REDIS done``)
        self.done = done or _DONE
        self.estimator = estimator
        self.booked_kb = booked_kb
        self.base = base
        self.poll = poll
        self.sched = sched
        self.driver = driver.LibvirtDriver(conf)
        self.driver.connect()
        self.driver.set_stats_period(g.uuid, 1)
        committed = baselines.ConsoleCommittedAS(
            lambda vm: g.spec.serial_log)
        # Geiger from the guest's memstore swap export (reuse distances);
        # the passive shadows below keep the balloon-statistics monitor
        # (a memstore reading starts a new interval: one reader only).
        swap = None
        if getattr(g, 'swap_server', None) is not None and hasattr(
                g.swap_server, 'stats'):
            swap = swapmod.SwapMonitors(pipeline.default_swap_monitors(
                conf, memstore_monitor(g, conf.memstore.ghost_percentile)))
        self.pipeline = pipeline.EstimationPipeline(
            conf, self.driver, committed=committed,
            estimator={ORACLE: 'none', OBSERVE: 'badis'}.get(
                estimator, estimator),
            swap=swap)
        self.shadows = {}
        if estimator in ('badis', OBSERVE):
            self.shadows = {s: pipeline.EstimationPipeline(
                conf, self.driver, estimator=s) for s in SHADOWS}
        self.actuator = on_demand.OnDemandController(conf, self.driver)
        self.rows = []
        self.moves = []
        self.wall = 0.0

    def step(self):
        try:
            vms = [v for v in self.driver.list_vms()
                   if v.uuid == self.g.uuid]
        except virt_driver.HypervisorUnavailable:
            return self.g.is_active()      # a hiccup: poll again
        if not vms:
            return False
        vm = vms[0]
        now = time.time()
        est = self.pipeline.estimate(vms, now)
        if self.estimator == ORACLE:
            est = self._oracle(vm, now)
        if self.estimator != OBSERVE:
            for uuid, target, reason in self.actuator.step(vms, est):
                self.moves.append((now, target, reason))
        row = {'t': now, 'balloon_kb': vm.balloon_kb,
               'truth_kb': current_wss_mib(self.g.log(), self.sched) * MIB +
               self.base,
               'swap_in': vm.memory_stats.get('swap_in'),
               # faults beside pages read: swap readahead reads more
               # pages than the guest faulted on
               'major_fault': vm.memory_stats.get('major_fault')}
        e = est.get(self.g.uuid)
        if e is not None and self.estimator != 'none':
            row[self.estimator] = e.wss_kb
            row['demand_kb'] = e.demand_kb
            # what the controller packs on (wss_accuracy.packing)
            row['max_avg_kb'] = e.max_avg_kb
            row['floor_kb'] = e.shrink_floor_kb
            row['mode'] = e.mode
            row['source'] = e.source
            row['detail'] = e.detail
            row['round_t'] = e.timestamp
            # (the issue-13 Badis on branch patterns reports these)
            row['bad_shrinks'] = getattr(e, 'bad_shrinks', None)
            row['pinned_kb'] = getattr(e, 'pinned_kb', None)
            # Badis's decisions of the round (shrink guard, holds,
            # pinned-page correction), when it made any
            events = list(getattr(e, 'events', ()) or ())
            if e.transition:
                events.insert(0, e.transition)
            if events and e.fresh:
                row['events'] = events
            if getattr(e, 'held', False):
                row['held'] = True
        for name, p in self.shadows.items():
            s = p.estimate(vms, now).get(self.g.uuid)
            if s is not None:
                row[name] = s.wss_kb
        self.rows.append(row)
        return True

    def _oracle(self, vm, now):
        kb = self.oracle(self.g.log())
        return {vm.uuid: estimate.Estimate(
            uuid=vm.uuid, wss_kb=kb, max_avg_kb=kb, demand_kb=kb,
            source=ORACLE, timestamp=now)}

    def run(self, timeout):
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            t0 = time.monotonic()
            if self.done.search(self.g.log()) or not self.step():
                break
            time.sleep(max(0.0, self.poll - (time.monotonic() - t0)))
        self.wall = time.monotonic() - start
        self.driver.close()
        m = self.done.search(self.g.log())
        return int(m.group(1)) if m else None

    def cpu_seconds(self):
        return self.pipeline.cpu_seconds + sum(
            p.cpu_seconds for p in self.shadows.values())
