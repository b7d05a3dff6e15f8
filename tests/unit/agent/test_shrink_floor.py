"""The bad-shrink floor (shrink_floor.py) and Badis with it, on simulated
rounds of a guest whose sample under-reads what it needs (issue 13)."""

import dataclasses

import pytest

from memmut.agent.wss import badis
from memmut.agent.wss import shrink_floor as floors
from memmut.agent.wss import techniques as est
from memmut.agent.wss.badis import Mode

MiB = 1024
BOOKED = 256 * MiB
# the benchmark guests' balloon sizing (tests/harness/badis_run.py)
TARGET = badis.TargetParams(headroom_kb=16 * MiB, headroom_fraction=0.05,
                            floor_kb=96 * MiB, min_change_kb=4 * MiB,
                            max_step_fraction=0.125, max_grow_fraction=0.5)


def simulate(need, under, floor, rounds=40, stall=10 * MiB, in_use=False,
             **kw):
    """Rounds of 1 s of a guest that needs ``need(i)`` KiB and whose
    corrected sample reads ``under`` KiB less (``stall`` less again in a
    round it swaps: it touches fewer pages while it waits). It swaps in
    every round its allocation is below its need; ``in_use``: it reports
    what it holds of its need in use. Returns per round
    (balloon, swapped, mode, events)."""
    # the floor without a VM's own time slice, which holds a shortage's
    # peak across the next recurrence and so ends these cycles too
    params = badis.BadisParams(average_window=3, time_slice=4.0,
                               shrink_swapin_window=3.0,
                               shrink_floor=floor,
                               **dict(dict(time_slice_max_slices=0), **kw))
    bal = prev = BOOKED
    st, out = None, []
    for i in range(rounds):
        short = bal < need(i)
        sample = max(0, need(i) - (under(i) if callable(under) else under)
                     - (stall if short else 0))
        o = badis.Observation(
            timestamp=float(i), m_cur_kb=bal, booked_kb=BOOKED,
            sampled=est.TechniqueEstimate(sample, est.SOURCE_VMWARE),
            swapping=short, steady=bal == prev, shrunk=bal < prev,
            shrunk_from_kb=prev if bal < prev else None, full=short,
            in_use_kb=min(need(i), bal) if in_use else None)
        st, r = badis.step(st, o, params)
        out.append((bal, short, r.mode, r.events))
        prev = bal
        t = badis.balloon_target(r.demand_kb, bal, BOOKED, TARGET)
        if t:
            bal = t[0]
    return out


def swapped(out, start=0):
    return sum(1 for _, short, _, _ in out[start:] if short)


def test_sawtooth_of_an_under_read_base_stops_after_one_shrink():
    # load_idle after loading: 116 MiB needed, sampled 25 MiB low (the
    # guest's base, touched less often than once a round). Without the
    # floor the balloon goes back to the size that swapped every 8 rounds.
    def need(i):
        return 116 * MiB
    without = simulate(need, 25 * MiB, floor=False)
    with_ = simulate(need, 25 * MiB, floor=True, shrink_floor_step_kb=0)
    assert swapped(without, 10) >= 6
    assert swapped(with_) <= 2 and swapped(with_, 10) == 0
    assert all(bal >= 116 * MiB for bal, _, _, _ in with_[10:])
    assert any('shrink floor set at' in e for _, _, _, ev in with_
               for e in ev)
    # with its steps (the default) a right floor is tested now and then,
    # each test later than the last: 2-round episodes of swap-ins
    stepped = simulate(need, 25 * MiB, floor=True, rounds=80,
                       shrink_floor_step_kb=4 * MiB)
    starts = [i for i, (_, short, _, _) in enumerate(stepped)
              if short and i >= 10 and not stepped[i - 1][1]]
    assert 1 <= len(starts) <= 3
    assert all(b - a > a - p for p, a, b in zip([6] + starts, starts,
                                                starts[1:]))
    assert swapped(stepped, 10) <= 2 * len(starts)


def test_swap_ins_while_the_balloon_shrinks_every_round_are_a_shortage():
    # A skewed pattern whose one-round sample reads 80 of 200 MiB: the
    # balloon shrinks every round, so it is never steady. Before the fix
    # (session 8) every swap-in was excused as reclaim noise and the
    # balloon went down to the floor (96 MiB) swapping in 10 of 16
    # rounds; a second swapping round is now a shortage, floor or not.
    def need(i):
        return 200 * MiB
    # (no slow start: it would reach 200 MiB only after these rounds)
    without = simulate(need, 120 * MiB, floor=False, rounds=16,
                       shrink_slow_start_kb=0)
    with_ = simulate(need, 120 * MiB, floor=True, rounds=16,
                     shrink_slow_start_kb=0)
    for out in (without, with_):
        assert any(mode is Mode.VG for _, _, mode, _ in out[:4])
        # one round of shrinking while swapping, then no lower
        assert min(bal for bal, _, _, _ in out[:10]) >= 160 * MiB
    assert swapped(without[:10]) <= 4
    # without the floor, the same under-read sample shrinks it again
    # once the swapping stops; the floor keeps it from the size that
    # swapped (160 MiB) and climbs once more after
    assert swapped(without) > swapped(with_)
    assert min(bal for bal, _, _, _ in with_) >= 160 * MiB
    assert swapped(with_) <= 6


def test_a_fall_of_the_working_set_releases_the_floor():
    def need(i):
        return 116 * MiB if i < 20 else 60 * MiB
    out = simulate(need, 25 * MiB, floor=True)
    events = [e for _, _, _, ev in out for e in ev]
    assert any('released' in e for e in events)
    # down to the balloon's floor (to within a move too small to make)
    assert out[-1][0] <= TARGET.floor_kb + TARGET.min_change_kb


def test_on_by_default_and_switched_off_changes_nothing():
    def need(i):
        return 116 * MiB
    assert badis.BadisParams().shrink_floor is True
    # its steps and steady shortages since stop 37 (badis25)
    assert badis.BadisParams().shrink_floor_steady is True
    assert badis.BadisParams().shrink_floor_step_kb == 16 * MiB
    a = simulate(need, 25 * MiB, floor=False)
    assert not any('shrink floor' in e for _, _, _, ev in a for e in ev)


