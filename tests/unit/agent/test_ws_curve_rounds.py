"""Badis rounds with the working-set curve ([badis] ws_curve) and the
first-sample calibration over several rounds ([badis] calibrate_rounds),
through the estimation pipeline."""

import logging

from memmut.agent.wss import badis
from memmut.agent.wss import pipeline
from memmut.agent.wss import sampling
from memmut.agent.wss.sampling import simulated
from tests.unit.agent import test_estimation as te

MIB = 1024
PAGES = 10000              # 39 MiB guest
SET = 5000                 # a sweep of 5000 pages ...
PERIOD = 2.0               # ... every 2 s: slower than the 1 s round
RATE = SET / PERIOD


def sweep_refs(seconds):
    n = int(seconds * RATE)
    return ((i / RATE, i % SET) for i in range(n))


def run(curve, seconds=20.0, sampler_pages=None, refs=None, **opts):
    """The agent's pipeline on a simulated guest of PAGES pages replaying
    ``refs`` (default: the slow sweep), polled every 0.25 s: (pipeline,
    [(t, fresh estimate)])."""
    conf = te.conf_with(round_interval=1.0, calibrate_pinned=False,
                        ws_curve=curve, ws_curve_rounds=8,
                        swapin_bound_kb_s=256, **opts)
    d = te.FakeDriver()
    guest = simulated.ReferenceStream(
        sweep_refs(seconds + 1) if refs is None else refs, PAGES)
    s = simulated.StreamSampler({'u-1': guest}, pages=sampler_pages)
    choice = sampling.SamplerChoice(conf, d, samplers={'stream': s})
    choice.setting = 'stream'
    p = pipeline.EstimationPipeline(conf, d, samplers=choice)
    out = []
    t = 0.0
    while t <= seconds:
        guest.advance(t)
        e = p.estimate([te.info(booked=PAGES * 4, balloon=PAGES * 4,
                                dtype='qemu')], t)
        if e.get('u-1') is not None and e['u-1'].fresh:
            out.append((t, e['u-1']))
        t = round(t + 0.25, 2)
    return p, out


