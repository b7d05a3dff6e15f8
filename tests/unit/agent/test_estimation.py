"""The per-VM estimation pipeline, swap monitors and single-VM actuation."""

import dataclasses
import logging
import re

import pytest

from memmut.agent.wss import badis
from memmut.agent.wss import pipeline
from memmut.evaluation import baselines
from memmut.agent.mutualization import on_demand
from memmut.agent.wss import badis_rounds
from memmut.agent.wss import techniques
from memmut import sizing
from memmut.agent.wss import sampling
from memmut.agent.wss.sampling import base
from memmut.agent.wss import swap_monitors
from memmut.memstore import reuse
from memmut.virt import driver
from memmut.virt import simulated
from tests import common
from tests import fakes

MIB = 1024


def info(uuid='u-1', booked=1024 * MIB, balloon=None, stats=None,
         dtype='kvm', state='running'):
    return driver.VMInfo(uuid=uuid, name='vm-' + uuid, state=state,
                         booked_kb=booked, balloon_kb=balloon or booked,
                         memory_stats=stats or {}, cpu_time_ns=0,
                         domain_type=dtype)


def conf_with(**badis_opts):
    opts = {'round_interval': 10.0}
    opts.update(badis_opts)
    return common.private_conf(badis=opts)


# -- swap monitors ------------------------------------------------------------

def test_balloon_stats_monitor_uses_deltas_and_caps_thrashing():
    m = swap_monitors.BalloonStatsSwapMonitor(swap_in_threshold_kb=4096,
                                              min_grow_kb=4096)
    vm = info(stats={'swap_in': 1000, 'swap_out': 1000})
    first = m.read(vm, 512 * MIB)
    assert not first.swapping and first.ghost is None
    quiet = m.read(info(stats={'swap_in': 2000, 'swap_out': 1000}),
                   512 * MIB)
    assert not quiet.swapping            # 1000 KiB < threshold
    busy = m.read(info(stats={'swap_in': 52000, 'swap_out': 81000}),
                  512 * MIB)
    assert busy.swapping and busy.source == 'balloon_stats'
    assert busy.ghost.wss_kb == 512 * MIB + 29000   # net in swap < swap-in
    assert 'capped' in busy.detail
    light = m.read(info(stats={'swap_in': 62000, 'swap_out': 200000}),
                   512 * MIB)
    assert light.ghost.wss_kb == 512 * MIB + 10000  # the round's swap-in


def test_balloon_stats_monitor_probes_instead_of_asking_for_every_reread():
    """Without reuse distances, 200 MiB read back in a round by a VM that
    lacks a little asks for 32 MiB more first; the step doubles only
    once the last request was granted and the VM still swaps; a request
    not granted yet is held."""
    m = swap_monitors.BalloonStatsSwapMonitor(
        swap_in_threshold_kb=1024, min_grow_kb=4096, probe_kb=32 * MIB)
    swap_out = 10 * 1024 * MIB            # plenty in swap: no net cap
    reads = [0]

    def read(m_cur):
        reads[0] += 200 * MIB
        return m.read(info(stats={'swap_in': reads[0],
                                  'swap_out': swap_out}), m_cur)
    read(256 * MIB)                                   # first: no delta
    first = read(256 * MIB)
    assert first.swapping and first.ghost.wss_kb == 288 * MIB
    assert 'probing' in first.detail
    held = read(256 * MIB)                            # not granted yet
    assert held.ghost.wss_kb == 288 * MIB
    doubled = read(288 * MIB)                         # granted, still short
    assert doubled.ghost.wss_kb == 288 * MIB + 64 * MIB
    quiet = m.read(info(stats={'swap_in': reads[0], 'swap_out': swap_out}),
                   352 * MIB)
    assert not quiet.swapping
    again = read(352 * MIB)                           # a new episode
    assert again.ghost.wss_kb == 352 * MIB + 32 * MIB


def memstore_reading(histogram, bucket_pages=1024, cold=0,
                     percent=95.0):
    """A reading as memmut.agent.swap.swapdisk returns it, built from a stats
    reply of memstore's control protocol."""
    extra = reuse.extra_pages(histogram, percent, bucket_pages) * 4096
    return reuse.ReuseReading.from_stats({'monitor': {
        'swap_out_pages': 1000, 'swap_in_pages': 500,
        'interval_seconds': 10.0, 'bucket_pages': bucket_pages,
        'percentile': percent, 'queue_pages': 300,
        'interval': {'histogram': histogram,
                     'swap_ins': sum(c for _, c in histogram),
                     'cold': cold, 'extra_bytes': extra}}})


def test_memstore_monitor_turns_reuse_distances_into_geiger():
    readings = [memstore_reading([[0, 10], [3, 80], [5, 10]]),
                memstore_reading([]), memstore_reading([], cold=3)]
    m = swap_monitors.MemstoreSwapMonitor(lambda vm: readings.pop(0))
    r = m.read(info(), 300 * MIB)
    # 95 % of the 100 swap-ins lie within buckets 0-5 of 4 MiB (memstore
    # counts a distance D as needing D + 1 pages: the bucket's upper edge)
    assert r.swapping and r.ghost.wss_kb == 300 * MIB + 24 * MIB
    assert r.ghost.source == techniques.SOURCE_GEIGER
    assert r.source == 'memstore'
    r = m.read(info(), 300 * MIB)
    assert not r.swapping and r.ghost is None
    r = m.read(info(), 300 * MIB)        # swap-ins of pages never queued
    assert r.swapping and r.ghost is None


def test_memstore_monitor_gives_the_swap_ins_by_distance():
    # buckets of 1024 pages (4 MiB): bucket 3 holds distances 12-16 MiB;
    # swap-ins without a distance (cold) are not among them
    readings = [memstore_reading([[0, 10], [3, 80]], cold=5)]
    m = swap_monitors.MemstoreSwapMonitor(lambda vm: readings.pop(0))
    r = m.read(info(), 300 * MIB)
    assert r.in_distances == ((0, 40), (12 * MIB, 320))
    assert r.in_kb == 95 * 4
    # a reading without distances (the balloon statistics') has none
    assert swap_monitors.SwapReading(True, None, 'x').in_distances is None


def test_memstore_failure_falls_back_to_balloon_stats(caplog):
    def broken(vm):
        raise ConnectionRefusedError('no control socket')
    stats = swap_monitors.BalloonStatsSwapMonitor()
    both = swap_monitors.SwapMonitors(
        [swap_monitors.MemstoreSwapMonitor(broken), stats])
    caplog.set_level(logging.WARNING)
    both.read(info(stats={'swap_in': 0, 'swap_out': 0}), 100 * MIB)
    r = both.read(info(stats={'swap_in': 9000, 'swap_out': 9000}),
                  100 * MIB)
    assert r.source == 'balloon_stats' and r.swapping
    assert caplog.text.count('no reuse distances') == 1   # warned once
    no_export = swap_monitors.MemstoreSwapMonitor(lambda vm: None)
    assert no_export.read(info(), 100 * MIB) is None


def test_pipeline_prefers_memstore_and_names_it():
    reading = memstore_reading([[2, 100]])
    monitors = swap_monitors.SwapMonitors(pipeline.default_swap_monitors(
        conf_with(), lambda vm: reading))
    p = pipeline.EstimationPipeline(conf_with(), FakeDriver(),
                                    swap=monitors)
    vm = info(balloon=512 * MIB, stats={'swap_in': 0, 'swap_out': 0})
    p.estimate([vm], 0.0)
    e = p.estimate([vm], 10.0)['u-1']
    assert e.source == 'badis/balloon_stats+memstore'
    assert e.mode == 'VG' and e.detail == techniques.SOURCE_GEIGER
    assert e.wss_kb == 512 * MIB + 12 * MIB


# -- the pipeline on the simulated hypervisor --------------------------------

class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def sim_loop(shape, rounds, conf=None, actuate=True, peak=800):
    clock = Clock()
    conf = conf or common.private_conf(
        badis={'round_interval': 10.0, 'time_slice': 30.0},
        simulated_hypervisor={'step_seconds': 300})
    spec = 'a:1024:%s:%d' % (shape, peak)
    d = simulated.SimDriver(conf, clock=clock, vms=[spec])
    p = pipeline.EstimationPipeline(conf, d)
    act = on_demand.OnDemandController(conf, d)
    vm = next(iter(d.vms.values()))
    trace = []
    for _ in range(rounds):
        clock.t += 10
        vms = d.list_vms()
        est = p.estimate(vms, clock.t)
        if actuate:
            act.step(vms, est)
        e = est.get(vm.uuid)
        trace.append((clock.t, vm.demand_kb + simulated.GUEST_BASE_KB,
                      vm.balloon_kb, e))
    return p, trace


def test_first_round_comes_one_interval_after_first_sight():
    p, trace = sim_loop('W1', 3)
    assert trace[0][3] is None
    e = trace[1][3]
    assert e.fresh and e.mode == 'V' and e.source == 'badis/sim+balloon_stats'
    assert e.wss_kb <= e.max_avg_kb <= e.demand_kb
    assert p.rounds == 2 and p.cpu_seconds > 0


def test_estimates_between_rounds_are_marked_stale():
    clock = Clock()
    conf = conf_with(round_interval=10.0)
    d = simulated.SimDriver(conf, clock=clock, vms=['a:512:W1'])
    p = pipeline.EstimationPipeline(conf, d)
    p.estimate(d.list_vms(), 0.0)
    fresh = p.estimate(d.list_vms(), 10.0)
    stale = p.estimate(d.list_vms(), 15.0)
    (e1,), (e2,) = fresh.values(), stale.values()
    assert e1.fresh and not e2.fresh and e1.wss_kb == e2.wss_kb


@pytest.mark.parametrize('shape', ['W1', 'W2'])
def test_badis_follows_rising_and_falling_sim_workloads(shape):
    _, trace = sim_loop(shape, 170)
    errs = [abs(e.wss_kb - truth) for t, truth, bal, e in trace
            if e is not None and t % 300 > 90]      # settled in each step
    mean = sum(errs) / len(errs)
    assert mean < 0.08 * 1024 * MIB, mean / MIB
    # not left starving: over the last step (the sampler's noise, 400
    # pages of 1 GiB, moves single rounds by tens of MiB), the balloon
    # covers the working set on average
    last = trace[-20:]
    final_truth = sum(truth for _, truth, _, _ in last) / len(last)
    final_balloon = sum(bal for _, _, bal, _ in last) / len(last)
    assert final_balloon >= final_truth - 16 * MIB
    if shape == 'W2':
        assert final_balloon < 600 * MIB             # memory was reclaimed


