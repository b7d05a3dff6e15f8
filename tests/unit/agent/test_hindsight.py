"""Shrinks judged in hindsight (memmut/agent/wss/hindsight.py) and the
shrink floor they raise."""

import dataclasses

import pytest

from memmut.agent.wss import badis
from memmut.agent.wss import hindsight as hs
from memmut.agent.wss import shrink_floor as floors
from memmut.agent.wss import techniques as est

MiB = 1024
BOOKED = 256 * MiB
P = hs.Params(rounds=10, fraction=0.25, min_kb=4 * MiB, settle=2)


def rounds(ledger, reads, shrink_at=0, out_first=20 * MiB):
    """A shrink 256 -> 200 MiB at round ``shrink_at`` writing
    ``out_first`` to swap, then ``reads`` KiB read back per round."""
    verdicts = []
    for i, read in enumerate(reads):
        shrunk = i == shrink_at
        ledger, bad, ev = hs.update(
            ledger, shrunk=shrunk, shrunk_from_kb=256 * MiB if shrunk
            else None, m_cur_kb=200 * MiB,
            out_kb=out_first if shrunk else 0, in_kb=read, params=P)
        verdicts.append((bad, ev))
    return ledger, verdicts


def test_a_shrink_whose_evictions_come_back_is_bad():
    # 2 MiB a round read back: a quarter of 20 MiB after 3 rounds; then
    # the floor asked for grows with what is read back, never above the
    # size before the shrink
    ledger, v = rounds(hs.Ledger(), [0, 2 * MiB, 2 * MiB, 2 * MiB, 0,
                                     20 * MiB, 40 * MiB])
    floors_asked = [b for b, _ in v]
    # (asked in the rounds that read back only)
    assert floors_asked == [0, 0, 0, 206 * MiB, 0, 226 * MiB, 256 * MiB]
    events = [e for _, e in v if e]
    assert len(events) == 1 and 'bad in hindsight' in events[0]
    assert '6 MiB' in events[0]
    assert ledger.bad and ledger.from_kb == 256 * MiB


def test_the_ledger_closes_at_its_horizon():
    ledger, v = rounds(hs.Ledger(), [0, 8 * MiB] + [0] * 7 + [MiB, MiB])
    assert v[1][0] == 208 * MiB
    assert v[9][0] == 209 * MiB         # its last round read back
    assert v[10][0] == 0                # closed: nothing asked
    assert ledger == hs.Ledger()