def test_a_sweep_slower_than_the_round_gets_its_whole_set():
    _, plain = run(False)
    _, curve = run(True)
    # one interval of 1 s sees half the sweep ...
    assert all(abs(e.wss_kb - SET * 4 // 2) <= 4 * 260
               for t, e in plain[2:])
    # ... the curve sees it flatten at the whole set from its second
    # read of 2 s on
    late = [e for t, e in curve if t >= 3.0]
    assert late and all(e.detail == 'ws-curve' for e in late)
    assert all(abs(e.wss_kb - SET * 4) <= 8 for e in late)


def test_curve_cycles_clear_every_n_rounds_and_keep_the_previous():
    p, curve = run(True, seconds=12.0)
    st = p._vms['u-1']
    # 12 rounds: one complete cycle of 8, the running one has 4 rounds
    assert st.curve_rounds == 4
    assert st.curve_prev and st.curve_prev[-1].age_s >= 7.5
    # right after the clear the previous cycle's long windows still hold
    # the estimate at the whole set
    after = [e for t, e in curve if 8.5 <= t <= 10.0]
    assert after and all(abs(e.wss_kb - SET * 4) <= 8 for e in after)


def test_curve_with_sampled_pages_is_conservative():
    _, curve = run(True, sampler_pages=500)
    late = [e for t, e in curve if t >= 3.0]
    # 500 of 10000 pages: the slope's upper confidence bound never
    # certifies 256 KiB/s over these windows: the longest window is taken
    assert all(e.wss_kb >= SET * 4 * 0.85 for e in late)


def test_curve_falls_back_without_peek():
    conf = te.conf_with(round_interval=10.0, calibrate_pinned=False,
                        ws_curve=True)
    d = te.FakeDriver()
    choice = sampling.SamplerChoice(conf, d, samplers={
        'fixed': te.FixedSampler(300 * MIB)})
    choice.setting = 'fixed'
    p = pipeline.EstimationPipeline(conf, d, samplers=choice)
    p.estimate([te.info(dtype='qemu')], 0.0)
    p.estimate([te.info(dtype='qemu')], 5.0)          # a poll: no peek
    e = p.estimate([te.info(dtype='qemu')], 10.0)['u-1']
    assert e.wss_kb == 300 * MIB and e.detail != 'ws-curve'


def calibrating(rounds, usables, caplog=None):
    conf = te.conf_with(vg_threshold=0.99, calibrate_rounds=rounds)
    d = te.FakeDriver()
    choice = sampling.SamplerChoice(conf, d, samplers={
        'fixed': te.FixedSampler(300 * MIB)})
    choice.setting = 'fixed'
    p = pipeline.EstimationPipeline(conf, d, samplers=choice)
    seen = []
    demands = []
    for i, usable in enumerate([usables[0]] + list(usables)):
        # 1024 MiB guest, kernel reservation 20 MiB; in use: 1024 -
        # usable, of which sampling sees 300 MiB
        stats = {'actual': 1024 * MIB, 'available': 1004 * MIB,
                 'usable': usable * MIB, 'swap_in': 0, 'swap_out': 0}
        e = p.estimate([te.info(balloon=1024 * MIB, stats=stats)],
                       10.0 * i)
        seen.append(p.badis.state('u-1').pinned_kb // MIB)
        if e:
            demands.append(e['u-1'].demand_kb // MIB)
    calibrating.demands = demands
    # the demand that holds the balloon where it is (MiB)
    calibrating.hold = badis.hold_demand(1024 * MIB, p.badis.params) // MIB
    return seen[1:]


def test_calibration_over_rounds_is_a_median_that_can_fall(caplog):
    caplog.set_level(logging.INFO)
    # unseen per round: 100 (a sample taken while the guest loaded),
    # then 40, 45; after the third round later readings (300) are not
    # calibrations
    seen = calibrating(3, [624, 684, 679, 424, 424])
    assert seen[:3] == [100, 70, 45]
    assert seen[3:] == [45, 45]          # done after 3 rounds
    # no shrink while calibrating: every reading at the same allocation;
    # the round of the last reading may shrink
    assert calibrating.demands[:2] == [calibrating.hold] * 2
    assert max(calibrating.demands[2:]) < calibrating.hold
    assert 'median over 3 of 3 calibration rounds' in caplog.text


def test_calibration_median_never_below_the_reservation():
    seen = calibrating(3, [714, 724, 724])      # unseen 10, 0, 0
    assert seen == [20, 20, 20]


def test_calibration_of_one_round_is_the_first_sample_raised_only():
    seen = calibrating(1, [624, 684, 679])
    assert seen == [100, 100, 100]
    assert calibrating.demands[0] < calibrating.hold     # no hold


def test_reads_between_rounds_only_at_geometric_times():
    class Counting(simulated.StreamSampler):
        peeks = []

        def peek(self, vm, pid):
            sample = super().peek(vm, pid)
            self.peeks.append(round(sample.interval_s, 2))
            return sample

    conf = te.conf_with(round_interval=4.0, calibrate_pinned=False,
                        ws_curve=True, ws_curve_rounds=4,
                        swapin_bound_kb_s=256)
    d = te.FakeDriver()
    guest = simulated.ReferenceStream(sweep_refs(40), PAGES)
    s = Counting({'u-1': guest})
    choice = sampling.SamplerChoice(conf, d, samplers={'stream': s})
    choice.setting = 'stream'
    p = pipeline.EstimationPipeline(conf, d, samplers=choice)
    t = 0.0
    while t <= 8.0:
        guest.advance(t)
        p.estimate([te.info(booked=PAGES * 4, balloon=PAGES * 4,
                            dtype='qemu')], t)
        t = round(t + 0.25, 2)
    # polls every 0.25 s, rounds every 4 s (due 10 % early): reads at
    # 0.25, 0.5, 1, 2 between rounds, then only at the rounds
    assert s.peeks == [0.25, 0.5, 1.0, 2.0, 3.75, 7.5]


def test_fall_detect_follows_a_fall_in_the_pipeline():
    # the sweep falls from 5000 to 1000 pages at 6 s, within the first
    # cycle; after the clear at 8 s the running cycle reads far below the
    # first cycle at the same ages
    def falling(seconds):
        n = int(seconds * RATE)
        for i in range(n):
            t = i / RATE
            yield t, (i % SET if t < 6.0 else i % 1000)

    def go(detect):
        conf = te.conf_with(round_interval=1.0, calibrate_pinned=False,
                            ws_curve=True, ws_curve_rounds=8,
                            swapin_bound_kb_s=256,
                            ws_curve_fall_detect=detect)
        d = te.FakeDriver()
        guest = simulated.ReferenceStream(falling(17.0), PAGES)
        s = simulated.StreamSampler({'u-1': guest})
        choice = sampling.SamplerChoice(conf, d, samplers={'stream': s})
        choice.setting = 'stream'
        p = pipeline.EstimationPipeline(conf, d, samplers=choice)
        out = {}
        t = 0.0
        while t <= 16.0:
            guest.advance(t)
            e = p.estimate([te.info(booked=PAGES * 4, balloon=PAGES * 4,
                                    dtype='qemu')], t)
            if e.get('u-1') is not None and e['u-1'].fresh:
                out[t] = e['u-1'].wss_kb
            t = round(t + 0.25, 2)
        return out

    with_fd, without = go(True), go(False)
    # without: the previous cycle holds the old set until half a cycle
    assert all(kb >= SET * 4 - 8 for t, kb in without.items()
               if 9.0 <= t < 11.5)
    # with: followed three rounds after the clear (the evidence at the
    # reads of rounds 2 and 3)
    followed = [t for t, kb in with_fd.items() if t >= 8.0 and
                kb <= 1000 * 4 + 8]
    assert followed and followed[0] <= 11.5
    assert all(kb <= 1000 * 4 + 8 for t, kb in with_fd.items()
               if t >= followed[0])


def _observations(curve, unused_at, seconds=12.0, booked=PAGES * 4):
    """Every Observation the pipeline gave Badis over ``seconds`` of the
    slow sweep, the guest's MemFree ``unused_at(t)`` KiB."""
    conf = te.conf_with(round_interval=1.0, calibrate_pinned=False,
                        ws_curve=curve, ws_curve_rounds=8,
                        swapin_bound_kb_s=256)
    d = te.FakeDriver()
    guest = simulated.ReferenceStream(sweep_refs(seconds + 1), PAGES)
    s = simulated.StreamSampler({'u-1': guest})
    choice = sampling.SamplerChoice(conf, d, samplers={'stream': s})
    choice.setting = 'stream'
    p = pipeline.EstimationPipeline(conf, d, samplers=choice)
    seen = []
    observe = p.badis.observe

    def record(uuid, obs):
        seen.append(obs)
        return observe(uuid, obs)

    p.badis.observe = record
    t = 0.0
    while t <= seconds:
        guest.advance(t)
        p.estimate([te.info(booked=booked, balloon=booked, dtype='qemu',
                            stats={'unused': unused_at(t)})], t)
        t = round(t + 0.25, 2)
    return seen


def _used_seen(curve, unused_at):
    return [o.used_kb for o in _observations(curve, unused_at)]


def test_memory_in_use_moving_during_the_interval_is_not_reported():
    # the guest allocates 4 MiB a second: more than STEADY_IN_USE_KB
    # (4 MiB) moves within every 1 s round
    moving = lambda t: 30 * MIB - int(5 * MIB * t)   # noqa: E731
    steady = lambda t: 20 * MIB                       # noqa: E731
    for curve in (False, True):
        assert set(_used_seen(curve, moving)[2:]) == {None}, curve
        got = [u for u in _used_seen(curve, steady)[2:] if u is not None]
        assert got and set(got) == {PAGES * 4 - 20 * MIB}, curve


def test_allocating_is_a_rise_beyond_the_noise():
    from memmut.agent.wss import badis_rounds as br
    balloon = 256 * MIB
    # 2 % of 256 MiB (5.1 MiB) is the noise here
    assert br.allocating(106 * MIB, 100 * MIB, balloon)
    assert not br.allocating(104 * MIB, 100 * MIB, balloon)
    # freeing is not allocating; unknown is not either
    assert not br.allocating(90 * MIB, 100 * MIB, balloon)
    assert not br.allocating(None, 100 * MIB, balloon)
    assert not br.allocating(106 * MIB, None, balloon)


def test_the_pipeline_tells_badis_the_guest_allocates():
    # MemFree falls 8 MiB a second for 4 s, then stays
    seen = _observations(
        False, lambda t: 38 * MIB - int(8 * MIB * min(t, 4.0)),
        seconds=8.0, booked=PAGES * 4 * 10)
    assert any(o.allocating for o in seen if 1.0 < o.timestamp <= 4.0)
    assert not any(o.allocating for o in seen if o.timestamp >= 5.5)