def test_badis_learns_the_pinned_correction_when_swapping(caplog):
    caplog.set_level(logging.INFO)
    # 120 rounds: with 400 sampled pages the first-sample calibration is
    # near the truth and the guest first swaps in VG after 60
    p, trace = sim_loop('W1', 120)
    uuid = next(iter(p._vms))
    # the simulated guest starts with no correction (its balloon statistics
    # show no kernel reservation), is calibrated, and learns the correction
    # again while swapping in VG
    assert p.badis.state(uuid).pinned_kb > 0
    assert p.badis.state(uuid).learned
    assert 'V->VG' in caplog.text
    # the change is logged with why, and the estimate carries it
    assert re.search(r'pinned-page correction \S+ \S+ -> \S+ \S+, '
                     r'(learned|raised) in VG: swapping', caplog.text)
    est = p._vms[uuid].last
    state = p.badis.state(uuid)
    assert est.pinned_kb == state.pinned_kb
    assert est.pinned_note == state.pinned_note
    assert est.pinned_at == state.pinned_at is not None
    # the round that changed it says so in its events (the benchmarks'
    # rows record them)
    events = [ev for _, _, _, e in trace if e is not None
              for ev in e.events]
    assert any(re.match(r'pinned-page correction \S+ \S+ -> ', ev)
               for ev in events), events


class Blind(base.Sampler):
    name = 'blind'

    def capability(self, vm, pid):
        return base.Capability(self.name, False, 'cannot see this VM')

    def begin(self, vm, pid):
        raise AssertionError('must not be used')

    def end(self, vm, pid):
        raise AssertionError('must not be used')


class FakeDriver(fakes.NullDriver):
    """A driver with no VMs of its own: it records balloon targets."""
    def __init__(self):
        self.sets = []
        self.fail = None

    def set_balloon(self, uuid, kib):
        if self.fail:
            raise self.fail
        self.sets.append((uuid, kib))
        return kib


def test_vm_no_backend_can_see_is_estimated_from_balloon_stats(caplog):
    conf = conf_with()
    d = FakeDriver()
    choice = sampling.SamplerChoice(conf, d, samplers={'blind': Blind()})
    choice.setting = 'blind'
    p = pipeline.EstimationPipeline(conf, d, samplers=choice)
    stats = {'actual': 1024 * MIB, 'available': 1000 * MIB,
             'unused': 600 * MIB, 'disk_caches': 100 * MIB,
             'swap_in': 0, 'swap_out': 0}
    caplog.set_level(logging.ERROR)
    p.estimate([info(stats=stats)], 0.0)
    e = p.estimate([info(stats=stats)], 10.0)['u-1']
    assert e.source == 'badis/balloon_stats+balloon_stats'
    assert e.detail == techniques.SOURCE_BALLOON_USED_NOCACHE
    # used - caches, plus the guest kernel's reservation (actual - avail.)
    assert e.wss_kb == 300 * MIB + 24 * MIB
    assert 'refusing sampling back-end blind' in caplog.text


def test_baselines_report_the_guests_own_figures():
    stats = {'available': 1000 * MIB, 'unused': 600 * MIB,
             'disk_caches': 100 * MIB}
    for kind, want in (('balloon_stats', 400 * MIB),
                       ('balloon_stats_nocache', 300 * MIB)):
        p = pipeline.EstimationPipeline(conf_with(), FakeDriver(),
                                        estimator=kind)
        p.estimate([info(stats=stats)], 0.0)
        e = p.estimate([info(stats=stats)], 10.0)['u-1']
        assert (e.wss_kb, e.source, e.mode) == (want, kind, None)
    none = pipeline.EstimationPipeline(conf_with(), FakeDriver(),
                                       estimator='none')
    assert none.estimate([info(stats=stats)], 0.0) == {}


def test_zballoond_shrinks_until_swap_then_backs_off():
    committed = {'kb': 800 * MIB}
    p = pipeline.EstimationPipeline(
        conf_with(floor_kb=0), FakeDriver(), estimator='zballoond',
        committed=lambda vm: committed['kb'])
    balloon, swap_in = 1024 * MIB, 0
    probes = []
    for i in range(6):
        vm = info(balloon=balloon, stats={'swap_in': swap_in,
                                          'swap_out': swap_in})
        e = p.estimate([vm], 10.0 * i).get('u-1')
        if e is not None:
            probes.append(e.probe_kb)
            balloon = e.probe_kb
    step = int(800 * MIB * 0.05)
    assert probes[0] == 800 * MIB            # starts at Committed_AS
    assert probes[1] == probes[0] - step     # then 5 % per round
    assert e.source == 'zballoond/committed_as+balloon_stats'
    swap_in += 50 * MIB                      # the last step went too far
    vm = info(balloon=balloon, stats={'swap_in': swap_in, 'swap_out': 0})
    e = p.estimate([vm], 60.0)['u-1']
    assert e.probe_kb == balloon + step and e.wss_kb == e.probe_kb


def test_selfballoon_needs_committed_as(caplog):
    caplog.set_level(logging.ERROR)
    blind = pipeline.EstimationPipeline(conf_with(), FakeDriver(),
                                        estimator='selfballoon')
    blind.estimate([info()], 0.0)
    assert blind.estimate([info()], 10.0) == {}
    assert 'Committed_AS' in caplog.text and 'u-1' in caplog.text
    p = pipeline.EstimationPipeline(
        conf_with(floor_kb=0), FakeDriver(), estimator='selfballoon',
        committed=lambda vm: 200 * MIB)
    p.estimate([info()], 0.0)
    e = p.estimate([info()], 10.0)['u-1']
    assert e.wss_kb == 200 * MIB
    assert e.probe_kb == 1024 * MIB - (824 * MIB) // 8


def test_console_committed_as(tmp_path):
    log = tmp_path / 'console.log'
    log.write_text('GUESTSTAT t=1 memtotal_kb=1 committed_as_kb=111\n'
                   'noise\nGUESTSTAT t=2 memtotal_kb=1 committed_as_kb=222\n')
    read = baselines.ConsoleCommittedAS(lambda vm: str(log))
    assert read(info()) == 222
    assert baselines.ConsoleCommittedAS(lambda vm: None)(info()) is None
    assert baselines.ConsoleCommittedAS(
        lambda vm: str(tmp_path / 'none'))(info()) is None


def test_bad_data_of_one_vm_does_not_stop_the_others(caplog):
    # both VMs' rounds in the same poll (spreading is tested below)
    p = pipeline.EstimationPipeline(conf_with(spread_rounds=False),
                                    FakeDriver(),
                                    estimator='balloon_stats')
    good = info('good', stats={'available': 100, 'unused': 50})
    bad = info('bad', stats={'available': 100, 'unused': 'x'})
    caplog.set_level(logging.ERROR)
    p.estimate([good, bad], 0.0)
    out = p.estimate([good, bad], 10.0)
    assert out['good'].wss_kb == 50 and 'bad' not in out
    assert 'vm-bad (bad): estimation round failed' in caplog.text
    assert 'Traceback' not in caplog.text


def test_unknown_estimator_is_refused():
    with pytest.raises(ValueError, match="unknown working-set estimator "
                                         r"'magic' \(choices: badis, "):
        pipeline.EstimationPipeline(conf_with(), FakeDriver(),
                                    estimator='magic')


# -- actuation ----------------------------------------------------------------

def est(demand, fresh=True, probe=None, source='badis/sim+balloon_stats'):
    return pipeline.Estimate(uuid='u-1', wss_kb=demand, max_avg_kb=demand,
                             demand_kb=demand, source=source, mode='V',
                             fresh=fresh, probe_kb=probe)


def test_actuator_sets_demand_plus_headroom_and_logs_why(caplog):
    d = FakeDriver()
    a = on_demand.OnDemandController(conf_with(), d)
    caplog.set_level(logging.INFO)
    vm = info(balloon=1024 * MIB)
    done = a.step([vm], {'u-1': est(800 * MIB)})
    # headroom max(32 MiB, 5 % of 800) = 40 MiB; the move (184 MiB) is
    # within the step limit (25 % of 1 GiB)
    assert d.sets == [('u-1', 840 * MIB)]
    assert 'vm-u-1 (u-1): balloon shrink 1024 MiB -> 840 MiB' in caplog.text
    assert 'badis/sim+balloon_stats' in done[0][2]
    assert a.step([vm], {'u-1': est(800 * MIB, fresh=False)}) == []
    assert a.step([info(balloon=840 * MIB)], {'u-1': est(
        801 * MIB)}) == []                          # tiny change ignored
    assert a.step([vm], {}) == []


def test_actuator_rate_limits_and_honours_probes_and_floor():
    d = FakeDriver()
    a = on_demand.OnDemandController(conf_with(), d)
    a.step([info(balloon=1024 * MIB)], {'u-1': est(100 * MIB)})
    assert d.sets[-1][1] == 768 * MIB               # -25 % of booked
    a.step([info(balloon=512 * MIB)], {'u-1': est(0, probe=10 * MIB)})
    assert d.sets[-1][1] == 128 * MIB               # probe, held at floor


def test_actuator_survives_driver_errors(caplog):
    d = FakeDriver()
    a = on_demand.OnDemandController(conf_with(), d)
    d.fail = driver.VMNotFound('gone')
    assert a.step([info()], {'u-1': est(100 * MIB)}) == []
    d.fail = driver.InvalidBalloonTarget('outside')
    caplog.set_level(logging.WARNING)
    assert a.step([info()], {'u-1': est(100 * MIB)}) == []
    assert 'balloon change failed' in caplog.text and 'u-1' in caplog.text


def test_one_vm_s_unexpected_driver_error_leaves_the_others_ballooned(
        caplog):
    class Locked(FakeDriver):
        def set_balloon(self, uuid, kib):
            if uuid == 'u-1':
                raise RuntimeError('cannot acquire state change lock')
            return super().set_balloon(uuid, kib)
    d = Locked()
    a = on_demand.OnDemandController(conf_with(), d)
    caplog.set_level(logging.WARNING)
    vms = [info(), info(uuid='u-2')]
    ests = {'u-1': est(100 * MIB), 'u-2': est(100 * MIB)}
    done = a.step(vms, ests)
    assert [u for u, _, _ in done] == ['u-2'] and d.sets[0][0] == 'u-2'
    assert 'cannot acquire state change lock' in caplog.text
    caplog.clear()
    a.step(vms, ests)
    assert 'state change lock' not in caplog.text     # once per kind


def test_target_params_match_the_options():
    c = conf_with(headroom_kb=1, floor_kb=2)
    p = badis.TargetParams.from_conf(c)
    assert (p.headroom_kb, p.floor_kb) == (1, 2)