# -- update() on its own --

def test_set_then_raised_while_the_shortage_lasts_then_closed():
    f, ev = floors.update(floors.Floor(), bad_shrink=True, m_cur_kb=100,
                          sample_kb=70, short=True)
    assert (f.kb, f.ref_kb, f.open) == (100, 70, True) and 'set at' in ev
    f, ev = floors.update(f, bad_shrink=False, m_cur_kb=120, sample_kb=60,
                          short=True)
    assert f.kb == 120 and 'still swapping' in ev
    f, ev = floors.update(f, bad_shrink=False, m_cur_kb=140, sample_kb=75,
                          short=False)
    assert f.kb == 120 and ev is None
    assert f.ref_kb == 70                  # the reference stays
    assert floors.apply(f, 90, 256) == 120
    assert floors.apply(f, 130, 256) == 130
    assert floors.apply(f, 90, 110) == 110  # never above the booking


@pytest.mark.parametrize('sample,released', [(59, True), (60, False),
                                             (100, False), (None, False)])
def test_released_only_by_a_fall_of_the_given_fraction(sample, released):
    f = floors.Floor(kb=120, ref_kb=70, quiet_rounds=3)
    params = floors.FloorParams(fall=0.15)
    g, ev = floors.update(f, bad_shrink=False, m_cur_kb=136,
                          sample_kb=sample, short=False, params=params)
    assert (g.kb == 0) is released
    assert (ev is not None) is released


def test_a_swapping_round_after_the_shortage_does_not_raise_it():
    f = floors.Floor(kb=120, ref_kb=70, quiet_rounds=3)
    g, ev = floors.update(f, bad_shrink=False, m_cur_kb=200, sample_kb=50,
                          short=True)
    assert g.kb == 120 and g.quiet_rounds == 0 and ev is None


def test_lapses_after_quiet_rounds_and_the_count_restarts_on_swapping():
    params = floors.FloorParams(expire_rounds=3)
    f = floors.Floor(kb=120, ref_kb=70)
    f, _ = floors.update(f, bad_shrink=False, m_cur_kb=136, sample_kb=70,
                         short=False, params=params)
    f, _ = floors.update(f, bad_shrink=False, m_cur_kb=136, sample_kb=70,
                         short=True, params=params)
    for _ in range(2):
        f, ev = floors.update(f, bad_shrink=False, m_cur_kb=136,
                              sample_kb=70, short=False, params=params)
        assert f.kb == 120 and ev is None
    f, ev = floors.update(f, bad_shrink=False, m_cur_kb=136, sample_kb=70,
                          short=False, params=params)
    assert f.kb == 0 and 'lapsed' in ev


def test_without_a_sample_at_the_shrink_the_first_quiet_one_is_the_ref():
    f, _ = floors.update(floors.Floor(), bad_shrink=True, m_cur_kb=100,
                         sample_kb=None, short=True)
    assert f.ref_kb is None
    f, _ = floors.update(f, bad_shrink=False, m_cur_kb=116, sample_kb=80,
                         short=False)
    assert f.ref_kb == 80 and f.kb == 100


def test_params_are_checked():
    with pytest.raises(ValueError):
        floors.FloorParams(fall=0)
    with pytest.raises(ValueError):
        floors.FloorParams(expire_rounds=-1)
    with pytest.raises(ValueError):
        badis.BadisParams(shrink_floor_fall=1.5)


def test_a_swapping_round_with_free_memory_does_not_raise_it():
    # the balloon grew and the guest reads back what it evicted before:
    # not a sign that the new allocation is too small
    f = floors.Floor(kb=120, ref_kb=70, open=True)
    g, ev = floors.update(f, bad_shrink=False, m_cur_kb=200, sample_kb=50,
                          short=True, full=False)
    assert g.kb == 120 and ev is None


def test_a_bad_shrink_counted_after_the_balloon_grew_floors_the_old_size():
    # Round 1 swaps at 149 MiB after shrinks (a shortage: Badis grows the
    # balloon to 228 MiB); the guard counts the bad shrink in round 2, at
    # 228 MiB. The floor is the allocation the guest swapped at, 149 MiB,
    # not the one it was given after (measured: a floor at 228 MiB held a
    # hot set's balloon near its booking for the rest of the run).
    params = badis.BadisParams(average_window=3, time_slice=4.0,
                               shrink_swapin_window=3.0, shrink_floor=True,
                               shrink_noise_filter=False)
    st = badis.BadisState(mode=Mode.V, shrink_at=0.0,
                          shrink_from_kb=160 * MiB, last_m_cur_kb=160 * MiB)
    o = badis.Observation(
        timestamp=1.0, m_cur_kb=228 * MiB, booked_kb=BOOKED,
        sampled=est.TechniqueEstimate(95 * MiB, est.SOURCE_VMWARE),
        swapping=True, steady=False, grew_from_kb=149 * MiB, full=True)
    st, r = badis.step(st, o, params)
    assert r.bad_shrinks == 1
    assert st.floor.kb == 149 * MiB
    assert r.demand_kb >= 149 * MiB


@pytest.mark.parametrize('used,released',
                         [(102, True), (103, False), (None, False)])
def test_released_when_the_guest_leaves_the_fraction_of_it_free(used,
                                                                released):
    # 120 at fall 0.15: released at 102 used or less, whatever the sample
    f = floors.Floor(kb=120, ref_kb=70, quiet_rounds=3)
    g, ev = floors.update(f, bad_shrink=False, m_cur_kb=136, sample_kb=70,
                          short=False, used_kb=used,
                          params=floors.FloorParams(fall=0.15))
    assert (g.kb == 0) is released
    assert released is (ev is not None and 'the guest used' in ev)


def test_a_swapping_round_is_not_released_by_free_memory():
    # it reads back what it evicted: the free memory says nothing yet
    f = floors.Floor(kb=120, ref_kb=70, quiet_rounds=3, open=True)
    g, _ = floors.update(f, bad_shrink=False, m_cur_kb=136, sample_kb=40,
                         short=True, full=False, used_kb=30)
    assert g.kb == 120


