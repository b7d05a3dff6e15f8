"""Badis rounds with the working-set curve's short-cycle set ([badis]
ws_curve_short_rounds), through the estimation pipeline."""

import logging

from memmut.evaluation import ref_streams
from tests.unit.agent import test_ws_curve_rounds as tcr

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
    p, out = tcr.run(True, seconds=seconds, sampler_pages=sampler_pages,
                     refs=refs(seconds + 1),
                     ws_curve_short_rounds=short_rounds,
                     ws_curve_short_pages=400)
    return p, {t: e.wss_kb // 4 for t, e in out}


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
