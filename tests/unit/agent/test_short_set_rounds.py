"""Badis rounds with the working-set curve's short-cycle set ([badis]
ws_curve_short_rounds), through the estimation pipeline."""

import logging

from memmut.agent.wss import pipeline
from memmut.agent.wss import sampling
from memmut.agent.wss.sampling import simulated
from memmut.evaluation import ref_streams
from tests.unit.agent import test_estimation as te

PAGES = 10000              # 39 MiB guest
RATE = 5000                # references per second
BEFORE, AFTER = 6000, 1500
FALL = 13.3                # the set shrinks to pages it already touched


def refs(seconds):
    n = int(seconds * RATE)
    return ref_streams.timed(ref_streams.shrinking(
        ref_streams.sweep(BEFORE, n), ref_streams.sweep(AFTER, n), FALL,
        RATE), RATE)


def run(short_rounds, sampler_pages=1000, seconds=30.0):
    conf = te.conf_with(round_interval=1.0, calibrate_pinned=False,
                        ws_curve=True, ws_curve_rounds=8,
                        swapin_bound_kb_s=256,
                        ws_curve_short_rounds=short_rounds,
                        ws_curve_short_pages=400)
    d = te.FakeDriver()
    guest = simulated.ReferenceStream(refs(seconds + 1), PAGES)
    s = simulated.StreamSampler({'u-1': guest}, pages=sampler_pages)
    choice = sampling.SamplerChoice(conf, d, samplers={'stream': s})
    choice.setting = 'stream'
    p = pipeline.EstimationPipeline(conf, d, samplers=choice)
    out = {}
    t = 0.0
    while t <= seconds:
        guest.advance(t)
        e = p.estimate([te.info(booked=PAGES * 4, balloon=PAGES * 4,
                                dtype='qemu')], t)
        if e.get('u-1') is not None and e['u-1'].fresh:
            out[t] = e['u-1'].wss_kb // 4
        t = round(t + 0.25, 2)
    return p, out


def test_the_short_set_follows_a_fall_before_the_next_clear(caplog):
    caplog.set_level(logging.INFO)
    _, plain = run(0)
    p, short = run(2)
    # the curve alone keeps the old set until the clear at 16 s and half
    # a cycle after it
    assert all(v >= BEFORE * 0.95 for t, v in plain.items()
               if FALL + 1 <= t <= 19)
    # the short set: the first window that starts after the fall (14-16
    # s) shows it at its end
    assert 'the working set fell' in caplog.text
    # (upper confidence limits of 400 and 1000 sampled pages)
    assert all(v <= AFTER * 1.5 for t, v in short.items() if 16 <= t <= 30)
    assert all(v >= BEFORE * 0.95 for t, v in short.items()
               if 8 <= t <= FALL)
    st = p._vms['u-1']
    assert st.short_on


def test_without_a_second_set_the_option_says_it_has_no_effect(caplog):
    caplog.set_level(logging.WARNING)
    _, exact = run(2, sampler_pages=None, seconds=6.0)
    _, plain = run(0, sampler_pages=None, seconds=6.0)
    assert exact == plain
    assert caplog.text.count('ws_curve_short_rounds has no effect') == 1