class FixedSampler(base.Sampler):
    """Reports ``accessed_kb`` of a 1 GiB mapping every interval: read
    whole (as smaps), or with ``pages`` as that many sampled pages of
    which the same fraction was accessed (as page_idle and kmod)."""
    name = 'fixed'

    def __init__(self, accessed_kb, pages=None):
        self.accessed_kb = accessed_kb
        self.pages = pages
        self.open = set()

    def capability(self, vm, pid):
        return base.Capability(self.name, True, 'test')

    def begin(self, vm, pid):
        self.open.add(vm.uuid)

    def end(self, vm, pid):
        if vm.uuid not in self.open:
            return None
        self.open.discard(vm.uuid)
        if self.pages:
            return base.AccessSample(
                self.name, self.accessed_kb * self.pages // (1024 * MIB),
                self.pages, 1024 * MIB, 10.0)
        return base.AccessSample(self.name, self.accessed_kb // 4,
                                 1024 * MIB // 4, 1024 * MIB, 10.0,
                                 referenced_kb=self.accessed_kb)


def fixed_pipeline(accessed_kb, pages=None, **options):
    """A pipeline whose only sampler reports ``accessed_kb`` every
    interval (:class:`FixedSampler`); ``options`` go to ``[badis]``."""
    conf = conf_with(**options)
    d = FakeDriver()
    sampler = FixedSampler(accessed_kb, pages)
    choice = sampling.SamplerChoice(conf, d, samplers={'fixed': sampler})
    choice.setting = 'fixed'
    return pipeline.EstimationPipeline(conf, d, samplers=choice), sampler


def test_pinned_correction_is_learned_only_from_steady_intervals():
    p, _ = fixed_pipeline(500 * MIB, vg_threshold=0.9,
                          vg_headroom_fraction=0)
    swap_in = [0]

    def vm(balloon, swapping):
        if swapping:
            swap_in[0] += 64 * MIB
        return info(balloon=balloon, stats={
            'swap_in': swap_in[0], 'swap_out': swap_in[0],
            'actual': balloon, 'available': balloon})

    p.estimate([vm(540 * MIB, False)], 0.0)        # first sight
    p.estimate([vm(540 * MIB, False)], 10.0)       # V -> VG (500 >= 90 %)
    assert p.badis.state('u-1').mode.value == 'VG'
    # the balloon grew from 540 MiB during the interval: the guest did not
    # have 600 MiB all along (nor necessarily needs it): 540 - 500 is only
    # a lower bound
    p.estimate([vm(600 * MIB, True)], 20.0)
    assert p.badis.state('u-1').pinned_kb == 40 * MIB
    assert not p.badis.state('u-1').learned
    # a whole interval at 600 MiB, still swapping: 600 - 500 is pinned
    p.estimate([vm(600 * MIB, True)], 30.0)
    assert p.badis.state('u-1').pinned_kb == 100 * MIB
    assert p.badis.state('u-1').learned


def test_initial_correction_is_calibrated_from_the_first_exact_sample(
        caplog):
    caplog.set_level(logging.INFO)
    # (calibration_follow_rounds off: the first calibration alone; with
    # it a rise of memory in use is calibrated again, see
    # test_a_guest_that_goes_on_loading_is_calibrated_again)
    p, _ = fixed_pipeline(300 * MIB, vg_threshold=0.99,
                          calibration_follow_rounds=0)
    # the guest: 1024 MiB, its kernel keeps 50 MiB outside MemTotal
    # (available 974 MiB) and reports 600 MiB MemAvailable (usable): 424
    # MiB in use, 300 of them seen by sampling
    stats = {'actual': 1024 * MIB, 'available': 974 * MIB,
             'usable': 600 * MIB, 'swap_in': 0, 'swap_out': 0}
    p.estimate([info(balloon=1024 * MIB, stats=dict(stats))], 0.0)
    assert p.badis.state('u-1').pinned_kb == 50 * MIB    # reservation
    e = p.estimate([info(balloon=1024 * MIB, stats=dict(stats))], 10.0)
    assert p.badis.state('u-1').pinned_kb == 124 * MIB
    assert e['u-1'].wss_kb == 424 * MIB
    assert 'initial pinned-page correction 124 MiB' in caplog.text
    # only once: later rounds do not recalibrate
    stats['usable'] = 200 * MIB
    p.estimate([info(balloon=1024 * MIB, stats=dict(stats))], 20.0)
    assert p.badis.state('u-1').pinned_kb == 124 * MIB


def _held(p, e, balloon_kb):
    """Whether the round's demand holds the balloon at ``balloon_kb``
    (no shrink: the demand the actuator turns back into that size)."""
    hold = badis.hold_demand(balloon_kb, p.badis.params)
    return (e['u-1'].demand_kb >= hold and
            not any('shrink paced' in ev for ev in e['u-1'].events))


def test_calibration_waits_for_statistics_newer_than_the_sample(caplog):
    # bench_badis W2/W4 (issue 20): the workload allocated within the last
    # stats period, so the first round's statistics say 100 MiB in use
    # while sampling saw 300 MiB touched. Read as they were, nothing
    # looked unseen and the correction stayed at the reservation for good.
    caplog.set_level(logging.INFO)
    p, _ = fixed_pipeline(300 * MIB, vg_threshold=0.99)
    stale = {'actual': 1024 * MIB, 'available': 974 * MIB,
             'usable': 924 * MIB, 'swap_in': 0, 'swap_out': 0}
    fresh = dict(stale, usable=600 * MIB)      # 424 in use, 124 unseen
    p.estimate([info(balloon=1024 * MIB, stats=dict(stale))], 0.0)
    e = p.estimate([info(balloon=1024 * MIB, stats=dict(stale))], 10.0)
    assert p.badis.state('u-1').pinned_kb == 50 * MIB
    assert 'calibration deferred' in caplog.text
    # held at the allocation while the calibration waits: a shrink would
    # make the guest evict and change what it reports in use
    assert _held(p, e, 1024 * MIB)
    # the fresh statistics moved 324 MiB from the interval's start: one
    # more round, then two readings agree and the calibration is made
    p.estimate([info(balloon=1024 * MIB, stats=dict(fresh))], 20.0)
    assert p.badis.state('u-1').pinned_kb == 50 * MIB
    p.estimate([info(balloon=1024 * MIB, stats=dict(fresh))], 30.0)
    assert p.badis.state('u-1').pinned_kb == 124 * MIB


def test_calibration_waits_while_memory_in_use_moves(caplog):
    # bench_badis W4 on a quiet machine (issue 13, session 9): the first
    # round caught the workload mid-allocation. Sampling saw part of it
    # (250 MiB), the statistics another part (274 MiB in use: 24 MiB
    # "unseen", under the 50 MiB reservation), so the correction stayed at
    # the reservation although 124 MiB are unseen once the guest settles.
    # "In use < seen" does not catch it; in use moving during the
    # sampled interval does.
    caplog.set_level(logging.INFO)
    p, sampler = fixed_pipeline(250 * MIB, vg_threshold=0.99)

    def stats(in_use):
        return {'actual': 1024 * MIB, 'available': 974 * MIB,
                'usable': (1024 - in_use) * MIB, 'swap_in': 0,
                'swap_out': 0}
    p.estimate([info(balloon=1024 * MIB, stats=stats(100))], 0.0)
    e = p.estimate([info(balloon=1024 * MIB, stats=stats(274))], 10.0)
    assert p.badis.state('u-1').pinned_kb == 50 * MIB
    assert 'memory in use moving while sampling' in caplog.text
    assert _held(p, e, 1024 * MIB)          # held meanwhile
    sampler.accessed_kb = 300 * MIB         # the whole of it now
    # settled: 424 in use at the interval's start and at its end
    p.estimate([info(balloon=1024 * MIB, stats=stats(424))], 20.0)
    assert p.badis.state('u-1').pinned_kb == 50 * MIB
    p.estimate([info(balloon=1024 * MIB, stats=stats(424))], 30.0)
    assert p.badis.state('u-1').pinned_kb == 124 * MIB


class SweepSampler(FixedSampler):
    """A working set of ``total_kb`` swept at ``per_round_kb`` a round: a
    read sees what was touched since the last clear (``peek`` does not
    clear, as smaps, page_idle and kmod can)."""
    can_peek = True

    def __init__(self, per_round_kb, total_kb, aging=False):
        super().__init__(0)
        self.per_round_kb, self.total_kb = per_round_kb, total_kb
        self.reads = []
        # aging: each read says how long after the clear it was taken (10
        # s a round), else every read says 10 s
        self.aging, self.age = aging, 0.0

    def begin(self, vm, pid):
        super().begin(vm, pid)
        self.accessed_kb = 0
        self.age = 0.0

    def peek(self, vm, pid):
        self.accessed_kb = min(self.total_kb,
                               self.accessed_kb + self.per_round_kb)
        self.reads.append(self.accessed_kb)
        self.age += 10.0
        return base.AccessSample(self.name, self.accessed_kb // 4,
                                 1024 * MIB // 4, 1024 * MIB,
                                 self.age if self.aging else 10.0,
                                 referenced_kb=self.accessed_kb)

    def end(self, vm, pid):
        if vm.uuid not in self.open:
            return None
        sample = self.peek(vm, pid)
        self.open.discard(vm.uuid)
        return sample


def _sweep_pipeline(per_round_kb=120 * MIB, total_kb=300 * MIB,
                    aging=False, **options):
    """A pipeline on a SweepSampler of 300 MiB swept at 120 MiB a round
    (or as given), in a guest with 424 MiB in use: (pipeline, sampler,
    balloon stats)."""
    conf = conf_with(vg_threshold=0.99, **options)
    d = FakeDriver()
    sampler = SweepSampler(per_round_kb, total_kb, aging)
    choice = sampling.SamplerChoice(conf, d, samplers={'fixed': sampler})
    choice.setting = 'fixed'
    p = pipeline.EstimationPipeline(conf, d, samplers=choice)
    stats = {'actual': 1024 * MIB, 'available': 974 * MIB,
             'usable': 600 * MIB, 'swap_in': 0, 'swap_out': 0}
    return p, sampler, stats