def test_a_floor_set_as_the_working_set_falls_is_released_by_free_memory():
    # The mutualization functional test on CI (stop 33): the balloon was
    # cut to 254 MiB as the guest's 280 MiB program was ending; it swapped
    # in at 254 MiB with no sample that round, so the first quiet round's
    # sample, already the small set after the fall, became the reference
    # and no later sample fell below it. The guest then used 60 MiB.
    f, _ = floors.update(floors.Floor(), bad_shrink=True, m_cur_kb=254 * MiB,
                         sample_kb=None, short=True)
    f, _ = floors.update(f, bad_shrink=False, m_cur_kb=280 * MiB,
                         sample_kb=40 * MiB, short=False)
    for _ in range(5):           # samples never fall 15 % below 40 MiB
        g, ev = floors.update(f, bad_shrink=False, m_cur_kb=280 * MiB,
                              sample_kb=38 * MiB, short=False)
        assert g.kb == 254 * MiB and ev is None
        f = g
    g, ev = floors.update(f, bad_shrink=False, m_cur_kb=280 * MiB,
                          sample_kb=38 * MiB, short=False,
                          used_kb=60 * MiB)
    assert g.kb == 0 and 'released' in ev


def test_badis_passes_the_guest_s_used_memory_to_the_floor():
    params = badis.BadisParams(average_window=3, time_slice=4.0,
                               shrink_swapin_window=3.0, shrink_floor=True)
    st = badis.BadisState(mode=Mode.V, last_m_cur_kb=200 * MiB,
                          floor=floors.Floor(kb=180 * MiB,
                                             ref_kb=40 * MiB))
    o = badis.Observation(
        timestamp=1.0, m_cur_kb=200 * MiB, booked_kb=BOOKED,
        sampled=est.TechniqueEstimate(38 * MiB, est.SOURCE_VMWARE),
        full=False, used_kb=70 * MiB)
    st2, r = badis.step(st, o, params)
    assert st2.floor.kb == 0
    assert any('released' in e for e in r.events)
    # the floor's last change is kept with when, to be shown per VM
    assert 'released: the guest used' in st2.floor_note
    assert st2.floor_at == 1.0
    st3, r = badis.step(st, dataclasses.replace(o, used_kb=None), params)
    assert st3.floor.kb == 180 * MiB and r.demand_kb >= 180 * MiB
    assert (st3.floor_note, st3.floor_at) == ('', None)


def _under_read(st, i):
    """Round ``i`` of load_idle after loading (badis21): a balloon of 134
    MiB, a sample of 95 MiB for a need of 116."""
    return badis.Observation(
        timestamp=float(i), m_cur_kb=134 * MiB, booked_kb=BOOKED,
        sampled=est.TechniqueEstimate(95 * MiB - st.pinned_kb,
                                      est.SOURCE_VMWARE),
        full=True)


def test_the_floor_is_a_lower_bound_of_the_estimate_and_the_max_average():
    # load_idle after loading on TCG (badis21): the sample read 95 MiB of
    # a 116 MiB need all run long, the floor held the balloon, and the
    # estimate stayed 21 MiB low (8 % of booked counted against Badis,
    # and the controller packed the VM below its balloon)
    params = badis.BadisParams(average_window=3, time_slice=4.0,
                               shrink_swapin_window=3.0,
                               shrink_floor_estimate=True,
                               shrink_floor_step_kb=0)   # no step down
    st = badis.BadisState(mode=Mode.V, floor=floors.Floor(
        kb=110 * MiB, ref_kb=95 * MiB, quiet_rounds=1))
    for i in range(5):
        o = _under_read(st, i)
        st, r = badis.step(st, o, params)
    assert r.wss.wss_kb == 110 * MiB
    assert r.wss.source == badis.SOURCE_SHRINK_FLOOR
    assert r.max_avg_kb == 110 * MiB and r.demand_kb == 110 * MiB
    off = dataclasses.replace(params, shrink_floor=False)
    _, r = badis.step(st, o, off)
    assert r.wss.wss_kb == 95 * MiB
    # the default: the floor holds the demand only
    demand_only = dataclasses.replace(params, shrink_floor_estimate=False)
    assert badis.BadisParams().shrink_floor_estimate is False
    _, r = badis.step(st, o, demand_only)
    assert r.wss.wss_kb == 95 * MiB and r.demand_kb == 110 * MiB


def _quiet_rounds(f, n, params, demand=0):
    """``n`` quiet rounds, the floor applied to ``demand`` each round."""
    events = []
    for _ in range(n):
        f, ev = floors.update(f, bad_shrink=False, m_cur_kb=136,
                              sample_kb=70, short=False, params=params)
        _, f = floors.holding(f, demand, 256)
        events.append(ev)
    return f, events


def test_only_rounds_in_which_it_holds_the_demand_count_for_a_step():
    # TCG, hotset (stop 37): a floor stepped down to nothing while a
    # shortage held the balloon at the booking, each step untested
    params = floors.FloorParams(expire_rounds=0, step_kb=4, step_rounds=2)
    f = floors.Floor(kb=120, ref_kb=70)
    f, events = _quiet_rounds(f, 6, params, demand=200)
    assert f.kb == 120 and not any(events) and not f.held
    f, events = _quiet_rounds(f, 3, params, demand=100)
    assert f.kb == 116 and f.held


def test_steps_down_each_twice_the_last():
    params = floors.FloorParams(expire_rounds=0, step_kb=4, step_rounds=2)
    f = floors.Floor(kb=120, ref_kb=70, held=True)
    seen = []
    for _ in range(4):
        f, events = _quiet_rounds(f, 2, params)
        assert events[0] is None and 'lowered' in events[1]
        seen.append(f.kb)
    assert seen == [116, 108, 92, 60]
    f, events = _quiet_rounds(f, 2, params)   # a 64 step: nothing left
    assert f.kb == 0 and 'stepped down to nothing' in events[1]