def test_a_shrink_of_cold_memory_is_closed_at_the_horizon():
    ledger, v = rounds(hs.Ledger(), [0] + [MiB // 4] * 12)
    assert not any(b for b, _ in v)
    assert ledger == hs.Ledger()
    # nothing evicted: nothing to judge, however much is read
    ledger, v = rounds(hs.Ledger(), [MiB] * 5, out_first=0)
    assert not any(b for b, _ in v)


def test_a_descent_is_one_ledger_and_a_later_shrink_a_new_one():
    led = hs.Ledger()
    led, _, _ = hs.update(led, shrunk=True, shrunk_from_kb=256 * MiB,
                          m_cur_kb=224 * MiB, out_kb=0, in_kb=0, params=P)
    led, _, _ = hs.update(led, shrunk=True, shrunk_from_kb=224 * MiB,
                          m_cur_kb=192 * MiB, out_kb=8 * MiB, in_kb=0,
                          params=P)
    assert (led.from_kb, led.low_kb) == (256 * MiB, 192 * MiB)
    for _ in range(3):                         # settle passes
        led, _, _ = hs.update(led, shrunk=False, shrunk_from_kb=None,
                              m_cur_kb=192 * MiB, out_kb=0, in_kb=0,
                              params=P)
    led, _, _ = hs.update(led, shrunk=True, shrunk_from_kb=192 * MiB,
                          m_cur_kb=180 * MiB, out_kb=0, in_kb=0, params=P)
    assert led.from_kb == 192 * MiB and led.out_kb == 0


def test_a_shrink_below_the_demand_is_not_judged():
    # the host took the balloon below what Badis asked (a reclaim to
    # Mem_init): what the guest reads back says nothing of the estimate
    led, _ = rounds(hs.Ledger(), [0, 2 * MiB])
    assert led.from_kb
    led, bad, ev = hs.update(led, shrunk=True, shrunk_from_kb=200 * MiB,
                             m_cur_kb=150 * MiB, out_kb=30 * MiB,
                             in_kb=30 * MiB, params=P, forced=True)
    assert (led, bad, ev) == (hs.Ledger(), 0, None)


def test_off_and_bad_values():
    led, bad, ev = hs.update(hs.Ledger(), shrunk=True,
                             shrunk_from_kb=256 * MiB, m_cur_kb=1,
                             out_kb=99 * MiB, in_kb=99 * MiB,
                             params=hs.Params())
    assert (led, bad, ev) == (hs.Ledger(), 0, None)
    for bad_args in ({'rounds': -1}, {'fraction': 0}, {'fraction': 1.5},
                     {'min_kb': -1}):
        with pytest.raises(ValueError):
            hs.Params(**bad_args)


def test_the_floor_it_raises_holds_against_free_memory_and_steps():
    fp = floors.FloorParams(step_kb=4 * MiB, step_rounds=2)
    floor, ev = floors.hindsight(floors.Floor(), 256 * MiB, 256 * MiB, fp,
                                 sample_kb=200 * MiB, out_kb=60 * MiB)
    assert floor.kb == 256 * MiB and floor.evidenced and 'set at' in ev
    assert floor.out_kb == 60 * MiB
    # the guest uses less than the floor because what it reads back is
    # still out: no release on its free memory (150 MiB used + 60 in
    # swap is above 0.7 of the floor)
    f2, ev2 = floors.update(floor, bad_shrink=False, m_cur_kb=256 * MiB,
                            sample_kb=200 * MiB, short=False,
                            used_kb=150 * MiB, params=fp)
    assert f2.kb == 256 * MiB and ev2 is None
    # it reads 20 MiB back: 40 left out
    f3, _ = floors.update(f2, bad_shrink=False, m_cur_kb=256 * MiB,
                          sample_kb=200 * MiB, short=True, in_kb=20 * MiB,
                          used_kb=None, params=fp)
    assert f3.kb == 256 * MiB and f3.out_kb == 40 * MiB
    # a guest that freed its data releases it, what is in swap counted
    f4, ev4 = floors.update(f3, bad_shrink=False, m_cur_kb=256 * MiB,
                            sample_kb=200 * MiB, short=False,
                            used_kb=145 * MiB, params=fp)
    assert f4.kb == 256 * MiB and ev4 is None    # 185 MiB: above 0.7

    f5, ev5 = floors.update(f3, bad_shrink=False, m_cur_kb=256 * MiB,
                            sample_kb=200 * MiB, short=False,
                            used_kb=120 * MiB, params=fp)
    assert f5.kb == 0 and '40 MiB more in swap' in ev5
    # a lower bad-in-hindsight size does not lower it
    same, ev3 = floors.hindsight(floor, 220 * MiB, 256 * MiB, fp)
    assert same is floor and ev3 is None
    # steps down go on (held rounds), evidenced kept
    f = floors.holding(floor, 200 * MiB, 256 * MiB)[1]
    for _ in range(4):
        f, _ = floors.update(f, bad_shrink=False, m_cur_kb=256 * MiB,
                             sample_kb=200 * MiB, short=False, params=fp)
        f = floors.holding(f, 200 * MiB, 256 * MiB)[1]
    assert f.kb < 256 * MiB and f.evidenced
    # and so is where the guest read back (floors.disproved)
    g = floors.holding(dataclasses.replace(floor, read_at_kb=210 * MiB),
                       200 * MiB, 256 * MiB)[1]
    for _ in range(4):
        g, _ = floors.update(g, bad_shrink=False, m_cur_kb=256 * MiB,
                             sample_kb=200 * MiB, short=False, params=fp)
        g = floors.holding(g, 200 * MiB, 256 * MiB)[1]
    assert g.kb < 256 * MiB and g.read_at_kb == 210 * MiB


# -- in Badis's round (badis.step) --


def _obs(t, m_cur, prev, read=0, out=0, sample=180 * MiB):
    return badis.Observation(
        timestamp=t, m_cur_kb=m_cur, booked_kb=BOOKED,
        sampled=est.TechniqueEstimate(sample, est.SOURCE_VMWARE),
        swapping=read > 0, steady=m_cur == prev, shrunk=m_cur < prev,
        shrunk_from_kb=prev if m_cur < prev else None, full=True,
        swapin_kb=read, evicted_kb=out, interval_s=1.0)


def _zipf_tail(low=200 * MiB, **kw):
    """A guest whose sample reads 180 MiB of a 256 MiB need: shrunk to
    200 MiB at t = 10 (20 MiB written out), then the balloon back at the
    booking while it reads 1 MiB a second back (after the guard's 3 s):
    the floor after 30 rounds."""
    # (a shrink in one step, as Badis asks for it without the slow start;
    # paced, the demand stays above 200 MiB and the host's move is not
    # Badis's to judge)
    params = badis.BadisParams(time_slice=4.0, shrink_swapin_window=3.0,
                               round_interval=1.0, average_window=3,
                               shrink_slow_start_kb=0, **kw)
    st, events = None, []
    bal = prev = BOOKED
    for t in range(40):
        read = MiB if 15 <= t < 35 else 0
        if t == 10:
            bal = low
        elif t == 12:
            bal = BOOKED
        st, r = badis.step(st, _obs(float(t), bal, prev, read=read,
                                    out=20 * MiB if t == 10 else 0),
                           params)
        events += r.events
        prev = bal
    return st, events


def test_badis_raises_the_floor_for_a_tail_read_back_late():
    st, events = _zipf_tail(hindsight_rounds=30, hindsight_min_kb=4 * MiB)
    assert any('bad in hindsight' in e for e in events)
    # at least the lowest allocation (200 MiB) plus what came back (20
    # MiB); the swap-ins at the booking while it is open raise it there
    assert st.floor.kb >= 216 * MiB and st.floor.evidenced
    # where the guest read back: the lowest allocation since the shrink
    assert st.floor.read_at_kb == 200 * MiB
    # off: the floor stays where the guard put it
    st, events = _zipf_tail(hindsight_rounds=0)
    assert not any('bad in hindsight' in e for e in events)
    assert not st.floor.evidenced
    # the host took the balloon below the demand (180 MiB): not judged
    st, events = _zipf_tail(low=150 * MiB, hindsight_rounds=30,
                            hindsight_min_kb=4 * MiB)
    assert not any('bad in hindsight' in e for e in events)
    assert st.last_asked_kb and not st.floor.evidenced


def test_no_calibration_probe_for_a_small_gap():
    # a correction 20 MiB above its floor on a 256 MiB guest (TCG,
    # phases): under 0.15 of the booking, no probe; over it, one
    base = dict(pinned_kb=92 * MiB, pinned_floor_kb=72 * MiB, pinned_at=0.0,
                pinned_note='calibrated', recent=(200 * MiB,),
                pinned_unconfirmed=True)
    for frac, probed in ((0.0, True), (0.15, False), (0.05, True)):
        params = badis.BadisParams(
            time_slice=4.0, shrink_swapin_window=3.0, pinned_probe=False,
            calibration_probe=True, pinned_probe_step_kb=4 * MiB,
            calibration_probe_min_fraction=frac,
            shrink_slow_start_kb=0)   # the balloon still at the booking
        st = badis.BadisState(**base)
        o = badis.Observation(
            timestamp=7.0, m_cur_kb=BOOKED, booked_kb=BOOKED,
            sampled=est.TechniqueEstimate(108 * MiB, est.SOURCE_VMWARE),
            steady=True)
        st, r = badis.step(st, o, params)
        assert (r.probe_kb is not None) == probed, frac


def test_a_probe_at_the_allocation_of_the_read_backs_releases_the_floor():
    # the first probe of a run read back at 230 MiB: a floor raised to
    # 253, stepped down to 224; the next probe lived at 230 for its whole
    # window without a swap-in: the read-back was not the guest's need
    params = floors.FloorParams(step_kb=4 * MiB)
    floor, _ = floors.hindsight(floors.Floor(), 253 * MiB, BOOKED, params,
                                read_at_kb=230 * MiB)
    assert floor.read_at_kb == 230 * MiB
    stepped = floors.Floor(kb=224 * MiB, evidenced=True,
                           read_at_kb=230 * MiB)
    released, ev = floors.disproved(stepped, 230 * MiB, 3.0)
    assert released.kb == 0 and 'where the read-backs' in ev
    # held above where the guest read back: no evidence against it
    kept, ev = floors.disproved(stepped, 236 * MiB, 3.0)
    assert kept == stepped and ev is None
    # a floor with no read-back allocation (set otherwise): as before
    plain = floors.Floor(kb=224 * MiB)
    assert floors.disproved(plain, 230 * MiB, 3.0) == (plain, None)
    assert floors.disproved(plain, 200 * MiB, 3.0)[0].kb == 0
    # raised again by read-backs at a lower allocation: the lowest counts
    again, _ = floors.hindsight(floor, 255 * MiB, BOOKED, params,
                                read_at_kb=226 * MiB)
    assert again.read_at_kb == 226 * MiB
    lower = floors.Floor(kb=224 * MiB, evidenced=True,
                         read_at_kb=again.read_at_kb)
    assert floors.disproved(lower, 230 * MiB, 3.0) == (lower, None)


def test_a_raise_after_a_shrink_keeps_where_the_guest_read_back():
    # TCG, load-then-idle from boot (badis46): a floor set in hindsight
    # by read-backs at 238 MiB was raised the next round by a swap-in
    # after a shrink; the raise dropped the allocation of the read-backs
    # and a probe the guest lived through at 202 MiB did not release it
    params = floors.FloorParams(step_kb=4 * MiB)
    floor, _ = floors.hindsight(floors.Floor(), 256 * MiB, BOOKED, params,
                                read_at_kb=240 * MiB)
    raised, ev = floors.update(floor, bad_shrink=True, m_cur_kb=236 * MiB,
                               sample_kb=None, short=True, params=params,
                               booked_kb=BOOKED)
    assert 'swapped in at' in ev and raised.evidenced
    assert raised.read_at_kb == 236 * MiB
    stepped = dataclasses.replace(raised, kb=196 * MiB)
    assert floors.disproved(stepped, 202 * MiB, 3.0)[0].kb == 0
    # a floor no read-back set gains no allocation from a raise
    plain, _ = floors.update(floors.Floor(), bad_shrink=True,
                             m_cur_kb=236 * MiB, sample_kb=None,
                             short=True, params=params, booked_kb=BOOKED)
    assert plain.kb and plain.read_at_kb == 0


RECENT = dataclasses.replace(P, recent_only=True)


def test_recent_kb_counts_the_buckets_below_the_line():
    d = ((0, 4 * MiB), (4 * MiB, 2 * MiB), (8 * MiB, 8 * MiB))
    assert hs.recent_kb(d, 5 * MiB) == 6 * MiB   # 4-8 straddles: counted
    assert hs.recent_kb(d, 4 * MiB) == 4 * MiB
    assert hs.recent_kb(d, 0) == 0
    assert hs.recent_kb((), 100 * MiB) == 0


def test_recent_only_ignores_read_backs_of_pages_evicted_before_the_shrink():
    # The shrink writes 20 MiB to swap; the guest then reads back 8 MiB a
    # round, all of pages that had been in swap before the shrink (their
    # distance: at least the 20 MiB written since, less what was read
    # back of those, i.e. 20 MiB here).
    old = ((20 * MiB, 8 * MiB),)

    def run(params, distances):
        ledger, verdicts = hs.Ledger(), []
        for i in range(4):
            shrunk = i == 0
            ledger, bad, ev = hs.update(
                ledger, shrunk=shrunk,
                shrunk_from_kb=256 * MiB if shrunk else None,
                m_cur_kb=200 * MiB, out_kb=20 * MiB if shrunk else 0,
                in_kb=0 if shrunk else 8 * MiB, params=params,
                in_distances=None if shrunk else distances)
            verdicts.append(bad)
        return ledger, verdicts

    ledger, v = run(P, old)                 # every swap-in counts
    assert ledger.bad and v[1] == 208 * MiB
    ledger, v = run(RECENT, old)
    assert not ledger.bad and not any(v) and ledger.in_kb == 0
    # the same reads at short distances: pages the shrink evicted
    ledger, v = run(RECENT, ((MiB, 8 * MiB),))
    assert ledger.bad and v[1] == 208 * MiB
    # no distances (the balloon statistics): every swap-in counts
    ledger, v = run(RECENT, None)
    assert ledger.bad


def test_the_line_moves_down_as_recent_pages_come_back():
    # 16 MiB evicted by the shrink; 8 MiB of them read back in round 1
    # (distances 0-8 MiB), so 8 MiB of them are still in swap: round 2's
    # swap-ins at distances from 8 MiB on are older pages.
    ledger = hs.Ledger()
    for i, (out, read, dist) in enumerate((
            (16 * MiB, 0, None),
            (0, 8 * MiB, ((0, 4 * MiB), (4 * MiB, 4 * MiB))),
            (0, 6 * MiB, ((4 * MiB, 2 * MiB), (8 * MiB, 4 * MiB))))):
        ledger, _, _ = hs.update(
            ledger, shrunk=i == 0, shrunk_from_kb=256 * MiB if i == 0
            else None, m_cur_kb=200 * MiB, out_kb=out, in_kb=read,
            params=RECENT, in_distances=dist)
    assert ledger.in_kb == 10 * MiB and ledger.out_kb == 16 * MiB


def test_the_rounds_observation_carries_the_distances():
    from memmut.agent.wss import observation
    from memmut.agent.wss import swap_monitors
    reading = swap_monitors.SwapReading(
        True, None, 'memstore', out_kb=MiB, in_kb=2 * MiB,
        in_distances=((0, 2 * MiB),))
    obs = observation.observe(
        0.0, BOOKED, observation.BalloonSizes(200 * MiB, 200 * MiB),
        None, reading, True, True)
    assert obs.swapin_distances == ((0, 2 * MiB),)
    assert obs.swapin_kb == 2 * MiB


def test_the_option_reaches_the_ledger():
    assert not badis.BadisParams().hindsight_params.recent_only
    assert badis.BadisParams(
        hindsight_recent_only=True).hindsight_params.recent_only