@pytest.mark.parametrize('window,pinned_mib', [(1, 304), (3, 124)])
def test_calibration_window_sees_a_sweep_slower_than_a_round(
        window, pinned_mib, caplog):
    # 424 MiB in use, of which a 300 MiB working set swept at 120 MiB a
    # round and 124 MiB never touched (issue 13, stop 51: the paged guest
    # model at 512 MiB counted 193 MiB of a 320 MiB sweep as pinned). One
    # round's sample sees 120 MiB and calls 304 pinned; a read over three
    # rounds sees the whole sweep.
    caplog.set_level(logging.INFO)
    p, sampler, stats = _sweep_pipeline(calibrate_window_rounds=window)
    p.estimate([info(balloon=1024 * MIB, stats=dict(stats))], 0.0)
    for t in range(1, window):
        e = p.estimate([info(balloon=1024 * MIB, stats=dict(stats))],
                       10.0 * t)
        # the window is open: not calibrated, the balloon held
        assert p.badis.state('u-1').pinned_kb == 50 * MIB
        assert _held(p, e, 1024 * MIB)
    p.estimate([info(balloon=1024 * MIB, stats=dict(stats))], 10.0 * window)
    assert p.badis.state('u-1').pinned_kb == pinned_mib * MIB
    assert sampler.reads[window - 1] == min(window * 120, 300) * MIB
    # and one round's interval again after it
    p.estimate([info(balloon=1024 * MIB, stats=dict(stats))],
               10.0 * window + 10)
    assert sampler.reads[-1] == 120 * MIB


def _probing_rounds(p, stats, rounds):
    """``rounds`` 10 s rounds of one VM whose balloon follows the demand
    (+ 16 MiB) and every probe: (probes started, probes a read spared)."""
    balloon, probes, spared = 1024 * MIB, 0, 0
    for i in range(rounds):
        e = p.estimate([info(balloon=balloon, stats=dict(stats))], 10.0 * i)
        r = e.get('u-1')
        if r is None:
            continue
        probes += r.probe_kb is not None
        spared += any(ev.startswith('no balloon probe') for ev in r.events)
        if r.probe_kb is not None:
            balloon = r.probe_kb
        elif r.demand_kb:
            balloon = r.demand_kb + 16 * MIB
    return probes, spared


@pytest.mark.parametrize('warm_rounds', [0, 3])
def test_a_read_over_rounds_before_a_probe_spares_a_slow_sweep(
        warm_rounds, caplog):
    # calibration_probe_warm_rounds (stop 61): the one-round calibration
    # counted 304 MiB of the guest's 424 MiB in use as pinned, 180 MiB of
    # them a sweep slower than a round (a Zipf tail on the paged guest
    # model). A read over three rounds before the probe sees them
    # touched; the 74 MiB left above the reservation's 50 is under
    # calibration_probe_min_fraction of the booking: no probe. Without
    # it, probe after probe takes the balloon under what the guest uses.
    caplog.set_level(logging.INFO)
    p, sampler, stats = _sweep_pipeline(
        calibration_probe_warm_rounds=warm_rounds, time_slice=20.0,
        shrink_swapin_window=10.0)
    probes, spared = _probing_rounds(p, stats, 50)
    state = p.badis.state('u-1')
    assert state.pinned_kb == 304 * MIB
    if warm_rounds:
        assert probes == 0 and spared >= 2
        assert state.warm_kb == 180 * MIB
        # the read: one round (120 MiB, the round's sample), then three
        assert (120 * MIB, 240 * MIB, 300 * MIB) in zip(
            sampler.reads, sampler.reads[1:], sampler.reads[2:])
        assert '300 MiB touched over 3 rounds, 180 MiB of it after the ' \
            'first' in caplog.text
    else:
        assert probes >= 2 and spared == 0


@pytest.mark.parametrize('per_round_mib, slope_on, budget, probed', [
    (20, True, False, False),   # new memory at 2 MiB/s at the end: spared
    (20, False, False, True),   # the option off: probed as before
    (5, True, False, True),     # 0.5 MiB/s, under the 1 MiB/s bound
    # calibration_probe_warm_budget (stop 90, off by default): 2 MiB/s over
    # the hundreds of MiB the read did not see touched is a budget of
    # half of them: probed
    (20, True, True, True),
])
def test_a_read_still_finding_new_memory_spares_the_probe(
        per_round_mib, slope_on, budget, probed, caplog):
    # calibration_probe_warm_slope (stop 62): a key-value store read at
    # random over more than the read covers (redis on TCG) shows little
    # touched beyond the first round, but new memory at every round of
    # it: shrunk to what the read saw, the guest would read back that
    # fast, above swapin_bound_kb_s
    caplog.set_level(logging.INFO)
    p, sampler, stats = _sweep_pipeline(
        per_round_kb=per_round_mib * MIB, total_kb=1000 * MIB, aging=True,
        calibration_probe_warm_rounds=3, time_slice=20.0,
        shrink_swapin_window=10.0,
        calibration_probe_warm_slope=slope_on,
        calibration_probe_warm_budget=budget)
    probes, spared = _probing_rounds(p, stats, 40)
    state = p.badis.state('u-1')
    assert state.warm_slope_kb_s == pytest.approx(
        per_round_mib * MIB / 10.0)
    assert bool(probes) == probed
    if not probed:
        assert spared >= 2
        assert ('memory it had not touched before at 2 MiB/s at the '
                'end, above the swap-in bound of 1 MiB/s' in caplog.text)


def test_a_read_over_rounds_needs_a_back_end_that_peeks():
    # FixedSampler cannot read an interval without ending it: the probe
    # goes on as without the option
    p, sampler = fixed_pipeline(120 * MIB, calibration_probe_warm_rounds=3,
                                time_slice=20.0, shrink_swapin_window=10.0,
                                vg_threshold=0.99)
    stats = {'actual': 1024 * MIB, 'available': 974 * MIB,
             'usable': 600 * MIB, 'swap_in': 0, 'swap_out': 0}
    probes, _ = _probing_rounds(p, stats, 30)
    assert probes >= 1
    assert not p.badis.state('u-1').warm_wanted


def test_no_read_over_rounds_with_the_curve():
    # ws_curve reads across rounds itself; asking for a read it never
    # makes would hold every probe off
    p, sampler, stats = _sweep_pipeline(
        calibration_probe_warm_rounds=3, ws_curve=True, time_slice=20.0,
        shrink_swapin_window=10.0, calibration_probe_min_fraction=0.0)
    probes, _ = _probing_rounds(p, stats, 50)
    assert probes >= 1
    assert not p.badis.state('u-1').warm_wanted


def test_calibration_window_is_ignored_with_the_curve():
    # ws_curve reads across rounds by itself: the calibration counts
    # against the longest window the curve has read, from the first round,
    # and calibrate_window_rounds neither holds it nor the balloon
    p, sampler, stats = _sweep_pipeline(calibrate_window_rounds=3,
                                        ws_curve=True)
    p.estimate([info(balloon=1024 * MIB, stats=dict(stats))], 0.0)
    p.estimate([info(balloon=1024 * MIB, stats=dict(stats))], 10.0)
    state = p.badis.state('u-1')
    assert state.pinned_kb != 50 * MIB
    assert state.pinned_kb == 424 * MIB - max(sampler.reads)


@pytest.mark.parametrize('rebase', [False, True])
def test_calibration_rebase_raises_the_averaged_estimates(rebase, caplog):
    # issue 13 (badis33): the calibration came in the guest's fourth
    # round, after estimates corrected with the kernel reservation alone;
    # averaged with them, the demand fell below what the guest was just
    # shown to use
    caplog.set_level(logging.INFO)
    p, sampler = fixed_pipeline(250 * MIB, vg_threshold=0.99,
                                calibration_rebase=rebase)

    def stats(in_use):
        return {'actual': 1024 * MIB, 'available': 974 * MIB,
                'usable': (1024 - in_use) * MIB, 'swap_in': 0,
                'swap_out': 0}
    p.estimate([info(balloon=1024 * MIB, stats=stats(100))], 0.0)
    p.estimate([info(balloon=1024 * MIB, stats=stats(274))], 10.0)
    sampler.accessed_kb = 300 * MIB
    p.estimate([info(balloon=1024 * MIB, stats=stats(424))], 20.0)
    assert p.badis.state('u-1').recent == (300 * MIB, 350 * MIB)
    e = p.estimate([info(balloon=1024 * MIB, stats=stats(424))], 30.0)
    assert p.badis.state('u-1').pinned_kb == 124 * MIB
    assert e['u-1'].wss_kb == 424 * MIB
    if rebase:
        # 300 + 50 and 250 + 50 were short of the same 74 MiB
        assert p.badis.state('u-1').recent == (
            374 * MIB, 424 * MIB, 424 * MIB)
        assert e['u-1'].max_avg_kb == (374 + 424 + 424) * MIB // 3
        assert 'moving average raised by the calibration' in caplog.text
    else:
        assert e['u-1'].max_avg_kb == (300 + 350 + 424) * MIB // 3
        assert 'moving average raised' not in caplog.text


def test_raise_pinned_shifts_only_on_a_rise_and_caps_at_the_booking():
    state = badis.BadisState(pinned_kb=50, recent=(100, 200),
                             window=((1.0, 150), (2.0, 120)))
    up = badis.raise_pinned(state, 80, 220, rebase=True, pinned_at=3.0)
    assert up.pinned_kb == 80 and up.pinned_at == 3.0
    assert up.recent == (130, 220)              # 230 capped
    assert up.window == ((1.0, 180), (2.0, 150))
    down = badis.raise_pinned(state, 30, 220, rebase=True)
    assert down.pinned_kb == 30 and down.recent == state.recent
    off = badis.raise_pinned(state, 80, 220)
    assert off.recent == state.recent and off.window == state.window


def test_a_sample_that_missed_most_of_it_defers_the_calibration(caplog):
    # TCG (stop 54): a set reused more slowly than a round; one round's
    # sample saw little, and the unseen memory, over 75 % of the balloon,
    # was not believed: the calibration was made with nothing for good.
    # It waits for a round whose sample saw more, the balloon held.
    caplog.set_level(logging.INFO)
    p, sampler = fixed_pipeline(100 * MIB, vg_threshold=0.99)
    stats = {'actual': 1024 * MIB, 'available': 974 * MIB,
             'usable': 124 * MIB, 'swap_in': 0, 'swap_out': 0}   # 900 used
    p.estimate([info(balloon=1024 * MIB, stats=dict(stats))], 0.0)
    e = p.estimate([info(balloon=1024 * MIB, stats=dict(stats))], 10.0)
    assert not p._vms['u-1'].calibrated
    assert 'more than 75% of the balloon' in caplog.text
    assert _held(p, e, 1024 * MIB)          # held meanwhile
    sampler.accessed_kb = 400 * MIB
    p.estimate([info(balloon=1024 * MIB, stats=dict(stats))], 20.0)
    assert p._vms['u-1'].calibrated
    assert p.badis.state('u-1').pinned_kb == 500 * MIB
    assert badis_rounds.unseen_implausible(
        info(balloon=1024 * MIB, stats=dict(stats)), 400 * MIB) is None