def test_a_step_that_swapped_is_taken_back_and_the_next_waits_longer():
    params = floors.FloorParams(expire_rounds=0, step_kb=4, step_rounds=2)
    f, _ = _quiet_rounds(floors.Floor(kb=120, ref_kb=70, held=True), 4,
                         params)
    assert f.kb == 108
    # the shrink to 108 MiB swapped: back to where it swapped, one step
    # again, after twice the rounds
    f, ev = floors.update(f, bad_shrink=True, m_cur_kb=112, sample_kb=70,
                          short=True, params=params)
    assert f.kb == 112 and f.wait == 2 and f.step_kb == 0
    _, f = floors.holding(f, 0, 256)
    f, events = _quiet_rounds(f, 4, params)
    assert events[:3] == [None] * 3 and f.kb == 108
    # a bad shrink not after a step (a new shortage) keeps the pace
    g, _ = floors.update(floors.Floor(kb=120, ref_kb=70, wait=2),
                         bad_shrink=True, m_cur_kb=100, sample_kb=70,
                         short=True, params=params)
    assert g.wait == 2


@pytest.mark.parametrize('step_back, kb, step_kb', [
    (True, 116, 0),        # taken back, the steps restart small
    (False, 108, 8),       # before: the next step doubles to 16
])
def test_swap_ins_with_memory_free_after_a_step_take_it_back(
        step_back, kb, step_kb):
    # TCG, hotset (badis30): the balloon grew again and the guest, with
    # memory free, read back the pages evicted at the step
    params = floors.FloorParams(expire_rounds=0, step_kb=4, step_rounds=2,
                                step_back=step_back)
    f, _ = _quiet_rounds(floors.Floor(kb=120, ref_kb=70, held=True), 4,
                         params)
    assert f.kb == 108 and f.step_kb == 8 and f.held
    f, ev = floors.update(f, bad_shrink=False, m_cur_kb=150, sample_kb=70,
                          short=True, full=False, params=params,
                          booked_kb=256)
    assert (f.kb, f.step_kb) == (kb, step_kb)
    assert f.wait == (2 if step_back else 1)
    assert ('back to' in (ev or '')) is step_back


def test_a_step_that_held_nothing_is_not_taken_back():
    params = floors.FloorParams(expire_rounds=0, step_kb=4, step_rounds=2,
                                step_back=True)
    f, _ = _quiet_rounds(floors.Floor(kb=120, ref_kb=70, held=True), 2,
                         params)
    f = dataclasses.replace(f, held=False)   # the estimate was above it
    g, ev = floors.update(f, bad_shrink=False, m_cur_kb=150, sample_kb=70,
                          short=True, full=False, params=params)
    assert g.kb == f.kb and ev is None


def test_badis_passes_step_back_to_the_floor():
    assert not badis.BadisParams().floor_params.step_back
    assert badis.BadisParams(
        shrink_floor_step_back=True).floor_params.step_back


def test_step_params_are_checked():
    with pytest.raises(ValueError):
        floors.FloorParams(step_kb=-1)
    with pytest.raises(ValueError):
        badis.BadisParams(shrink_floor_step_rounds=0)


def test_a_floor_set_while_the_guest_loads_steps_down_to_its_need():
    # TCG, load_idle from boot (stop 37): the balloon shrank while the
    # guest still loaded its data; the floor set from those swap-ins held
    # the balloon 90 MiB above the 116 MiB need until its lapse
    def need(i):                        # loads 30 MiB a round, then idles
        return (60 + 30 * i) * MiB if i < 6 else 116 * MiB
    # (no_shrink_below_estimate and the slow start off: with either the
    # balloon does not shrink into the loading and no such floor is set)
    kw = dict(rounds=60, under=0, stall=0, shrink_floor_rounds=60,
              no_shrink_below_estimate=False, shrink_slow_start_kb=0)
    held = simulate(need, floor=True, shrink_floor_step_kb=0, **kw)
    stepped = simulate(need, floor=True, shrink_floor_step_kb=4 * MiB,
                       shrink_floor_step_rounds=4, **kw)
    assert any('shrink floor set' in ' '.join(e) for *_, e in held)
    assert held[-1][0] >= 150 * MiB           # still held
    assert stepped[-1][0] <= 134 * MiB        # 116 MiB + its headroom
    assert any('shrink floor lowered' in ' '.join(e) for *_, e in stepped)
    assert swapped(stepped, 6) == swapped(held, 6) == 0
    # the defaults (no_shrink_below_estimate on): at the need + headroom
    default = simulate(need, floor=True, rounds=60, under=0, stall=0)
    assert default[-1][0] <= 134 * MiB and swapped(default, 6) == 0


def test_swap_ins_at_a_steady_allocation_raise_it_too():
    # TCG, hotset from a loaded start (stop 37): the hot set moved every
    # 4 s and the guest swapped at allocations the shrinks had reached
    # more than the guard's 3 s before; the floor stayed at the first bad
    # shrink's allocation and the same shortage came back every cycle
    def need(i):                       # the rest of the data every 8 s
        return 200 * MiB if i % 8 == 0 else 80 * MiB

    def under(i):                      # sampled: the hot part only
        return need(i) - 90 * MiB
    # the floor goes to each shortage only (no raises above it: those
    # are test_a_shortage_at_a_held_floor_raises_*'s)
    kw = dict(rounds=80, stall=0, shrink_floor_raise_kb=0)
    main = simulate(need, under, floor=True, shrink_floor_steady=False,
                    shrink_floor_step_kb=0, **kw)
    steady = simulate(need, under, floor=True, shrink_floor_step_kb=0,
                      **kw)
    raised = [e for *_, e in steady if 'held since a shrink' in ' '.join(e)]
    assert len(raised) >= 4
    assert not any('held since' in ' '.join(e) for *_, e in main)
    assert swapped(steady) < swapped(main)
    assert steady[-1][0] >= 186 * MiB > main[-1][0]


def test_a_steady_shortage_sets_a_floor_like_a_bad_shrink():
    f, ev = floors.update(floors.Floor(), bad_shrink=False, shortage=True,
                          m_cur_kb=150, sample_kb=90, short=True)
    assert f.kb == 150 and f.open and 'held since a shrink' in ev


def test_a_shortage_at_a_held_floor_raises_it_twice_as_far_each_time():
    params = floors.FloorParams(expire_rounds=0, raise_kb=8)
    f = floors.Floor(kb=120, ref_kb=70, quiet_rounds=3, held=True)
    extras = []
    for _ in range(3):
        m_cur = f.kb + 16                       # floor + the headroom
        f, ev = floors.update(f, bad_shrink=False, shortage=True,
                              m_cur_kb=m_cur, sample_kb=70, short=True,
                              params=params, booked_kb=256)
        extras.append(f.kb - m_cur)
        assert 'where the floor held it' in ev
        f = dataclasses.replace(f, open=False, held=True)
    assert extras == [8, 16, 32]
    # never above the booking
    f, _ = floors.update(f, bad_shrink=True, m_cur_kb=f.kb + 16,
                         sample_kb=70, short=True, params=params,
                         booked_kb=256)
    assert f.kb == 256