def _until_calibrated(sampled_kb, usable_kb):
    """A pipeline whose sample reads ``sampled_kb`` fed the same balloon
    statistics every 10 s until its calibration is made, the balloon
    held until then: (pipeline, the time it was made, its estimate)."""
    p, _ = fixed_pipeline(sampled_kb, vg_threshold=0.99)
    stats = {'actual': 1024 * MIB, 'available': 974 * MIB,
             'usable': usable_kb, 'swap_in': 0, 'swap_out': 0}
    t = 0.0
    p.estimate([info(balloon=1024 * MIB, stats=dict(stats))], t)
    while not p._vms['u-1'].calibrated and t < 100:
        t += 10.0
        e = p.estimate([info(balloon=1024 * MIB, stats=dict(stats))], t)
        if not p._vms['u-1'].calibrated:
            assert _held(p, e, 1024 * MIB)     # held meanwhile
    return p, t, e['u-1']


def test_a_calibration_that_never_sees_more_takes_the_limit():
    # every round's sample misses most of it: after the deferrals the
    # unseen memory is counted at 75 % of the balloon (the calibration
    # probe walks an over-count down), not as nothing
    p, t, _ = _until_calibrated(100 * MIB, 124 * MIB)
    assert t == 10.0 * (1 + 3)          # calibration_defer_rounds = 3
    assert p.badis.state('u-1').pinned_kb == 768 * MIB


def test_calibration_unsafe_reasons():
    f = badis_rounds.calibration_unsafe
    assert f(None, 100 * MIB, 50 * MIB, 1024 * MIB) is None
    assert 'older than the sample' in f(100 * MIB, None, 300 * MIB,
                                        1024 * MIB)
    # steady within max(4 MiB, 2 % of the balloon): 20 MiB at 1 GiB
    assert f(420 * MIB, 400 * MIB, 300 * MIB, 1024 * MIB) is None
    assert 'moving' in f(421 * MIB, 400 * MIB, 300 * MIB, 1024 * MIB)
    assert 'moving' in f(379 * MIB, 400 * MIB, 300 * MIB, 1024 * MIB)
    assert f(104 * MIB, 100 * MIB, 50 * MIB, 64 * MIB) is None
    assert 'moving' in f(105 * MIB, 100 * MIB, 50 * MIB, 64 * MIB)


def test_calibration_gives_up_waiting_after_a_bounded_number_of_rounds():
    # a guest whose touched pages are page cache (counted available)
    # always reads "in use < seen": calibrated after the deferrals, from
    # what it reports (nothing unseen: the reservation stays)
    p, t, e = _until_calibrated(300 * MIB, 924 * MIB)
    assert t == 10.0 * (badis_rounds.STALE_STATS_ROUNDS + 1)
    assert p.badis.state('u-1').pinned_kb == 50 * MIB
    # no longer held: the estimate may now shrink the balloon
    assert e.demand_kb < 1024 * MIB


@pytest.mark.parametrize('defer, expect_mib', [
    # the default: after 3 deferrals the calibration reads the load
    # before its end (724 MiB in use, 300 seen)
    (3, 424),
    # waiting out the load: 824 in use once it stops, 300 seen
    (10, 524)])
def test_calibration_waits_out_a_load_up_to_calibration_defer_rounds(
        defer, expect_mib):
    # (calibration_follow_rounds off: what the deferrals alone wait out)
    p, _ = fixed_pipeline(300 * MIB, vg_threshold=0.99,
                          calibration_defer_rounds=defer,
                          calibration_follow_rounds=0)
    stats = {'actual': 1024 * MIB, 'available': 974 * MIB,
             'swap_in': 0, 'swap_out': 0}
    # memory in use 324, 424, ... 824 MiB, then steady: a guest loading
    for t, in_use in enumerate((324, 424, 524, 624, 724, 824, 824, 824)):
        e = p.estimate([info(balloon=1024 * MIB, stats=dict(
            stats, usable=(1024 - in_use) * MIB))], 10.0 * t)
        if t and not p._vms['u-1'].calibrated:
            # held at the allocation while the calibration waits
            assert _held(p, e, 1024 * MIB)
    assert p._vms['u-1'].calibrated
    assert p.badis.state('u-1').pinned_kb == expect_mib * MIB