@pytest.mark.parametrize('floor', [
    floors.Floor(),                                      # a new floor
    floors.Floor(kb=120, ref_kb=70, held=False),         # it held nothing
    floors.Floor(kb=120, ref_kb=70, held=True, open=True),  # same shortage
    floors.Floor(kb=120, ref_kb=70, held=True, step_kb=4),  # a step swapped
])
def test_a_floor_is_raised_only_to_the_shortage_unless_it_held_it(floor):
    params = floors.FloorParams(expire_rounds=0, raise_kb=8)
    f, ev = floors.update(floor, bad_shrink=True, m_cur_kb=136,
                          sample_kb=70, short=True, params=params,
                          booked_kb=256)
    assert f.kb == 136 and 'where the floor held' not in ev
    assert f.raise_kb == 0
    # and off by default
    g, _ = floors.update(dataclasses.replace(floor, open=False, held=True,
                                             step_kb=0),
                         bad_shrink=True, m_cur_kb=136, sample_kb=70,
                         short=True, booked_kb=256)
    assert g.kb == 136


def test_raise_params_are_checked():
    with pytest.raises(ValueError):
        floors.FloorParams(raise_kb=-1)
    with pytest.raises(ValueError):
        badis.BadisParams(shrink_floor_raise_kb=-1)


def test_raises_bring_a_hot_set_s_floor_up_in_fewer_shortages():
    # TCG, hotset from a loaded start (stop 37): the sample reads 96 of
    # the 236 MiB a moving hot set needs; the floor came up one headroom
    # (16 MiB) per 15 s cycle, 6-7 shortages before it held the guest
    def need(i):                       # the rest of the data every 10 s
        return 236 * MiB if i % 10 == 0 else 120 * MiB

    def under(i):
        return need(i) - 96 * MiB
    kw = dict(rounds=150, stall=0, shrink_floor_step_kb=0)
    plain = simulate(need, under, floor=True, shrink_floor_raise_kb=0,
                     **kw)
    raised = simulate(need, under, floor=True,
                      shrink_floor_raise_kb=16 * MiB, **kw)
    assert any('where the floor held' in ' '.join(e) for *_, e in raised)
    assert not any('where the floor held' in ' '.join(e)
                   for *_, e in plain)
    assert swapped(raised) < swapped(plain)


def test_a_raised_floor_is_not_released_by_the_memory_the_raise_freed():
    # TCG, hotset (stop 38): raised 16 MiB above where the guest swapped
    # (134 MiB), the floor was released two rounds later by the guest's
    # free memory: the balloon the raise had grown, not yet swapped back
    params = floors.FloorParams(expire_rounds=0, raise_kb=16)
    f = floors.Floor(kb=118, ref_kb=100, quiet_rounds=3, held=True)
    f, _ = floors.update(f, bad_shrink=True, m_cur_kb=134, sample_kb=101,
                         short=True, params=params, booked_kb=256)
    assert f.kb == 150 and f.swapped_kb == 134
    f, ev = floors.update(f, bad_shrink=False, m_cur_kb=166, sample_kb=100,
                          short=False, used_kb=127, params=params)
    assert f.kb == 150 and ev is None
    # what the guest swapped at is still the test
    f, ev = floors.update(f, bad_shrink=False, m_cur_kb=166, sample_kb=100,
                          short=False, used_kb=110, params=params)
    assert f.kb == 0 and 'released: the guest used' in ev


def _raised(params, kb, ref_kb, m_cur_kb):
    """A floor that held the balloon, after a bad shrink to ``m_cur_kb``
    (the sample at its reference)."""
    f = floors.Floor(kb=kb, ref_kb=ref_kb, quiet_rounds=3, held=True)
    f, _ = floors.update(f, bad_shrink=True, m_cur_kb=m_cur_kb,
                         sample_kb=ref_kb, short=True, params=params,
                         booked_kb=256)
    return f


def test_a_raised_floor_stepped_down_keeps_where_the_guest_swapped():
    # TCG, hotset (stop 40): raised 64 MiB above where the guest swapped
    # (135 MiB), stepped down once to 192 MiB, then released by a guest
    # that used 162 MiB, its pages swapped out at 135 MiB still out
    params = floors.FloorParams(expire_rounds=0, raise_kb=64, step_kb=8,
                                step_rounds=1)
    f = _raised(params, 118, 93, 135)
    assert f.kb == 199 and f.swapped_kb == 135
    f = dataclasses.replace(f, held=True, open=False)
    f, ev = floors.update(f, bad_shrink=False, m_cur_kb=256, sample_kb=93,
                          short=False, params=params)
    assert f.kb == 191 and f.swapped_kb == 135 and 'lowered' in ev
    f, ev = floors.update(f, bad_shrink=False, m_cur_kb=232, sample_kb=93,
                          short=False, used_kb=162, params=params)
    assert f.kb == 175 and f.swapped_kb == 135 and 'released' not in ev
    # a step below where it swapped makes the floor itself the test
    f = floors.Floor(kb=140, ref_kb=93, held=True, swapped_kb=135,
                     since_step=1, step_kb=0)
    f, _ = floors.update(f, bad_shrink=False, m_cur_kb=150, sample_kb=93,
                         short=False, params=params)
    assert f.kb == 132 and f.swapped_kb == 132


def test_a_raise_keeps_the_lower_reference_sample():
    # TCG, hotset (stop 38): the sample of the round that swapped in at
    # 235 MiB read 138 MiB, the next quiet one 95 MiB: a "fall" that
    # released the floor the raise had just brought to the need
    params = floors.FloorParams(expire_rounds=0, raise_kb=16)
    f = floors.Floor(kb=200, ref_kb=99, quiet_rounds=3, held=True)
    f, _ = floors.update(f, bad_shrink=False, shortage=True, m_cur_kb=216,
                         sample_kb=138, short=True, params=params,
                         booked_kb=256)
    assert f.kb == 232 and f.ref_kb == 99
    f, ev = floors.update(f, bad_shrink=False, m_cur_kb=248, sample_kb=96,
                          short=False, params=params)
    assert f.kb == 232 and ev is None


@pytest.mark.parametrize('low', [False, True])
def test_low_reference_keeps_the_lower_sample_on_any_shortage(low):
    # TCG, hotset from a loaded start (stop 39): a confirmed floor of 181
    # MiB released by "sampled 91 MiB fell from 109" -- the 109 MiB a
    # shortage round's sample, which counts what the guest swapped back
    params = floors.FloorParams(expire_rounds=0, low_reference=low)
    f = floors.Floor(kb=181, ref_kb=95, quiet_rounds=3, held=True)
    f, _ = floors.update(f, bad_shrink=False, shortage=True, m_cur_kb=170,
                         sample_kb=109, short=True, params=params,
                         booked_kb=256)
    assert f.kb == 181 and f.ref_kb == (95 if low else 109)
    f, ev = floors.update(f, bad_shrink=False, m_cur_kb=181, sample_kb=91,
                          short=False, params=params)
    if low:
        assert f.kb == 181 and ev is None
    else:
        assert f.kb == 0 and 'fell from 109' in ev
    # a working set that did fall still releases it
    f, ev = floors.update(floors.Floor(kb=181, ref_kb=95, quiet_rounds=3),
                          bad_shrink=False, m_cur_kb=181, sample_kb=80,
                          short=False, params=params)
    assert f.kb == 0 and 'fell from 95' in ev


def test_badis_passes_low_reference_to_the_floor():
    assert not badis.BadisParams().floor_params.low_reference
    assert badis.BadisParams(
        shrink_floor_low_reference=True).floor_params.low_reference


def test_the_raises_keep_doubling_across_steps_down():
    # TCG, hotset (stop 38): steps every 2 s between shortages every 15 s
    # restarted the raises, each stayed at its first 16 MiB
    params = floors.FloorParams(expire_rounds=0, step_kb=4, step_rounds=2,
                                raise_kb=8)
    f = _raised(params, 120, 70, 136)
    assert f.kb == 144
    f, _ = _quiet_rounds(floors.Floor(**dict(
        dataclasses.asdict(f), open=False, held=True)), 2, params)
    assert f.kb == 140 and f.step_kb == 4
    # the step swapped: back to where it swapped, no raise above it
    f, _ = floors.update(f, bad_shrink=True, m_cur_kb=156, sample_kb=70,
                         short=True, params=params, booked_kb=256)
    assert f.kb == 156
    f = dataclasses.replace(f, open=False, held=True)
    f, _ = floors.update(f, bad_shrink=False, shortage=True, m_cur_kb=172,
                         sample_kb=70, short=True, params=params,
                         booked_kb=256)
    assert f.kb == 172 + 16                    # the second raise


@pytest.mark.parametrize('floor,confirmed', [
    (floors.Floor(), False),                                # a new floor
    (floors.Floor(kb=120, ref_kb=70, held=False), False),   # held nothing
    (floors.Floor(kb=120, ref_kb=70, held=True, open=True), False),
    (floors.Floor(kb=120, ref_kb=70, held=True), True),     # it held
    (floors.Floor(kb=116, ref_kb=70, held=True, step_kb=4), True),  # a step
])
def test_a_shortage_confirms_a_floor_only_while_it_held_the_demand(
        floor, confirmed):
    f, _ = floors.update(floor, bad_shrink=True, m_cur_kb=136,
                         sample_kb=70, short=True)
    assert f.confirmed is confirmed
    # a confirmation lasts through quiet rounds and steps down
    params = floors.FloorParams(expire_rounds=0, step_kb=4, step_rounds=1)
    _, f = floors.holding(f, 0, 256)
    f, events = _quiet_rounds(f, 3, params)
    assert f.kb and any(events) and f.confirmed is confirmed
    # and ends with the floor
    f, _ = floors.update(f, bad_shrink=False, m_cur_kb=136, sample_kb=10,
                         short=False, params=params)
    assert f == floors.Floor()


def test_only_a_confirmed_floor_counts_in_the_estimate():
    # W1-W5 (badis26): a floor from one bad shrink, counted in the
    # estimate, outlived the sweep's step down (W2,s error 9.4 against
    # 3.4 % of booked); load_idle's under-read guest swapped again at
    # its floor before the estimate could count it
    params = badis.BadisParams(average_window=1, time_slice=4.0,
                               shrink_swapin_window=3.0,
                               shrink_floor_estimate_confirmed=True)
    assert badis.BadisParams().shrink_floor_estimate_confirmed is True

    def run(floor):
        st = badis.BadisState(mode=Mode.V, floor=floor)
        o = _under_read(st, 0)
        return badis.step(st, o, params)[1]

    r = run(floors.Floor(kb=110 * MiB, ref_kb=95 * MiB, quiet_rounds=1))
    assert r.wss.wss_kb < 110 * MiB and r.demand_kb == 110 * MiB
    r = run(floors.Floor(kb=110 * MiB, ref_kb=95 * MiB, quiet_rounds=1,
                         confirmed=True))
    assert r.wss.wss_kb == 110 * MiB
    assert r.wss.source == badis.SOURCE_SHRINK_FLOOR
    assert r.max_avg_kb == 110 * MiB


@pytest.mark.parametrize('count_raise', [True, False])
def test_a_raised_floor_counts_in_the_estimate_with_or_without_its_raise(
        count_raise):
    # TCG, W3 static (badis73_repeats): a rise at a floor that held was
    # answered by a raise of 64 MiB above where the guest swapped (186
    # MiB), and the estimate carried the floor, 246 MiB, for the 40 s
    # that followed for a working set of 204 MiB
    params = badis.BadisParams(average_window=1, time_slice=4.0,
                               shrink_swapin_window=3.0,
                               shrink_floor_step_kb=0,
                               shrink_floor_estimate_raise=count_raise)
    assert badis.BadisParams().shrink_floor_estimate_raise is False
    floor = floors.Floor(kb=174 * MiB, ref_kb=95 * MiB, quiet_rounds=1,
                         confirmed=True, raise_kb=64 * MiB,
                         swapped_kb=110 * MiB)
    assert floors.evidence_kb(floor) == 110 * MiB
    assert floors.evidence_kb(floors.Floor(kb=120 * MiB)) == 120 * MiB
    st = badis.BadisState(mode=Mode.V, floor=floor)
    _, r = badis.step(st, _under_read(st, 0), params)
    counted = 174 * MiB if count_raise else 110 * MiB
    assert r.wss.wss_kb == counted and r.max_avg_kb == counted
    assert r.wss.source == badis.SOURCE_SHRINK_FLOOR
    # the balloon's demand keeps the whole floor either way
    assert r.demand_kb == 174 * MiB