@pytest.mark.parametrize('follow, pinned_mib', [(True, 424), (False, 224)])
def test_a_guest_that_goes_on_loading_is_calibrated_again(
        follow, pinned_mib, caplog):
    # calibration_follow_rounds (stop 62): redis filled from boot on TCG
    # went on loading for 14 s after the first calibration; sampling saw
    # only what each round wrote, so the correction stayed at what the
    # guest used at the first read and the descent went into its data
    caplog.set_level(logging.INFO)
    p, _ = fixed_pipeline(100 * MIB, vg_threshold=0.99,
                          calibration_defer_rounds=0,
                          calibration_follow_rounds=5 if follow else 0)
    stats = {'actual': 1024 * MIB, 'available': 974 * MIB,
             'swap_in': 0, 'swap_out': 0}
    estimates, held = [], []
    # in use 324 MiB at the calibration, then 424, 524 MiB; then it frees
    for t, in_use in enumerate((324, 324, 424, 524, 524, 400, 400, 400)):
        e = p.estimate([info(balloon=1024 * MIB, stats=dict(
            stats, usable=(1024 - in_use) * MIB))], 10.0 * t)
        if 'u-1' in e:
            estimates.append(e['u-1'].wss_kb // MIB)
            held.append(any('memory in use is rising' in ev
                            for ev in e['u-1'].events))
    state = p.badis.state('u-1')
    # raised only, never lowered by this rule (the guest freeing memory is
    # pinned_used_bound's and the probes' business)
    assert state.pinned_kb == pinned_mib * MIB
    if follow:
        assert estimates[:5] == [324, 424, 524, 524, 524], estimates
        # the balloon held while it rose and the round after (the
        # descent would outrun the load)
        assert held == [False, True, True, True, False, False, False]
        assert ('pinned-page correction 324 MiB -> 424 MiB: calibrated '
                'again: guest memory in use rose from 424 MiB to 524 MiB'
                in caplog.text)
        assert state.pinned_unconfirmed     # the probes test it
    else:
        assert set(estimates) == {324} and not any(held)


def test_the_calibration_stops_following_once_the_load_is_over(caplog):
    # three rounds without a rise end the load: a later rise (a step of a
    # working set the sample sees only in part) is not calibrated
    caplog.set_level(logging.INFO)
    p, _ = fixed_pipeline(100 * MIB, vg_threshold=0.99,
                          calibration_defer_rounds=0,
                          calibration_follow_rounds=3)
    stats = {'actual': 1024 * MIB, 'available': 974 * MIB,
             'swap_in': 0, 'swap_out': 0}
    for t, in_use in enumerate((324, 324, 424, 424, 424, 424, 624, 624)):
        p.estimate([info(balloon=1024 * MIB, stats=dict(
            stats, usable=(1024 - in_use) * MIB))], 10.0 * t)
    assert p.badis.state('u-1').pinned_kb == 324 * MIB
    assert ('has not risen for 3 rounds: the pinned-page calibration no '
            'longer follows it' in caplog.text)


def test_no_calibration_again_while_the_guest_swaps():
    p, _ = fixed_pipeline(100 * MIB, vg_threshold=0.99,
                          calibration_defer_rounds=0,
                          calibration_follow_rounds=5)
    stats = {'actual': 1024 * MIB, 'available': 974 * MIB,
             'swap_in': 0, 'swap_out': 0}
    p.estimate([info(balloon=1024 * MIB, stats=dict(
        stats, usable=700 * MIB))], 0.0)
    p.estimate([info(balloon=1024 * MIB, stats=dict(
        stats, usable=700 * MIB))], 10.0)
    assert p.badis.state('u-1').pinned_kb == 224 * MIB
    # what it reads back from swap is in use again, not data it loaded:
    # VG learns from such rounds, this rule does not
    p.estimate([info(balloon=1024 * MIB, stats=dict(
        stats, usable=600 * MIB, swap_in=4096, swap_out=0))], 20.0)
    assert p.badis.state('u-1').pinned_kb == 224 * MIB


def test_no_calibration_when_disabled():
    stats = {'actual': 1024 * MIB, 'available': 974 * MIB,
             'usable': 600 * MIB, 'swap_in': 0, 'swap_out': 0}
    p, sampler = fixed_pipeline(300 * MIB, calibrate_pinned=False)
    p.estimate([info(balloon=1024 * MIB, stats=dict(stats))], 0.0)
    p.estimate([info(balloon=1024 * MIB, stats=dict(stats))], 10.0)
    assert p.badis.state('u-1').pinned_kb == 50 * MIB


@pytest.mark.parametrize('accessed, pages', [(292, 1000), (29, 100)])
def test_sampled_pages_calibrate_at_the_upper_end_of_what_was_seen(
        caplog, accessed, pages):
    # page_idle or kmod (KVM), calibration_sample_point = upper (the
    # default until stop 60): what was seen counts at the upper end of
    # its 99.5 % interval: 424 MiB in use, 1000 pages of 1 GiB with 292
    # accessed (299 MiB estimated, at most about 338 MiB): 86 MiB unseen at
    # least; at 100 pages the upper end (about 42 %) leaves 0
    caplog.set_level(logging.INFO)
    stats = {'actual': 1024 * MIB, 'available': 974 * MIB,
             'usable': 600 * MIB, 'swap_in': 0, 'swap_out': 0}
    p, sampler = fixed_pipeline(300 * MIB, vg_threshold=0.99,
                                calibration_sample_point='upper')
    sampler.end = lambda vm, pid: base.AccessSample(
        'fixed', accessed, pages, 1024 * MIB, 10.0)
    p.estimate([info(balloon=1024 * MIB, stats=dict(stats))], 0.0)
    p.estimate([info(balloon=1024 * MIB, stats=dict(stats))], 10.0)
    high = techniques.sample_high(accessed, pages, 1024 * MIB)
    assert accessed * MIB < high < 1024 * MIB
    st = p.badis.state('u-1')
    if 424 * MIB - high > 50 * MIB:
        assert st.pinned_kb == st.pinned_calibrated_kb == 424 * MIB - high
        assert 'at most' in st.pinned_note
        assert 'estimated from sampled pages' in caplog.text
        assert 80 * MIB < st.pinned_kb < 90 * MIB
    else:
        assert st.pinned_kb == 50 * MIB     # the reservation: the floor
    assert p._vms['u-1'].calibrated


def test_sampled_pages_calibrate_at_the_estimate(caplog):
    # calibration_sample_point = estimate (the default): 29 of 100 pages
    # of 1 GiB is 296.96 MiB seen, so 424 MiB in use leaves about 127 MiB
    # unseen (the upper end leaves nothing: the test above)
    caplog.set_level(logging.INFO)
    stats = {'actual': 1024 * MIB, 'available': 974 * MIB,
             'usable': 600 * MIB, 'swap_in': 0, 'swap_out': 0}
    p, sampler = fixed_pipeline(300 * MIB, vg_threshold=0.99)
    sampler.end = lambda vm, pid: base.AccessSample(
        'fixed', 29, 100, 1024 * MIB, 10.0)
    p.estimate([info(balloon=1024 * MIB, stats=dict(stats))], 0.0)
    p.estimate([info(balloon=1024 * MIB, stats=dict(stats))], 10.0)
    st = p.badis.state('u-1')
    seen = 29 * 1024 * MIB // 100
    assert st.pinned_kb == st.pinned_calibrated_kb == 424 * MIB - seen
    assert 'at most' not in st.pinned_note
    assert p._vms['u-1'].calibrated


def test_guest_unseen_memory():
    vm = info(balloon=1024 * MIB, stats={'actual': 1024 * MIB,
                                         'usable': 600 * MIB})
    assert badis_rounds.guest_unseen_kb(vm, 300 * MIB) == 124 * MIB
    assert badis_rounds.guest_unseen_kb(vm, 500 * MIB) == 0
    # over 75 % of the balloon: taken at that limit, not as nothing
    assert badis_rounds.guest_unseen_kb(vm, 0) == 424 * MIB
    full = info(balloon=1024 * MIB, stats={'actual': 1024 * MIB,
                                           'usable': 24 * MIB})
    assert badis_rounds.guest_unseen_kb(full, 100 * MIB) == 768 * MIB
    assert badis_rounds.guest_unseen_kb(info(stats={}), 0) == 0
    assert badis_rounds.unseen_implausible(full, 100 * MIB)
    assert badis_rounds.unseen_implausible(vm, 0) is None


def test_no_pinned_learning_from_an_interval_that_shrank():
    p, _ = fixed_pipeline(500 * MIB, vg_threshold=0.9)
    stats = {'swap_in': 0, 'swap_out': 0}
    p.estimate([info(balloon=540 * MIB, stats=dict(stats))], 0.0)
    p.estimate([info(balloon=540 * MIB, stats=dict(stats))], 10.0)
    stats = {'swap_in': 64 * MIB, 'swap_out': 64 * MIB}
    p.estimate([info(balloon=520 * MIB, stats=stats)], 20.0)
    assert p.badis.state('u-1').mode.value == 'VG'
    assert p.badis.state('u-1').pinned_kb == 0


def test_committed_as_in_balloon_terms_covers_the_guest_kernel():
    conf = conf_with()
    p = pipeline.EstimationPipeline(conf, FakeDriver(),
                                    committed=lambda vm: 40 * MIB,
                                    estimator='zballoond')
    # 256 MiB guest: 51 MiB reserved (MemTotal 205), 148 MiB available:
    # 108 MiB in use, 17 MiB more than Committed_AS + the reservation
    vm = info(booked=256 * MIB, stats={'actual': 256 * MIB,
                                       'available': 205 * MIB,
                                       'usable': 148 * MIB})
    p.estimate([vm], 0.0)                        # first sight
    assert baselines.committed_in_balloon_terms(
        p.committed, vm, p._vms[vm.uuid]) == 108 * MIB
    # taken once: a squeezed guest (little available) does not lower it
    squeezed = info(booked=256 * MIB, balloon=120 * MIB,
                    stats={'actual': 120 * MIB, 'available': 69 * MIB,
                           'usable': 4 * MIB})
    st = p._vms[vm.uuid]
    assert baselines.committed_in_balloon_terms(
        p.committed, squeezed, st) == 108 * MIB
    p.committed = lambda vm: 60 * MIB            # the workload grew
    assert baselines.committed_in_balloon_terms(
        p.committed, squeezed, st) == 128 * MIB


def test_geiger_counts_from_the_size_the_guest_evicted_at():
    seen = []

    class Recorder(swap_monitors.SwapMonitor):
        name = 'rec'

        def read(self, vm, m_cur_kb):
            seen.append(m_cur_kb)
            return swap_monitors.SwapReading(False, None, self.name)

    conf = conf_with()
    p = pipeline.EstimationPipeline(
        conf, FakeDriver(), swap=swap_monitors.SwapMonitors([Recorder()]))
    p.estimate([info(balloon=300 * MIB)], 0.0)      # first sight (primes)
    p.estimate([info(balloon=300 * MIB)], 10.0)
    p.estimate([info(balloon=500 * MIB)], 20.0)     # grew since last round
    p.estimate([info(balloon=500 * MIB)], 30.0)
    assert seen == [300 * MIB, 300 * MIB, 300 * MIB, 500 * MIB]


class _Scripted(swap_monitors.SwapMonitor):
    """A swap monitor whose readings are given per call."""
    name = 'scripted'

    def __init__(self, readings):
        self.readings = list(readings)
        self.calls = []

    def read(self, vm, m_cur_kb, keep_quiet=False):
        self.calls.append((m_cur_kb, keep_quiet))
        r = self.readings.pop(0) if self.readings else None
        if r is None:
            return swap_monitors.SwapReading(False, None, self.name)
        return swap_monitors.SwapReading(True, techniques.TechniqueEstimate(
            m_cur_kb + r, techniques.SOURCE_GEIGER), self.name)


def test_round_is_due_within_the_tolerance_of_the_interval():
    conf = conf_with(round_interval=10.0, round_tolerance=0.1)
    mon = _Scripted([])
    p = pipeline.EstimationPipeline(
        conf, FakeDriver(), swap=swap_monitors.SwapMonitors([mon]))
    p.estimate([info(balloon=300 * MIB)], 0.0)
    e = p.estimate([info(balloon=300 * MIB)], 9.95)   # a poll a bit early
    assert e['u-1'].fresh and p.rounds == 1
    e = p.estimate([info(balloon=300 * MIB)], 18.0)   # too early
    assert not e['u-1'].fresh and p.rounds == 1


def test_swap_activity_between_rounds_runs_the_round_at_once():
    conf = conf_with(round_interval=10.0)
    # first sight, round at 10 (quiet), poll at 15 (quiet), poll at 17:
    # swapping with m_ghost 100 MiB
    mon = _Scripted([None, None, None, 100 * MIB])
    p = pipeline.EstimationPipeline(
        conf, FakeDriver(), swap=swap_monitors.SwapMonitors([mon]))
    vm = info(balloon=300 * MIB)
    p.estimate([vm], 0.0)
    first = p.estimate([vm], 10.0)['u-1']
    assert first.fresh and first.mode == 'V'
    assert not p.estimate([vm], 15.0)['u-1'].fresh
    e = p.estimate([vm], 17.0)['u-1']
    assert e.fresh and e.mode == 'VG' and e.wss_kb == 400 * MIB
    assert e.demand_kb >= 400 * MIB
    assert mon.calls[2:] == [(300 * MIB, True), (300 * MIB, True)]
    # the next regular round is round_interval after the early one
    assert not p.estimate([vm], 20.0)['u-1'].fresh
    assert p.estimate([vm], 27.0)['u-1'].fresh


def test_no_early_round_after_the_balloon_moved():
    conf = conf_with(round_interval=10.0)
    mon = _Scripted([None, None, 100 * MIB])
    p = pipeline.EstimationPipeline(
        conf, FakeDriver(), swap=swap_monitors.SwapMonitors([mon]))
    p.estimate([info(balloon=300 * MIB)], 0.0)
    p.estimate([info(balloon=300 * MIB)], 10.0)
    # our own shrink since the last round: swap-ins say nothing yet
    e = p.estimate([info(balloon=250 * MIB)], 15.0)['u-1']
    assert not e.fresh
    assert len(mon.calls) == 2          # the monitor was not even read


def test_early_round_after_a_grow_only_while_the_guest_is_full():
    conf = conf_with(round_interval=10.0)
    mon = _Scripted([None, None, 50 * MIB, 80 * MIB])
    p = pipeline.EstimationPipeline(
        conf, FakeDriver(), swap=swap_monitors.SwapMonitors([mon]))
    p.estimate([info(balloon=300 * MIB)], 0.0)
    p.estimate([info(balloon=300 * MIB)], 10.0)
    roomy = info(balloon=400 * MIB, stats={'unused': 90 * MIB})
    assert not p.estimate([roomy], 13.0)['u-1'].fresh
    assert len(mon.calls) == 2
    full = info(balloon=400 * MIB, stats={'unused': 2 * MIB})
    e = p.estimate([full], 15.0)['u-1']
    # distances count from the size the guest evicted at
    assert e.fresh and e.wss_kb == 350 * MIB
    assert mon.calls[-1] == (300 * MIB, True)


def test_no_early_round_when_disabled():
    conf = conf_with(round_interval=10.0, react_to_swapping=False)
    mon = _Scripted([None, None, 100 * MIB])
    p = pipeline.EstimationPipeline(
        conf, FakeDriver(), swap=swap_monitors.SwapMonitors([mon]))
    p.estimate([info(balloon=300 * MIB)], 0.0)
    p.estimate([info(balloon=300 * MIB)], 10.0)
    assert not p.estimate([info(balloon=300 * MIB)], 15.0)['u-1'].fresh
    assert len(mon.calls) == 2


def test_balloon_stats_monitor_keeps_a_quiet_look_in_the_round():
    m = swap_monitors.BalloonStatsSwapMonitor(swap_in_threshold_kb=4096)
    m.read(info(stats={'swap_in': 0, 'swap_out': 0}), 512 * MIB)
    look = m.read(info(stats={'swap_in': 3000, 'swap_out': 9000}),
                  512 * MIB, keep_quiet=True)
    assert not look.swapping              # 3000 KiB < threshold
    # the round still sees the whole round's 6000 KiB
    r = m.read(info(stats={'swap_in': 6000, 'swap_out': 9000}), 512 * MIB)
    assert r.swapping


# -- swap growth under pressure ----------------------------------------------

def queued_reading(queue_pages, swap_ins=0):
    r = memstore_reading([[0, swap_ins]] if swap_ins else [])
    r.queue_pages = queue_pages
    return r


def test_memstore_monitor_reports_swap_growth_as_a_rate():
    clock = Clock()
    readings = [queued_reading(0), queued_reading(2560),
                queued_reading(2600), queued_reading(1000)]
    m = swap_monitors.MemstoreSwapMonitor(lambda vm: readings.pop(0),
                                          growth_rate_kb=2048, clock=clock)
    assert m.read(info(), 300 * MIB).grown_kb == 0        # first reading
    clock.t = 1.0
    r = m.read(info(), 300 * MIB)        # 10 MiB into swap in 1 s
    assert r.grown_kb == 10 * MIB and r.pressure and not r.swapping
    assert '+10240 KiB in swap' in r.detail
    clock.t = 11.0
    r = m.read(info(), 300 * MIB)        # 160 KiB in 10 s: a trickle
    assert r.grown_kb == 160 and not r.pressure
    clock.t = 12.0
    r = m.read(info(), 300 * MIB)        # read back: no growth
    assert r.grown_kb == 0 and not r.pressure


def test_memstore_monitor_leaves_quiet_growth_to_the_round():
    clock = Clock()
    readings = [queued_reading(0), queued_reading(200),
                queued_reading(2000)]
    m = swap_monitors.MemstoreSwapMonitor(lambda vm: readings.pop(0),
                                          growth_rate_kb=2048, clock=clock)
    m.read(info(), 300 * MIB)
    clock.t = 1.0
    look = m.read(info(), 300 * MIB, keep_quiet=True)   # 800 KiB/s
    assert not look.pressure
    clock.t = 2.0
    r = m.read(info(), 300 * MIB)        # the round sees both: 8000 KiB
    assert r.grown_kb == 8000 and r.pressure


def test_balloon_stats_monitor_reports_net_swap_growth():
    clock = Clock()
    m = swap_monitors.BalloonStatsSwapMonitor(swap_in_threshold_kb=4096,
                                              growth_rate_kb=2048, clock=clock)
    m.read(info(stats={'swap_in': 0, 'swap_out': 0}), 512 * MIB)
    clock.t = 2.0
    r = m.read(info(stats={'swap_in': 1000, 'swap_out': 9000}), 512 * MIB)
    assert r.grown_kb == 8000 and r.pressure and not r.swapping
    clock.t = 4.0
    r = m.read(info(stats={'swap_in': 2000, 'swap_out': 10000}), 512 * MIB)
    assert r.grown_kb == 0 and not r.pressure


class _Growth(swap_monitors.SwapMonitor):
    """Readings of swap growth only (no swap-ins), per call."""
    name = 'growth'

    def __init__(self, grown):
        self.grown = list(grown)

    def read(self, vm, m_cur_kb, keep_quiet=False):
        g = self.grown.pop(0) if self.grown else 0
        return swap_monitors.SwapReading(False, None, self.name, grown_kb=g,
                                         pressure=g > 0)


def test_swap_growth_at_a_steady_allocation_is_a_shortage():
    mon = _Growth([0, 0, 30 * MIB])
    p = pipeline.EstimationPipeline(
        conf_with(round_interval=10.0), FakeDriver(),
        swap=swap_monitors.SwapMonitors([mon]))
    vm = info(balloon=300 * MIB, stats={'unused': 2 * MIB})
    p.estimate([vm], 0.0)
    assert p.estimate([vm], 10.0)['u-1'].mode == 'V'
    e = p.estimate([vm], 20.0)['u-1']
    assert e.mode == 'VG' and e.detail == badis.SOURCE_SWAP_GROWTH
    assert e.wss_kb == 330 * MIB and e.demand_kb >= 330 * MIB


def test_swap_growth_after_our_shrink_is_not_a_shortage():
    mon = _Growth([0, 0, 30 * MIB])
    p = pipeline.EstimationPipeline(
        conf_with(round_interval=10.0), FakeDriver(),
        swap=swap_monitors.SwapMonitors([mon]))
    p.estimate([info(balloon=300 * MIB)], 0.0)
    p.estimate([info(balloon=300 * MIB)], 10.0)
    # shrunk by 40 MiB since the last round: the guest evicted for us
    e = p.estimate([info(balloon=260 * MIB)], 20.0)['u-1']
    assert e.mode == 'V' and e.detail != badis.SOURCE_SWAP_GROWTH


def test_swap_growth_between_rounds_runs_the_round_at_once():
    mon = _Growth([0, 0, 0, 20 * MIB])
    p = pipeline.EstimationPipeline(
        conf_with(round_interval=10.0), FakeDriver(),
        swap=swap_monitors.SwapMonitors([mon]))
    vm = info(balloon=300 * MIB)
    p.estimate([vm], 0.0)
    p.estimate([vm], 10.0)
    assert not p.estimate([vm], 12.0)['u-1'].fresh
    e = p.estimate([vm], 13.0)['u-1']
    assert e.fresh and e.wss_kb == 320 * MIB and e.mode == 'VG'


# -- evictions at the current size after a grow -------------------------------

def written_reading(out_pages, histogram=()):
    r = memstore_reading([list(b) for b in histogram])
    r.swap_out_pages = out_pages
    return r


def test_memstore_monitor_reports_what_was_written_per_interval():
    readings = [written_reading(1000), written_reading(1000),
                written_reading(3560), written_reading(3660)]
    m = swap_monitors.MemstoreSwapMonitor(lambda vm: readings.pop(0))
    assert m.read(info(), 300 * MIB).out_kb == 0      # first reading
    assert m.read(info(), 300 * MIB).out_kb == 0
    # a quiet look does not start a new interval: the round sees it all
    look = m.read(info(), 300 * MIB, keep_quiet=True)
    assert look.out_kb == 10 * MIB and '10240 KiB written' in look.detail
    assert m.read(info(), 300 * MIB).out_kb == 10 * MIB + 400


def test_balloon_stats_monitor_reports_what_was_written():
    m = swap_monitors.BalloonStatsSwapMonitor(swap_in_threshold_kb=4096)
    m.read(info(stats={'swap_in': 0, 'swap_out': 1000}), 512 * MIB)
    r = m.read(info(stats={'swap_in': 0, 'swap_out': 9000}), 512 * MIB)
    assert r.out_kb == 8000
    # counters restarted (guest reboot): nothing known to be written
    r = m.read(info(stats={'swap_in': 0, 'swap_out': 10}), 512 * MIB)
    assert r.out_kb == 0


class _Written(swap_monitors.SwapMonitor):
    """Geiger readings (m_ghost) with what the guest wrote, per call."""
    name = 'written'

    def __init__(self, readings):
        self.readings = list(readings)
        self.calls = []

    def read(self, vm, m_cur_kb, keep_quiet=False):
        self.calls.append((m_cur_kb, keep_quiet))
        ghost, out = self.readings.pop(0) if self.readings else (0, 0)
        if not ghost:
            return swap_monitors.SwapReading(False, None, self.name,
                                             out_kb=out)
        return swap_monitors.SwapReading(True, techniques.TechniqueEstimate(
            m_cur_kb + ghost, techniques.SOURCE_GEIGER), self.name,
            detail='m_ghost', out_kb=out)


def _grown_pipeline(readings, **opts):
    mon = _Written([(0, 0), (0, 0)] + list(readings))   # priming, round
    p = pipeline.EstimationPipeline(
        conf_with(round_interval=10.0, swap_in_threshold_kb=1024, **opts),
        FakeDriver(), swap=swap_monitors.SwapMonitors([mon]))
    p.estimate([info(balloon=300 * MIB)], 0.0)
    p.estimate([info(balloon=300 * MIB)], 10.0)
    return p, mon


def test_geiger_from_the_new_size_when_the_guest_evicts_after_a_grow():
    # grown 300 -> 400 MiB since the last round; the guest still wrote
    # 8 MiB to swap at 400: it is full there, so m_ghost counts from 400
    p, mon = _grown_pipeline([(30 * MIB, 8 * MIB)], react_to_swapping=False)
    e = p.estimate([info(balloon=400 * MIB)], 20.0)['u-1']
    assert mon.calls[-1] == (300 * MIB, False)
    assert e.wss_kb == 430 * MIB and e.detail == techniques.SOURCE_GEIGER


def test_geiger_from_the_old_size_while_the_grown_guest_only_reads_back():
    # refilling after the grow (no writes): the pages read back were
    # evicted at 300 MiB and the guest has room at 400
    p, _ = _grown_pipeline([(30 * MIB, 0)], react_to_swapping=False)
    e = p.estimate([info(balloon=400 * MIB)], 20.0)['u-1']
    assert e.wss_kb == 330 * MIB
    # a few pages written (under the threshold) do not count either
    p, _ = _grown_pipeline([(30 * MIB, 512)], react_to_swapping=False)
    assert p.estimate([info(balloon=400 * MIB)], 20.0)['u-1'].wss_kb == (
        330 * MIB)


def test_early_round_after_a_grow_counts_from_the_new_size_when_evicting():
    p, mon = _grown_pipeline([(30 * MIB, 8 * MIB)])
    full = info(balloon=400 * MIB, stats={'unused': 2 * MIB})
    e = p.estimate([full], 13.0)['u-1']
    assert e.fresh and mon.calls[-1] == (300 * MIB, True)
    assert e.wss_kb == 430 * MIB


def test_early_round_after_a_grow_that_answered_a_shortage():
    # the round at 10 s is short (m_ghost 40 MiB): the balloon grows; at
    # the next poll the guest's balloon statistics still show the room the
    # grow gave (up to a period old), yet it keeps swapping
    mon = _Written([(0, 0), (40 * MIB, 0), (30 * MIB, 8 * MIB)])
    p = pipeline.EstimationPipeline(
        conf_with(round_interval=10.0, swap_in_threshold_kb=1024),
        FakeDriver(), swap=swap_monitors.SwapMonitors([mon]))
    p.estimate([info(balloon=300 * MIB)], 0.0)
    short = p.estimate([info(balloon=300 * MIB)], 10.0)['u-1']
    assert short.wss_kb == 340 * MIB
    roomy = info(balloon=356 * MIB, stats={'unused': 40 * MIB})
    e = p.estimate([roomy], 10.5)['u-1']
    assert e.fresh and mon.calls[-1] == (300 * MIB, True)
    assert e.wss_kb == 356 * MIB + 30 * MIB     # evicting at 356 MiB


def test_no_early_round_after_a_grow_with_room_without_a_shortage():
    mon = _Written([(0, 0), (0, 0), (30 * MIB, 8 * MIB)])
    p = pipeline.EstimationPipeline(
        conf_with(round_interval=10.0, swap_in_threshold_kb=1024),
        FakeDriver(), swap=swap_monitors.SwapMonitors([mon]))
    p.estimate([info(balloon=300 * MIB)], 0.0)
    p.estimate([info(balloon=300 * MIB)], 10.0)
    roomy = info(balloon=356 * MIB, stats={'unused': 40 * MIB})
    assert not p.estimate([roomy], 10.5)['u-1'].fresh
    assert len(mon.calls) == 2


@pytest.mark.parametrize('shape', ['W1', 'W3', 'W5'])
def test_issue13_switches_run_end_to_end_on_the_simulator(shape):
    # the stall filter and the balloon probe on: the loop runs and the
    # probe asks for less than the estimate it leaves unchanged (how
    # well they estimate is the benchmarks' business). Without
    # no_shrink_below_estimate: it holds the demand at an estimate that
    # falls while a probe runs (W5's steps down), and the probe's size
    # then sits above the next rounds' estimates
    conf = common.private_conf(
        badis={'round_interval': 10.0, 'time_slice': 30.0,
               'stall_filter': True, 'pinned_probe': True,
               'no_shrink_below_estimate': False},
        simulated_hypervisor={'step_seconds': 300})
    p, trace = sim_loop(shape, 120, conf=conf)
    ests = [e for _, _, _, e in trace if e is not None]
    assert len(ests) > 100
    # (at most: an estimate is capped at the allocation, which the probe
    # holds at its size.) Checked where each probe starts: an estimate
    # that falls while a probe runs (W5's steps down, met by the first
    # calibration probe one read-back window after the calibration with
    # calibration_probe_early) leaves the probe above it, the guest more
    # memory than the estimate, until the probe's window ends.
    starts = [e for last, e in zip([None] + ests, ests)
              if e.probe_kb is not None and (
                  last is None or last.probe_kb is None)]
    assert starts
    # (probe_evicts_one_step: a guest using more than the estimate is
    # probed one step under what it uses, at most at the allocation the
    # lower correction would be given: under the estimate's)
    room = sizing.headroom(max(e.wss_kb for e in starts),
                           conf.badis.headroom_kb,
                           conf.badis.headroom_fraction)
    assert all(e.probe_kb <= e.wss_kb + room - conf.badis.pinned_probe_step_kb
               for e in starts)
    assert all(e.wss_kb > 0 for e in ests)


# -- rounds spread over the interval ------------------------------------------

def _round_polls(p, vms, polls, poll=5.0, first=0):
    """For each poll from ``first`` on, the VMs whose estimate was fresh
    at it."""
    out = []
    for i in range(first, first + polls):
        est = p.estimate(vms, i * poll)
        out.append(sorted(u for u, e in est.items() if e.fresh))
    return out


def test_vms_adopted_at_once_get_their_rounds_in_different_polls():
    """20 VMs seen in the same poll (an agent's start): with rounds of 60 s
    and polls of 5 s, a round falls every 11th poll; spread, no poll
    carries more than 2 of the 20 rounds, and every VM gets its first
    estimate within one round interval of its start; not spread, all 20
    share one poll."""
    vms = [info('u-%02d' % i, stats={'available': 100, 'unused': 50})
           for i in range(20)]
    spread = pipeline.EstimationPipeline(
        conf_with(round_interval=60.0), FakeDriver(),
        estimator='balloon_stats')
    rounds = _round_polls(spread, vms, 60)
    busiest = max(len(r) for r in rounds)
    assert busiest == 2
    first = {u: min(i for i, r in enumerate(rounds) if u in r)
             for u in (vm.uuid for vm in vms)}
    assert max(first.values()) * 5.0 <= 2 * 60.0
    # every VM keeps its round interval once started
    for u in first:
        seen = [i for i, r in enumerate(rounds) if u in r]
        assert all(b - a == 11 for a, b in zip(seen, seen[1:]))
    together = pipeline.EstimationPipeline(
        conf_with(round_interval=60.0, spread_rounds=False), FakeDriver(),
        estimator='balloon_stats')
    assert max(len(r) for r in _round_polls(together, vms, 60)) == 20


def test_a_vm_arriving_later_takes_the_emptiest_poll():
    p = pipeline.EstimationPipeline(conf_with(round_interval=20.0),
                                    FakeDriver(), estimator='balloon_stats')
    a = info('a', stats={'available': 100, 'unused': 50})
    b = info('b', stats={'available': 100, 'unused': 50})
    assert p.start_delay(0.0) == 0.0          # nobody yet: start now
    p.estimate([a], 0.0)                     # a's rounds: polls 0, 4, 8..
    # b seen at poll 4 (20 s), the poll of a's round: it waits a poll
    assert p.start_delay(20.0) == 5.0
    p.estimate([a, b], 20.0)
    rounds = _round_polls(p, [a, b], 12, first=5)
    assert ['a'] in rounds and ['b'] in rounds
    assert not any(len(r) > 1 for r in rounds)


def test_rounds_not_longer_than_a_poll_are_never_delayed():
    p = pipeline.EstimationPipeline(conf_with(round_interval=5.0),
                                    FakeDriver(), estimator='balloon_stats')
    p.estimate([info('a')], 0.0)
    assert p.start_delay(0.0) == 0.0


def test_a_learned_correction_is_capped_by_the_guest_statistics():
    # the CI failure of stop 29: a correction learned high kept the
    # estimate 80 MiB over a working set that had fallen, while the guest
    # reported most of its memory free
    p, _ = fixed_pipeline(300 * MIB, vg_threshold=0.99)

    def stats(not_free):
        return {'actual': 1024 * MIB, 'available': 974 * MIB,
                'usable': (1024 - not_free + 20) * MIB,
                'unused': (1024 - not_free) * MIB,
                'swap_in': 0, 'swap_out': 0}
    p.estimate([info(balloon=1024 * MIB, stats=stats(420))], 0.0)
    p.estimate([info(balloon=1024 * MIB, stats=stats(420))], 10.0)
    uuid = 'u-1'
    # calibrated: 400 in use (MemAvailable), 300 seen
    assert p.badis.state(uuid).pinned_calibrated_kb == 100 * MIB
    # nothing has shown it is needed yet (calibration_probe tests it)
    assert p.badis.state(uuid).pinned_unconfirmed
    learned = dataclasses.replace(
        p.badis.state(uuid), pinned_kb=600 * MIB, pinned_at=10.0,
        learned=True, pinned_note='learned in VG')
    p.badis.states[uuid] = learned
    # the statistics moved during the interval: no cap
    p.estimate([info(balloon=1024 * MIB, stats=stats(500))], 20.0)
    assert p.badis.state(uuid).pinned_kb == 600 * MIB
    # steady: 420 not free, 300 seen, so at most 120 unseen
    p.estimate([info(balloon=1024 * MIB, stats=stats(500))], 30.0)
    assert p.badis.state(uuid).pinned_kb == 200 * MIB
    p.estimate([info(balloon=1024 * MIB, stats=stats(420))], 40.0)
    p.estimate([info(balloon=1024 * MIB, stats=stats(420))], 50.0)
    assert p.badis.state(uuid).pinned_kb == 120 * MIB
    assert 'bounded' in p.badis.state(uuid).pinned_note


def test_a_sampled_back_end_caps_the_correction_after_three_rounds():
    # page_idle or kmod on KVM: 1000 pages of 1 GiB, 292 accessed (299
    # MiB estimated, at least 262.6 MiB at 99.5 %); the guest has 420 MiB
    # not free, so at most about 157 MiB went unseen
    p, _ = fixed_pipeline(300 * MIB, pages=1000, vg_threshold=0.99)
    stats = {'actual': 1024 * MIB, 'available': 974 * MIB,
             'usable': 624 * MIB, 'unused': 604 * MIB,
             'swap_in': 0, 'swap_out': 0}
    uuid = 'u-1'
    p.estimate([info(balloon=1024 * MIB, stats=stats)], 0.0)
    assert p.badis.state(uuid).pinned_calibrated_kb == 0   # no sample yet
    p.badis.states[uuid] = dataclasses.replace(
        p.badis.state(uuid), pinned_kb=600 * MIB, pinned_at=0.0,
        learned=True, pinned_note='learned in VG')
    for t in (10.0, 20.0):
        p.estimate([info(balloon=1024 * MIB, stats=stats)], t)
        assert p.badis.state(uuid).pinned_kb == 600 * MIB
    p.estimate([info(balloon=1024 * MIB, stats=stats)], 30.0)
    low = techniques.sample_low(292, 1000, 1024 * MIB)
    assert p.badis.state(uuid).pinned_kb == 420 * MIB - low
    assert 'at least' in p.badis.state(uuid).pinned_note


def test_estimates_report_the_vms_own_time_slice():
    # time_slice_max lengthens a VM's slice while its shortages recur
    # (adaptive_slice.py); the estimate (and the API's max_avg_slice_s)
    # says which slice its WSS^max_avg was taken over
    from memmut.agent.wss import adaptive_slice
    conf = common.private_conf(
        badis={'round_interval': 10.0, 'time_slice': 30.0,
               'time_slice_max': 120.0},
        simulated_hypervisor={'step_seconds': 300})
    p, trace = sim_loop('W1', 3, conf=conf)
    assert trace[-1][3].max_avg_slice_s == 30.0
    uuid = trace[-1][3].uuid
    st = p.badis.states[uuid]
    p.badis.states[uuid] = dataclasses.replace(
        st, slice=adaptive_slice.Slice(seconds=90.0, short_at=20.0,
                                       changed_at=20.0))
    clock_t = trace[-1][0] + 10
    e = p.estimate(p.driver.list_vms(), clock_t)[uuid]
    assert e.max_avg_slice_s == 90.0


# -- a round ended early by thrashing after a shrink ------------------------

def _thrash_run(**options):
    """Rounds of 60 s, polls of 5 s: the first round at 60 s (balloon 600
    MiB), then the balloon made 100 MiB smaller and the guest reading
    back 150 MiB by 65 s and 250 MiB by 70 s. The polls' estimates."""
    p, _ = fixed_pipeline(300 * MIB, round_interval=60.0,
                          calibration_follow_rounds=0, **options)

    def vm(balloon, swap_in):
        return info(balloon=balloon, stats={
            'swap_in': swap_in, 'swap_out': 300 * MIB, 'actual': balloon,
            'available': balloon, 'usable': 200 * MIB,
            'unused': 2 * MIB})
    p.estimate([vm(600 * MIB, 0)], 0.0)
    first = p.estimate([vm(600 * MIB, 0)], 60.0)['u-1']
    assert first.fresh
    return [p.estimate([vm(500 * MIB, kb)], t)['u-1']
            for t, kb in ((65.0, 150 * MIB), (70.0, 250 * MIB))]


def test_a_guest_reading_back_twice_what_a_shrink_took_ends_its_round(
        caplog):
    caplog.set_level(logging.INFO)
    at65, at70 = _thrash_run()
    # 150 MiB read back for 100 taken: a reclaim's burst, left to the round
    assert not at65.fresh
    # 250 MiB: more than twice what the balloon took; the round comes now
    # and sees the shortage
    assert at70.fresh and at70.timestamp == 70.0
    assert 'round ended early: the guest read back 250 MiB' in caplog.text


def test_without_end_round_on_thrashing_the_round_waits():
    at65, at70 = _thrash_run(end_round_on_thrashing=False)
    assert not at65.fresh and not at70.fresh