def _confirmed_floor_rounds(n, **kw):
    params = badis.BadisParams(average_window=3, time_slice=4.0,
                               shrink_swapin_window=3.0,
                               shrink_floor_step_kb=8 * MiB,
                               shrink_floor_step_rounds=2, **kw)
    st = badis.BadisState(mode=Mode.V, floor=floors.Floor(
        kb=110 * MiB, ref_kb=95 * MiB, quiet_rounds=1, confirmed=True))
    seen, held = [], []
    for i in range(n):
        o = _under_read(st, i)
        st, r = badis.step(st, o, params)
        seen.append(st.floor.kb // MiB)
        held.append(st.floor.held)
    return seen, held


def test_a_confirmed_floor_in_the_estimate_still_holds_and_steps_down():
    # the demand's average carries the floored estimates, so it reaches
    # the floor on its own: the floor lifting the estimate is what holds
    # it (else a confirmed floor would never step down or be tested)
    seen, held = _confirmed_floor_rounds(8)
    assert seen[:5] == [110, 110, 102, 102, 86] and seen[-1] == 86
    # held while above the sample (95 MiB), so its steps go on
    assert held == [kb > 95 for kb in seen]


def test_held_at_the_demand_only_the_steps_wait_for_the_max_average():
    # shrink_floor_hold_at_demand: while the max-average still carries
    # the estimates before a step, the balloon is where the demand put
    # it and a step of the floor would test nothing
    seen, held = _confirmed_floor_rounds(16, shrink_floor_hold_at_demand=True)
    assert seen == [110] * 2 + [102] * 7 + [86] * 7
    # 2-6: the max-average (110) above the stepped floor (102)
    assert held[:9] == [True, True] + [False] * 5 + [True, True]
    # under the sample (95 MiB), the floor lifts nothing: not held
    assert not any(held[9:])


def _in_use_rounds(f, n, params, in_use):
    """``n`` quiet rounds holding the demand, the guest using ``in_use``."""
    events = []
    for _ in range(n):
        f, ev = floors.update(f, bad_shrink=False, m_cur_kb=136,
                              sample_kb=70, short=False, params=params,
                              in_use_kb=in_use)
        _, f = floors.holding(f, 0, 256)
        events.append(ev)
    return f, events


def _step_swapped(params):
    """A floor at 120 whose first step down (to 116) swapped."""
    f, _ = _in_use_rounds(floors.Floor(kb=120, ref_kb=70, held=True), 2,
                          params, in_use=None)
    assert f.kb == 116 and f.step_kb == 4
    f, _ = floors.update(f, bad_shrink=True, m_cur_kb=120, sample_kb=70,
                         short=True, params=params)
    assert f.kb == 120 and f.step_swapped
    _, f = floors.holding(f, 0, 256)
    return f


@pytest.mark.parametrize('hold', [False, True])
def test_a_floor_whose_step_swapped_holds_while_the_guest_uses_it(hold):
    # TCG, load_idle (badis33): a floor at 118-121 MiB, the guest using
    # 117 MiB of it, stepped down and swapped back every 30-40 s
    params = floors.FloorParams(expire_rounds=10, step_kb=4,
                                step_rounds=2, hold_in_use=hold)
    f = _step_swapped(params)
    f, events = _in_use_rounds(f, 30, params, in_use=117)
    if hold:
        assert f.kb == 120 and f.in_use_held
        assert 'held: the guest uses 117 KiB' in events[0]
        assert events[1:] == [None] * 29    # said once
    else:
        assert f.kb != 120                  # stepped down or lapsed
    if not hold:
        return
    # the guest no longer uses it: the steps resume (at the pace the
    # swapped step doubled)
    f, events = _in_use_rounds(f, 4, params, in_use=90)
    assert f.kb == 116 and not f.in_use_held
    # a step does not forget that an earlier one swapped: the guest using
    # the stepped-down floor holds it again
    assert f.step_swapped
    f, _ = _in_use_rounds(f, 12, params, in_use=110)
    assert f.kb == 116 and f.in_use_held


def test_a_floor_no_step_of_which_swapped_steps_down_whatever_the_use():
    # a floor set while the guest loaded data it then left cold: the guest
    # uses all of it (the cold data), and only the steps find its need
    params = floors.FloorParams(expire_rounds=0, step_kb=4, step_rounds=2,
                                hold_in_use=True)
    f = floors.Floor(kb=120, ref_kb=70, held=True)
    f, events = _in_use_rounds(f, 4, params, in_use=119)
    assert f.kb == 108 and not f.in_use_held


def test_badis_passes_hold_in_use_and_the_guest_s_use_to_the_floor():
    params = badis.BadisParams(shrink_floor_hold_in_use=True)
    assert params.floor_params.hold_in_use
    assert not badis.BadisParams().floor_params.hold_in_use
    f = floors.Floor(kb=120 * MiB, ref_kb=70 * MiB, step_swapped=True,
                     held=True)
    st = dataclasses.replace(badis.BadisState.initial(params), floor=f)
    o = badis.Observation(
        timestamp=100.0, m_cur_kb=136 * MiB, booked_kb=BOOKED,
        sampled=est.TechniqueEstimate(70 * MiB, est.SOURCE_VMWARE),
        full=False, in_use_kb=117 * MiB)
    st, r = badis.step(st, o, params)
    assert st.floor.in_use_held
    assert any('held: the guest uses' in e for e in r.events)


def test_held_in_use_a_found_floor_stops_costing_a_burst_a_minute():
    # load_idle after loading, on the bench's sizing: 118 MiB needed, the
    # sample 26 MiB under it, the floor's steps as in the benchmark
    def need(i):
        return 118 * MiB
    kw = dict(rounds=240, in_use=True, shrink_floor_step_kb=4 * MiB)
    before = simulate(need, 26 * MiB, floor=True, **kw)
    held = simulate(need, 26 * MiB, floor=True,
                    shrink_floor_hold_in_use=True, **kw)
    # the first shortages find the floor alike; then only the held one
    # stops swapping
    assert swapped(held, 60) == 0 < swapped(before, 60)
    assert sum(b for b, _, _, _ in held[60:]) / 180 < 140 * MiB


def _held_floor_round(held_shortage, last_sampled=None, **obs_kw):
    """A floor of 192 MiB that held the demand meets swap-ins at 208 MiB
    (the floor + the headroom) in a round run on swap activity: no
    sample, not steady, and Geiger reading the whole booking (a rise of
    the working set, so the guard counts no bad shrink). The hot set of
    badis34 once loaded."""
    params = badis.BadisParams(
        average_window=3, time_slice=4.0, shrink_swapin_window=3.0,
        shrink_floor_held_shortage=held_shortage)
    floor = floors.Floor(kb=192 * MiB, ref_kb=81 * MiB, quiet_rounds=6,
                         held=True, since_step=2)
    state = badis.BadisState(pinned_kb=50 * MiB, floor=floor,
                             last_m_cur_kb=208 * MiB,
                             last_sampled_kb=last_sampled)
    o = dict(timestamp=100.0, m_cur_kb=208 * MiB, booked_kb=BOOKED,
             ghost=est.TechniqueEstimate(BOOKED, est.SOURCE_GEIGER),
             swapping=True, steady=False, full=True)
    o.update(obs_kw)
    st, r = badis.step(state, badis.Observation(**o), params)
    return st.floor, r


@pytest.mark.parametrize('full', [True, False])
def test_swap_ins_at_a_floor_that_held_raise_it_in_any_round(full):
    # free memory by the guest's statistics does not excuse them (badis35)
    f, r = _held_floor_round(True, full=full)
    # to where it swapped and the first raise above it (64 MiB), capped
    # at the booking
    assert f.kb == BOOKED and f.confirmed
    assert any('where the floor held it' in e for e in r.events)
    # without the option the round leaves the floor where it was
    g, r = _held_floor_round(False, full=full)
    assert g.kb == 192 * MiB
    assert not any('shrink floor' in e for e in r.events)
    assert badis.BadisParams().shrink_floor_held_shortage is False


@pytest.mark.parametrize('obs_kw', [
    dict(shrunk=True, shrunk_from_kb=224 * MiB),   # the guard's to judge
    dict(m_cur_kb=BOOKED),             # at the booking: nothing to raise
    dict(swapping=False),
    # a rise: the guest's sample (170 + the 50 MiB correction) asks for
    # more than the floor; the shortage rules grow for it (badis36, W1)
    dict(sampled=est.TechniqueEstimate(170 * MiB,
                                       est.SOURCE_VMWARE_REFERENCED)),
])
def test_only_swap_ins_without_free_memory_at_an_unshrunk_floor_count(
        obs_kw):
    f, _ = _held_floor_round(True, **obs_kw)
    assert f.kb <= 192 * MiB or obs_kw.get('m_cur_kb') == BOOKED
    assert not f.confirmed


@pytest.mark.parametrize('floor', [
    floors.Floor(),                                           # none
    floors.Floor(kb=192 * MiB, ref_kb=81 * MiB, held=False),  # held nothing
    floors.Floor(kb=192 * MiB, ref_kb=81 * MiB, held=True, open=True),
])
def test_a_held_shortage_needs_a_floor_that_held_after_its_own_shortage(
        floor):
    o = badis.Observation(timestamp=1.0, m_cur_kb=208 * MiB,
                          booked_kb=BOOKED, swapping=True, full=True,
                          steady=False)
    assert not badis.held_shortage(floor, o)
    held = floors.Floor(kb=192 * MiB, ref_kb=81 * MiB, held=True)
    assert badis.held_shortage(held, o)
    # the sample under the floor: the floor holds the balloon
    assert badis.held_shortage(held, o, sample_kb=150 * MiB)
    # the sample at or above it: a rise, not the floor's shortage
    assert not badis.held_shortage(held, o, sample_kb=192 * MiB)


def test_a_held_shortage_between_samples_reads_the_last_one():
    # a round run on swap activity has no sample: the last one (100 MiB
    # + the 50 MiB correction, under the 192 MiB floor) says the floor
    # held the balloon
    f, _ = _held_floor_round(True, last_sampled=100 * MiB)
    assert f.kb == BOOKED
    # the last one at 170 (220 MiB with the correction): a rise
    g, _ = _held_floor_round(True, last_sampled=170 * MiB)
    assert g.kb <= 192 * MiB


def _steps(step_moved, balloon):
    """The floor's steps down over quiet rounds in which it held the
    demand, the balloon at ``balloon(floor_kb)``."""
    params = floors.FloorParams(expire_rounds=0, step_kb=4 * MiB,
                                step_rounds=1, step_moved=step_moved)
    f = floors.Floor(kb=BOOKED, ref_kb=95 * MiB, held=True)
    sizes = []
    for _ in range(5):
        f, ev = floors.update(f, bad_shrink=False,
                              m_cur_kb=balloon(f.kb), sample_kb=95 * MiB,
                              short=False, params=params,
                              booked_kb=BOOKED)
        if ev and 'lowered' in ev:
            sizes.append(f.step_kb // MiB)
    return sizes


def test_a_step_that_did_not_move_the_balloon_is_not_doubled():
    # TCG, hotset, badis35: a floor at the booking, its balloon held
    # there by the headroom (floor + 16 MiB above the booking)
    def at_booking(floor_kb):
        return BOOKED

    assert _steps(False, at_booking) == [4, 8, 16, 32, 64]
    assert _steps(True, at_booking) == [4, 4, 4, 4, 4]
    # a balloon that follows the floor down lets the steps double

    def following(floor_kb):
        return floor_kb

    assert _steps(True, following) == [4, 8, 16, 32, 64]
    assert badis.BadisParams().shrink_floor_step_moved is False
