"""Badis state machine (seed 004 §2.6.1), max-average (§2.6.2), targets."""

import dataclasses

import pytest

from memmut.agent.wss import badis
from memmut.agent.wss import techniques as est
from memmut.agent.wss.badis import Mode

MiB = 1024
M_CUR = 1000 * MiB
BOOKED = 2000 * MiB


def sampled(kb):
    return est.TechniqueEstimate(kb, est.SOURCE_VMWARE)


def geiger(kb):
    return est.TechniqueEstimate(kb, est.SOURCE_GEIGER)


def obs(t=0.0, s=None, ghost=None, swapping=False, m_cur=M_CUR,
        booked=BOOKED):
    return badis.Observation(timestamp=t, m_cur_kb=m_cur, booked_kb=booked,
                             sampled=s, ghost=ghost, swapping=swapping)


def state(mode, **kw):
    return badis.BadisState(mode=mode, **kw)


# -- transitions --

def test_new_vm_starts_in_v():
    st, r = badis.step(None, obs(s=sampled(400 * MiB)))
    assert st.mode is Mode.V and r.mode is Mode.V
    assert r.wss == sampled(400 * MiB) and r.transition is None
    assert st.sampling_on and not st.geiger_on


def test_v_stays_v_when_far_from_allocation():
    st, r = badis.step(state(Mode.V), obs(s=sampled(940 * MiB)))
    assert st.mode is Mode.V and r.transition is None


def test_v_to_vg_when_close_to_allocation():
    # 970 of 1000 MiB: 30 MiB left of the 48.5 MiB (5 %) headroom the
    # sizing gives it, under 0.8 of it
    st, r = badis.step(state(Mode.V), obs(s=sampled(970 * MiB)))
    assert st.mode is Mode.VG
    assert r.transition.startswith('V->VG: sampled WSS 970 MiB reached 95%')
    assert st.sampling_on and st.geiger_on


def test_an_estimate_at_its_own_target_stays_in_v():
    # 950 MiB + its 5 % headroom is the 1000 MiB allocation: the balloon
    # sized to it, not a working set growing into it. With the threshold
    # alone every VM whose headroom is 5 % of its estimate sat in VG at
    # its target and its correction was never probed (stop 51).
    st, _ = badis.step(state(Mode.V), obs(s=sampled(950 * MiB)))
    assert st.mode is Mode.V
    old = dataclasses.replace(badis.BadisParams(), vg_headroom_fraction=0)
    st, _ = badis.step(state(Mode.V), obs(s=sampled(950 * MiB)), old)
    assert st.mode is Mode.VG
    # a fixed headroom larger than 5 %: the threshold decides as before
    fixed = dataclasses.replace(badis.BadisParams(), headroom_kb=64 * MiB)
    st, _ = badis.step(state(Mode.V), obs(s=sampled(950 * MiB)), fixed)
    assert st.mode is Mode.VG
    with pytest.raises(ValueError):
        badis.BadisParams(vg_headroom_fraction=1.5)


def test_v_to_vg_on_swap_activity():
    # Choice: the free balloon swap counters also move V to VG; the
    # estimate is then the whole allocation (no Geiger estimate in V).
    st, r = badis.step(state(Mode.V), obs(s=sampled(500 * MiB),
                                          swapping=True))
    assert st.mode is Mode.VG
    assert r.wss == est.TechniqueEstimate(M_CUR, badis.SOURCE_SWAPPING)
    assert r.transition == 'V->VG: swap activity seen while sampling'


def test_vg_uses_vmware_without_swap_and_geiger_with_it():
    st, r = badis.step(state(Mode.VG), obs(s=sampled(900 * MiB)))
    assert r.wss == sampled(900 * MiB) and st.mode is Mode.VG
    st, r = badis.step(state(Mode.VG), obs(s=sampled(900 * MiB),
                                           ghost=geiger(1100 * MiB),
                                           swapping=True))
    assert r.wss == geiger(1100 * MiB) and st.mode is Mode.VG
    assert st.swap_rounds == 1


def test_vg_to_g_after_two_consecutive_swapping_rounds():
    st = state(Mode.VG)
    st, _ = badis.step(st, obs(s=sampled(800 * MiB),
                               ghost=geiger(1050 * MiB), swapping=True))
    assert st.mode is Mode.VG
    st, r = badis.step(st, obs(t=60, s=sampled(800 * MiB),
                               ghost=geiger(1100 * MiB), swapping=True))
    assert st.mode is Mode.G
    assert r.transition == 'VG->G: swap activity in 2 consecutive rounds'
    assert not st.sampling_on and st.geiger_on


def test_vg_swap_rounds_must_be_consecutive():
    st = state(Mode.VG)
    for swapping in (True, False, True):
        st, _ = badis.step(st, obs(s=sampled(990 * MiB),
                                   ghost=geiger(1100 * MiB),
                                   swapping=swapping))
        assert st.mode is Mode.VG
    assert st.swap_rounds == 1


def test_vg_to_v_after_quiet_rounds_below_threshold():
    st = state(Mode.VG)
    st, r = badis.step(st, obs(s=sampled(600 * MiB)))
    assert st.mode is Mode.VG and st.quiet_rounds == 1
    st, r = badis.step(st, obs(t=60, s=sampled(600 * MiB)))
    assert st.mode is Mode.V
    assert r.transition.startswith('VG->V: no swap activity in 2')


def test_vg_stays_while_sampled_wss_is_still_close():
    st = state(Mode.VG)
    for t in range(5):
        st, r = badis.step(st, obs(t=t, s=sampled(980 * MiB)))
        assert st.mode is Mode.VG and r.transition is None


def test_g_stays_g_while_swapping_and_uses_geiger():
    st, r = badis.step(state(Mode.G), obs(ghost=geiger(1300 * MiB),
                                          swapping=True))
    assert st.mode is Mode.G and r.wss == geiger(1300 * MiB)
    # Swapping without a Geiger estimate: the whole allocation.
    st, r = badis.step(state(Mode.G), obs(swapping=True))
    assert r.wss == est.TechniqueEstimate(M_CUR, badis.SOURCE_SWAPPING)


def test_consecutive_swapping_rounds_accumulate_until_a_quiet_round():
    st, r = badis.step(state(Mode.G), obs(ghost=geiger(1300 * MiB),
                                          swapping=True))
    assert st.short_kb == 1300 * MiB
    # Still swapping at the same, too small allocation: a shorter or
    # partial interval's smaller m_ghost does not lower the estimate.
    st, r = badis.step(st, obs(t=1, ghost=geiger(1100 * MiB),
                               swapping=True))
    assert r.wss == geiger(1300 * MiB)
    # A larger one raises it.
    st, r = badis.step(st, obs(t=2, ghost=geiger(1400 * MiB),
                               swapping=True))
    assert r.wss == geiger(1400 * MiB)
    # Granted and still swapping: a reading of swap-ins evicted before the
    # grow (or of a part of the working set) does not lower it either.
    st, r = badis.step(st, obs(t=3, m_cur=1400 * MiB,
                               ghost=geiger(1250 * MiB), swapping=True))
    assert r.wss == geiger(1400 * MiB)
    st, r = badis.step(st, obs(t=3.5, m_cur=1400 * MiB,
                               ghost=geiger(1420 * MiB), swapping=True))
    assert r.wss == geiger(1420 * MiB)
    # A quiet round ends the run of shortage estimates.
    st, r = badis.step(st, obs(t=4, m_cur=1400 * MiB))
    assert st.short_kb == 0


def test_g_to_v_after_two_consecutive_quiet_rounds():
    st = state(Mode.G)
    st, r = badis.step(st, obs())
    assert st.mode is Mode.G and st.quiet_rounds == 1
    # Geiger cannot see below m_cur: the estimate holds the allocation.
    assert r.wss == est.TechniqueEstimate(M_CUR, badis.SOURCE_GEIGER_IDLE)
    st, r = badis.step(st, obs(t=60))
    assert st.mode is Mode.V
    assert r.transition == 'G->V: no swap activity in 2 consecutive rounds'


def test_g_quiet_rounds_must_be_consecutive():
    st = state(Mode.G)
    for swapping in (False, True, False):
        st, _ = badis.step(st, obs(ghost=geiger(1100 * MiB),
                                   swapping=swapping))
        assert st.mode is Mode.G


def test_round_counts_are_options():
    params = badis.BadisParams(vg_to_g_rounds=3, g_to_v_rounds=1)
    st = state(Mode.VG)
    for _ in range(2):
        st, _ = badis.step(st, obs(ghost=geiger(1100 * MiB), swapping=True),
                           params)
    assert st.mode is Mode.VG
    st, _ = badis.step(st, obs(ghost=geiger(1100 * MiB), swapping=True),
                       params)
    assert st.mode is Mode.G
    st, _ = badis.step(st, obs(), params)
    assert st.mode is Mode.V


def test_full_cycle_v_vg_g_v():
    st = None
    modes = []
    script = [
        obs(0, s=sampled(500 * MiB)),                              # V
        obs(60, s=sampled(970 * MiB)),                             # ->VG
        obs(120, s=sampled(800 * MiB), ghost=geiger(1100 * MiB),
            swapping=True),
        obs(180, s=sampled(800 * MiB), ghost=geiger(1200 * MiB),
            swapping=True),                                        # ->G
        obs(240),
        obs(300),                                                  # ->V
    ]
    for o in script:
        st, r = badis.step(st, o)
        modes.append(r.mode)
    assert modes == [Mode.V, Mode.VG, Mode.VG, Mode.G, Mode.G, Mode.V]


# -- pinned-page correction --

def test_correction_learned_in_vg_while_swapping():
    # Swapping in VG: all 1000 MiB are needed, sampling reads 800 MiB ->
    # 200 MiB are pinned pages.
    st, _ = badis.step(state(Mode.VG), obs(s=sampled(800 * MiB),
                                           ghost=geiger(1100 * MiB),
                                           swapping=True))
    assert st.pinned_kb == 200 * MiB


def test_correction_not_learned_without_swapping_or_outside_vg():
    st, _ = badis.step(state(Mode.VG), obs(s=sampled(800 * MiB)))
    assert st.pinned_kb == 0
    st, _ = badis.step(state(Mode.V), obs(s=sampled(800 * MiB),
                                          swapping=True))
    assert st.pinned_kb == 0


def test_correction_applied_in_v():
    st = state(Mode.V, pinned_kb=200 * MiB)
    st, r = badis.step(st, obs(s=sampled(500 * MiB)))
    assert r.wss == sampled(700 * MiB) and st.mode is Mode.V
    # Corrected estimate drives the V->VG test: 770 + 200 >= 950.
    st, r = badis.step(state(Mode.V, pinned_kb=200 * MiB),
                       obs(s=sampled(770 * MiB)))
    assert st.mode is Mode.VG and r.wss.wss_kb == 970 * MiB
    # Capped at the allocation: sampling cannot see above m_cur.
    _, r = badis.step(state(Mode.V, pinned_kb=200 * MiB),
                      obs(s=sampled(900 * MiB)))
    assert r.wss.wss_kb == M_CUR


def test_correction_learned_then_applied_after_cycle():
    st = state(Mode.VG)
    st, _ = badis.step(st, obs(0, s=sampled(850 * MiB),
                               ghost=geiger(1100 * MiB), swapping=True))
    st, _ = badis.step(st, obs(60, s=sampled(850 * MiB),
                               ghost=geiger(1100 * MiB), swapping=True))
    assert st.mode is Mode.G and st.pinned_kb == 150 * MiB
    st, _ = badis.step(st, obs(120))
    st, _ = badis.step(st, obs(180))
    assert st.mode is Mode.V
    st, r = badis.step(st, obs(240, s=sampled(300 * MiB)))
    assert r.wss.wss_kb == 450 * MiB


def test_initial_correction_option():
    params = badis.BadisParams(initial_pinned_kb=190 * MiB)
    st, r = badis.step(None, obs(s=sampled(300 * MiB)), params)
    assert r.wss.wss_kb == 490 * MiB and st.pinned_kb == 190 * MiB


# -- estimate details --

def test_no_sample_holds_last_estimate():
    st, _ = badis.step(None, obs(0, s=sampled(400 * MiB)))
    st, r = badis.step(st, obs(60))
    assert r.wss == est.TechniqueEstimate(400 * MiB, badis.SOURCE_HOLD)
    _, r = badis.step(None, obs(0))
    assert r.wss == est.TechniqueEstimate(M_CUR, badis.SOURCE_HOLD)


def test_estimates_capped_at_booked():
    _, r = badis.step(state(Mode.G), obs(ghost=geiger(5000 * MiB),
                                         swapping=True))
    assert r.wss == geiger(BOOKED)


# -- moving average and its maximum per slice --

def run(estimates, dt=60.0, params=None):
    st = None
    results = []
    for i, kb in enumerate(estimates):
        st, r = badis.step(st, obs(t=i * dt, s=sampled(kb)), params)
        results.append(r)
    return st, results


def test_moving_average_of_last_n():
    _, rs = run([100, 200, 300, 400, 500, 600, 700])
    assert [r.moving_avg_kb for r in rs] == [100, 150, 200, 250, 300, 400,
                                             500]


def test_max_average_over_sliding_slice():
    params = badis.BadisParams(average_window=1, time_slice=300.0)
    # One peak at t=120 s, then low: the peak sizes the VM for 300 s.
    _, rs = run([100, 100, 900, 100, 100, 100, 100, 100], params=params)
    assert [r.max_avg_kb for r in rs] == [100, 100, 900, 900, 900, 900,
                                          900, 100]


def test_max_average_grows_at_once_and_holds_slice_maximum():
    params = badis.BadisParams(average_window=5, time_slice=3600.0)
    seq = [500 * MiB] * 5 + [900 * MiB] * 5 + [300 * MiB] * 10
    st, rs = run(seq, params=params)
    assert rs[4].max_avg_kb == 500 * MiB
    assert rs[5].max_avg_kb == 580 * MiB            # average moves first
    assert rs[9].max_avg_kb == 900 * MiB
    assert rs[-1].moving_avg_kb == 300 * MiB
    assert rs[-1].max_avg_kb == 900 * MiB           # still in the slice
    # An hour after the peak, it is gone.
    st, r = badis.step(st, obs(t=9 * 60 + 3601, s=sampled(300 * MiB)),
                       params)
    assert r.max_avg_kb < 900 * MiB
    st, r = badis.step(st, obs(t=20 * 3600, s=sampled(300 * MiB)), params)
    assert r.max_avg_kb == 300 * MiB
    # The state keeps only the candidates for the maximum.
    assert len(st.window) <= 2


def test_demand_serves_shortage_at_once():
    st, rs = run([400 * MiB] * 5)
    st, r = badis.step(st.__class__(mode=Mode.G, recent=st.recent,
                                    window=st.window),
                       obs(300, ghost=geiger(1200 * MiB), swapping=True))
    assert r.max_avg_kb == (4 * 400 + 1200) * MiB // 5
    assert r.demand_kb == 1200 * MiB
    # Sampling estimates are not pushed up (nor paced down: the balloon
    # of obs() is at 1000 MiB, far above them).
    _, rs = run([400 * MiB] * 5,
                params=badis.BadisParams(shrink_slow_start_kb=0))
    assert rs[-1].demand_kb == rs[-1].max_avg_kb == 400 * MiB


def test_estimator_class_keeps_per_vm_state():
    b = badis.BadisEstimator()
    assert b.state('a').mode is Mode.V
    b.observe('a', obs(0, s=sampled(990 * MiB)))
    b.observe('b', obs(0, s=sampled(100 * MiB)))
    assert b.state('a').mode is Mode.VG and b.state('b').mode is Mode.V
    b.forget('a')
    assert b.state('a').mode is Mode.V


def test_state_is_immutable():
    st, _ = badis.step(None, obs(s=sampled(1)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        st.mode = Mode.G


def test_params_from_conf(conf):
    conf.set_override('vg_threshold', 0.9, 'badis')
    conf.set_override('average_window', 7, 'badis')
    p = badis.BadisParams.from_conf(conf)
    assert p.vg_threshold == 0.9 and p.average_window == 7
    assert p.time_slice == 3600.0 and p.vg_to_g_rounds == 2
    t = badis.TargetParams.from_conf(conf)
    assert t == badis.TargetParams()


def test_params_validated():
    with pytest.raises(ValueError):
        badis.BadisParams(vg_threshold=0)
    with pytest.raises(ValueError):
        badis.BadisParams(average_window=0)
    with pytest.raises(ValueError):
        badis.TargetParams(max_step_fraction=0)


# -- balloon target --

TP = badis.TargetParams(headroom_kb=32 * MiB, headroom_fraction=0.05,
                        max_step_fraction=0.25, min_change_kb=16 * MiB,
                        floor_kb=128 * MiB)


def test_target_is_demand_plus_headroom():
    # 1000 MiB demand: 5 % = 50 MiB beats 32 MiB.
    target, reason = badis.balloon_target(1000 * MiB, 1200 * MiB,
                                          2048 * MiB, TP, source='vmware')
    assert target == 1050 * MiB
    assert reason == ('shrink 1200 MiB -> 1050 MiB: demand 1000 MiB '
                      '(vmware) + headroom 50 MiB')
    # Small demand: the fixed 32 MiB wins.
    target, _ = badis.balloon_target(300 * MiB, 400 * MiB, 2048 * MiB, TP)
    assert target == 332 * MiB


def test_target_step_limited_per_round():
    target, reason = badis.balloon_target(200 * MiB, 2048 * MiB,
                                          2048 * MiB, TP)
    assert target == 1536 * MiB                  # 25 % of booked
    assert 'step limited to 25% of booked 2048 MiB' in reason
    target, _ = badis.balloon_target(2000 * MiB, 500 * MiB, 2048 * MiB, TP)
    assert target == 1012 * MiB


def test_target_ignores_small_changes():
    assert badis.balloon_target(1000 * MiB, 1040 * MiB, 2048 * MiB,
                                TP) is None            # wants 1050: +10
    assert badis.balloon_target(1000 * MiB, 1050 * MiB, 2048 * MiB,
                                TP) is None            # no change


def test_target_never_above_booked_nor_below_floor():
    target, reason = badis.balloon_target(3000 * MiB, 1900 * MiB,
                                          2048 * MiB, TP)
    assert target == 2048 * MiB and 'capped at booked' in reason
    target, reason = badis.balloon_target(10 * MiB, 300 * MiB, 2048 * MiB,
                                          TP)
    assert target == 128 * MiB and 'held at floor 128 MiB' in reason
    # Floor above booked: booked wins.
    target, _ = badis.balloon_target(10 * MiB, 200 * MiB, 100 * MiB, TP)
    assert target == 100 * MiB


def test_target_brings_out_of_bounds_balloon_back():
    # 100 MiB is below the 128 MiB floor: corrected even though the move
    # is smaller than min_change and the step limit would allow less.
    p = dataclasses.replace(TP, max_step_fraction=0.01)
    target, reason = badis.balloon_target(10 * MiB, 120 * MiB, 2048 * MiB,
                                          p)
    assert target == 128 * MiB and 'outside' in reason


def test_target_may_grow_faster_than_it_shrinks():
    p = dataclasses.replace(TP, max_grow_fraction=0.5)
    target, reason = badis.balloon_target(2000 * MiB, 500 * MiB, 2048 * MiB,
                                          p)
    assert target == 1524 * MiB                  # +50 % of booked
    assert 'step limited to 50% of booked' in reason
    target, reason = badis.balloon_target(200 * MiB, 2048 * MiB,
                                          2048 * MiB, p)
    assert target == 1536 * MiB                  # -25 % of booked
    assert 'step limited to 25% of booked' in reason
    with pytest.raises(ValueError):
        badis.TargetParams(max_grow_fraction=0)


# -- pinned-page learning and the G -> V hand-over --

def test_pinned_correction_is_learned_only_in_steady_swapping_rounds():
    st = state(Mode.VG)
    # the balloon moved during the interval: nothing learned
    moving = dataclasses.replace(obs(s=sampled(700 * MiB),
                                     ghost=geiger(1100 * MiB),
                                     swapping=True), steady=False)
    st, _ = badis.step(st, moving)
    assert st.pinned_kb == 0 and not st.learned
    st = state(Mode.VG)
    st, _ = badis.step(st, obs(s=sampled(700 * MiB),
                               ghost=geiger(1100 * MiB), swapping=True))
    assert st.pinned_kb == 300 * MiB and st.learned
    # learned stays learned through transitions
    st, _ = badis.step(st, obs(t=60, s=sampled(700 * MiB),
                               ghost=geiger(1100 * MiB), swapping=True))
    assert st.mode is Mode.G and st.learned


def test_sampling_restarts_in_g_one_round_before_g_to_v():
    p = badis.BadisParams()
    st = state(Mode.G)
    assert not st.sampling_wanted(p)
    st, _ = badis.step(st, obs())              # first quiet round
    assert st.mode is Mode.G and st.sampling_wanted(p)
    assert not st.sampling_on
    # swapping again: off
    st2, _ = badis.step(st, obs(ghost=geiger(1100 * MiB), swapping=True))
    assert not st2.sampling_wanted(p)
    # the transition round is V's, estimated by the sample
    st, r = badis.step(st, obs(t=60, s=sampled(400 * MiB)))
    assert st.mode is Mode.V and r.wss == sampled(400 * MiB)
    assert r.transition.startswith('G->V')
    # without a sample it keeps the allocation, as before
    st = state(Mode.G, quiet_rounds=1)
    st, r = badis.step(st, obs(t=60))
    assert st.mode is Mode.V
    assert r.wss == est.TechniqueEstimate(M_CUR, badis.SOURCE_GEIGER_IDLE)


@pytest.mark.parametrize('guard, first', [
    (False, sampled(400 * MiB)),            # main: the low sample
    (True, est.TechniqueEstimate(M_CUR, badis.SOURCE_SHRINK_GUARD)),
])
def test_v_ignores_swap_ins_of_a_shrink_while_sampling_sees_room(
        guard, first):
    params = badis.BadisParams(shrink_guard=guard)
    # the balloon shrank during the interval; sampling sees 400 of 1000
    shrink = dataclasses.replace(obs(s=sampled(400 * MiB),
                                     ghost=geiger(1050 * MiB),
                                     swapping=True), steady=False)
    st, r = badis.step(state(Mode.V), shrink, params)
    # V either way; the shrink guard holds the round at the allocation
    # the guest swapped at instead of taking the stalled sample
    assert st.mode is Mode.V and r.wss == first
    # still swapping at a steady size: a real shortage
    st, r = badis.step(st, obs(t=60, s=sampled(400 * MiB),
                               ghost=geiger(1050 * MiB), swapping=True),
                       params)
    assert st.mode is Mode.VG and r.wss == geiger(1050 * MiB)
    # a moved balloon with sampling near the allocation: VG at once
    near = dataclasses.replace(obs(s=sampled(990 * MiB),
                                   ghost=geiger(1050 * MiB),
                                   swapping=True), steady=False)
    st, r = badis.step(state(Mode.V), near, params)
    assert st.mode is Mode.VG


def test_a_grown_interval_may_only_raise_the_correction():
    grown = dataclasses.replace(obs(s=sampled(700 * MiB),
                                    ghost=geiger(1100 * MiB),
                                    swapping=True),
                                steady=False, grew_from_kb=900 * MiB)
    st, _ = badis.step(state(Mode.VG, pinned_kb=100 * MiB), grown)
    assert st.pinned_kb == 200 * MiB and not st.learned    # 900 - 700
    st, _ = badis.step(state(Mode.VG, pinned_kb=250 * MiB), grown)
    assert st.pinned_kb == 250 * MiB


def test_no_learning_while_the_guest_has_free_memory():
    roomy = dataclasses.replace(obs(s=sampled(300 * MiB),
                                    ghost=geiger(1100 * MiB),
                                    swapping=True), full=False)
    st, r = badis.step(state(Mode.VG, pinned_kb=50 * MiB), roomy)
    assert st.pinned_kb == 50 * MiB and not st.learned
    assert r.wss == geiger(1100 * MiB)           # still Geiger's estimate


# -- swap growth under pressure --

def test_swap_growth_is_a_shortage_in_every_state():
    for mode in (Mode.V, Mode.VG, Mode.G):
        o = dataclasses.replace(obs(s=sampled(500 * MiB)),
                                pressure_kb=40 * MiB)
        assert o.short and not o.swapping
        st, r = badis.step(state(mode), o)
        assert r.wss == est.TechniqueEstimate(M_CUR + 40 * MiB,
                                              badis.SOURCE_SWAP_GROWTH)
        assert r.demand_kb >= M_CUR + 40 * MiB
        assert st.mode is (Mode.VG if mode is Mode.V else mode)
        assert st.short_kb == M_CUR + 40 * MiB


def test_geiger_wins_over_swap_growth_when_larger_and_vice_versa():
    o = badis.Observation(timestamp=0, m_cur_kb=M_CUR, booked_kb=BOOKED,
                          ghost=geiger(M_CUR + 60 * MiB), swapping=True,
                          pressure_kb=20 * MiB)
    assert badis.step(state(Mode.VG), o)[1].wss == geiger(M_CUR + 60 * MiB)
    o = dataclasses.replace(o, pressure_kb=90 * MiB)
    assert badis.step(state(Mode.VG), o)[1].wss == est.TechniqueEstimate(
        M_CUR + 90 * MiB, badis.SOURCE_SWAP_GROWTH)


def test_negative_pressure_is_refused():
    with pytest.raises(ValueError):
        badis.Observation(timestamp=0, m_cur_kb=M_CUR, booked_kb=BOOKED,
                          pressure_kb=-1)


# -- issue 13: the pinned correction can fall; the shrink guard --

def _quiet(t, s_kb=300 * MiB, **kw):
    return badis.Observation(timestamp=t, m_cur_kb=M_CUR, booked_kb=BOOKED,
                             sampled=sampled(s_kb), **kw)


def _params(**kw):
    # the decay's pace (pinned_relearn): with calibration_reprobe (on by
    # default since stop 51) the calibration probe paces the correction
    # at all times instead
    base = dict(time_slice=4.0, shrink_swapin_window=3.0, pinned_decay=0.5,
                pinned_relearn=True, shrink_guard=True,
                calibration_reprobe=False)
    base.update(kw)
    return badis.BadisParams(**base)


def _shrunk(t, to_kb, from_kb=M_CUR):
    """A quiet round right after the balloon shrank to ``to_kb``."""
    return dataclasses.replace(_quiet(t), m_cur_kb=to_kb, steady=False,
                               shrunk=True, shrunk_from_kb=from_kb)


def _swapping(t, m_cur_kb, ghost_kb):
    """A round with swap-ins, Geiger reading ``ghost_kb``."""
    return badis.Observation(timestamp=t, m_cur_kb=m_cur_kb,
                             booked_kb=BOOKED, ghost=geiger(ghost_kb),
                             swapping=True)


@pytest.mark.parametrize('relearn, evidence, t, expect_mib', [
    # main: the correction never falls in quiet rounds
    (False, False, 1.0, 500),
    (False, True, 100.0, 500),
    # fixed decay (branch patterns): every quiet steady round, half of
    # the 400 MiB above the 100 MiB floor
    (True, False, 1.0, 300),
    # evidence-paced: not before time_slice + window (7 s) after the last
    # change of the correction ...
    (True, True, 6.0, 500),
    # ... then one step
    (True, True, 7.0, 300),
])
def test_pinned_correction_decays_above_its_floor(relearn, evidence, t,
                                                  expect_mib):
    params = _params(pinned_relearn=relearn, pinned_decay_evidence=evidence)
    st = badis.BadisState(pinned_kb=500 * MiB, pinned_floor_kb=100 * MiB,
                          pinned_at=0.0, pinned_note='calibrated')
    st, r = badis.step(st, _quiet(t), params)
    assert st.pinned_kb == expect_mib * MiB
    if expect_mib != 500:
        assert any('decayed' in e for e in r.events)


@pytest.mark.parametrize('last_swap_at, decays', [
    (None, True), (1.0, True), (4.0, False)])
def test_evidence_paced_decay_waits_for_quiet_after_swap_activity(
        last_swap_at, decays):
    st = badis.BadisState(pinned_kb=500 * MiB, pinned_floor_kb=100 * MiB,
                          pinned_at=0.0, pinned_note='calibrated',
                          swap_at=last_swap_at)
    st, _ = badis.step(st, _quiet(10.0), _params())
    assert (st.pinned_kb < 500 * MiB) is decays


@pytest.mark.parametrize('evidence, pinned_mib, floor_mib', [
    # evidence-paced: back to the value before the last step, kept as
    # the floor (shrinking below it was shown to swap)
    (True, 300, 300),
    # fixed decay (branch patterns): back to where the decay began
    (False, 500, 100),
])
def test_bad_shrink_restores_the_decayed_correction(evidence, pinned_mib,
                                                    floor_mib):
    params = _params(pinned_decay_evidence=evidence, shrink_guard=False)
    st = badis.BadisState(pinned_kb=500 * MiB, pinned_floor_kb=100 * MiB,
                          pinned_at=0.0, pinned_note='calibrated')
    st, _ = badis.step(st, _quiet(7.0), params)          # 500 -> 300
    if evidence:
        # the lower estimate made the guest evict below the old one
        # (cold data): the step was right, the next one is due
        st, _ = badis.step(st, dataclasses.replace(
            _quiet(9.0), m_cur_kb=700 * MiB, evicted_kb=8 * MiB), params)
    t = 14.0 if evidence else 8.0                         # the next step
    st, _ = badis.step(st, _quiet(t), params)            # 300 -> 200
    assert st.pinned_kb == 200 * MiB
    assert st.pinned_kb < 500 * MiB
    # the lower estimate shrinks the balloon ...
    shrunk = dataclasses.replace(_quiet(t + 1), m_cur_kb=900 * MiB,
                                 steady=False, shrunk=True,
                                 shrunk_from_kb=M_CUR)
    st, _ = badis.step(st, shrunk, params)
    # ... and swap-ins follow within the window (Geiger: not a rise)
    st, r = badis.step(st, badis.Observation(
        timestamp=t + 2, m_cur_kb=900 * MiB, booked_kb=BOOKED,
        ghost=geiger(950 * MiB), swapping=True), params)
    assert r.bad_shrinks == 1
    assert st.pinned_kb == pinned_mib * MiB
    assert st.pinned_floor_kb == floor_mib * MiB


@pytest.mark.parametrize('t_swap, ghost_mib, counted', [
    (2.0, 950, 1),        # swap-ins within the window: counted
    (5.0, 950, 0),        # after the window: not the shrink's doing
    (2.0, 1100, 0),       # Geiger above the size before: a rise
])
def test_bad_shrinks_counted(t_swap, ghost_mib, counted):
    params = _params(pinned_relearn=False, shrink_guard=False)
    st = badis.BadisState()
    st, _ = badis.step(st, _shrunk(0.0, 900 * MiB), params)
    st, r = badis.step(st, _swapping(t_swap, 900 * MiB, ghost_mib * MiB),
                       params)
    assert r.bad_shrinks == counted


@pytest.mark.parametrize('from_descent, ghost_mib, counted', [
    # Geiger between the last step's start (850) and the size before the
    # descent (1000): the descent's doing, a bad shrink
    (True, 950, 1),
    # the rule before stop 43: above the last step's start reads as a rise
    (False, 950, 0),
    # above the size before the descent: a rise either way
    (True, 1100, 0),
    # below both: counted either way
    (False, 800, 1),
])
def test_a_descent_in_steps_is_one_shrink_for_the_rise_test(
        from_descent, ghost_mib, counted):
    params = _params(pinned_relearn=False, shrink_guard=False,
                     shrink_rise_from_descent=from_descent)
    st = badis.BadisState()
    # 1000 -> 925 -> 850 -> 775, one step a round, no swap-ins between
    for t, (frm, to) in enumerate(((1000, 925), (925, 850), (850, 775))):
        st, r = badis.step(st, _shrunk(float(t), to * MiB, frm * MiB),
                           params)
        assert r.bad_shrinks == 0
    st, r = badis.step(st, _swapping(3.0, 775 * MiB, ghost_mib * MiB),
                       params)
    assert r.bad_shrinks == counted


def test_a_descent_ends_with_the_swapin_window():
    """Steps further apart than shrink_swapin_window are separate
    shrinks: the first one held, the second is judged on its own."""
    params = _params(pinned_relearn=False, shrink_guard=False)
    st = badis.BadisState()
    st, _ = badis.step(st, _shrunk(0.0, 900 * MiB), params)
    st, _ = badis.step(st, _shrunk(10.0, 800 * MiB, 900 * MiB), params)
    st, r = badis.step(st, _swapping(11.0, 800 * MiB, 950 * MiB), params)
    assert r.bad_shrinks == 0            # above 900: a rise


@pytest.mark.parametrize('guard, hold, wss_mib', [
    (False, 2, 300),      # main: the round after swap-ins takes the sample
    (True, 2, 1000),      # held at the allocation the guest swapped at
    (True, 0, 300),       # no hold rounds: only the swapping round
])
def test_shrink_guard_holds_sampled_estimates_after_swap_ins(guard, hold,
                                                             wss_mib):
    params = _params(pinned_relearn=False, shrink_guard=guard,
                     shrink_hold_rounds=hold)
    st = state(Mode.VG)
    st, _ = badis.step(st, badis.Observation(
        timestamp=0.0, m_cur_kb=M_CUR, booked_kb=BOOKED,
        sampled=sampled(300 * MiB), ghost=geiger(M_CUR), swapping=True,
        full=False), params)                 # (learns no correction)
    st, r = badis.step(st, _quiet(1.0), params)
    assert r.wss.wss_kb == wss_mib * MiB
    assert r.demand_kb >= (wss_mib * MiB if guard and hold else 0)


@pytest.mark.parametrize('evicted_kb, m_cur_mib, pinned_mib, wait', [
    # no eviction since the step: taken back, the next probe waits twice
    (0, 700, 500, 2),
    # evictions, but above the old estimate (300 + 500): not cold data
    (8 * MiB, 900, 500, 2),
    # evictions below the old estimate: the next step (300 -> 200)
    (8 * MiB, 700, 200, 1),
])
def test_evidence_paced_decay_probe(evicted_kb, m_cur_mib, pinned_mib,
                                    wait):
    params = _params()
    st = badis.BadisState(pinned_kb=500 * MiB, pinned_floor_kb=100 * MiB,
                          pinned_at=0.0, pinned_note='calibrated')
    st, _ = badis.step(st, _quiet(7.0), params)          # 500 -> 300
    assert st.pinned_kb == 300 * MiB and st.probing
    st, _ = badis.step(st, dataclasses.replace(
        _quiet(9.0), m_cur_kb=m_cur_mib * MiB, evicted_kb=evicted_kb),
        params)
    st, _ = badis.step(st, _quiet(14.0), params)
    assert st.pinned_kb == pinned_mib * MiB
    assert st.probe_wait == wait


@pytest.mark.parametrize('noise_filter, sampled_mib, prior_short, held', [
    (False, 300, False, True),     # branch patterns: every swap-in arms
    (True, 300, False, False),     # reclaim noise after a shrink
    (True, 980, False, True),      # the sample is close: a shortage
    (True, 300, True, True),       # swapping already: a shortage
])
def test_shrink_noise_filter(noise_filter, sampled_mib, prior_short, held):
    params = _params(pinned_relearn=False, shrink_noise_filter=noise_filter)
    st = badis.BadisState(short_kb=M_CUR if prior_short else 0)
    after_shrink = badis.Observation(
        timestamp=1.0, m_cur_kb=M_CUR, booked_kb=BOOKED,
        sampled=sampled(sampled_mib * MiB), ghost=geiger(1010 * MiB),
        swapping=True, steady=False, shrunk=True,
        shrunk_from_kb=1100 * MiB)
    st, r = badis.step(st, after_shrink, params)
    assert (r.bad_shrinks == 1) is held
    st, r = badis.step(st, _quiet(2.0), params)
    assert (r.wss.source == badis.SOURCE_SHRINK_GUARD) is held


# -- issue 13: no correction learned from a sample taken while the guest
# stalled on swap (stall_filter) --

def _swapping_vg(sampled_mib, swapin_kb, seconds=1.0, **kw):
    return badis.Observation(
        timestamp=10.0, m_cur_kb=M_CUR, booked_kb=BOOKED,
        sampled=sampled(sampled_mib * MiB), ghost=geiger(1050 * MiB),
        swapping=True, swapin_kb=swapin_kb, interval_s=seconds, **kw)


@pytest.mark.parametrize(
    'stall, last_sampled_mib, last_rate, sampled_mib, swapin_kb, seconds, '
    'pinned_mib, why', [
        # the filter off (main): learned whatever the swap-in rate
        (False, None, 0.0, 700, 64 * MiB, 1.0, 300, None),
        (False, 800, 0.0, 700, 1 * MiB, 1.0, 300, None),
        # a swap-in rate at or above stall_swapin_rate_kb (4 MiB/s)
        (True, None, 0.0, 700, 4 * MiB, 1.0, 72, 'swap-in rate 4096'),
        (True, None, 0.0, 700, 40 * MiB, 10.0, 72, 'swap-in rate 4096'),
        # below it, no earlier sample: learned
        (True, None, 0.0, 700, 1 * MiB, 1.0, 300, None),
        # 1 MiB/s below it over 10 s: learned
        (True, None, 0.0, 700, 10 * MiB, 10.0, 300, None),
        # the sample fell (800 -> 700) while swap-ins rose (0 -> 1 MiB/s):
        # the W3,s case of badis13-final (97 -> 83 MiB, 0 -> 1 MiB/s)
        (True, 800, 0.0, 700, 1 * MiB, 1.0, 72, 'fell from 800 MiB'),
        # fell, but swap-ins did not rise: learned
        (True, 800, 2048.0, 700, 1 * MiB, 1.0, 300, None),
        # rose with swap-ins: learned (a rising working set)
        (True, 650, 0.0, 700, 1 * MiB, 1.0, 300, None),
        # fell by no more than the noise (1 % of m_cur = 10 MiB): learned
        (True, 709, 0.0, 700, 1 * MiB, 1.0, 300, None),
        # the interval length unknown: no sign, learned
        (True, 800, 0.0, 700, 1 * MiB, None, 300, None),
    ])
def test_no_correction_learned_from_a_stalled_sample(
        stall, last_sampled_mib, last_rate, sampled_mib, swapin_kb, seconds,
        pinned_mib, why):
    params = badis.BadisParams(stall_filter=stall)
    st = state(Mode.VG, pinned_kb=72 * MiB,
               last_sampled_kb=(last_sampled_mib * MiB
                                if last_sampled_mib else None),
               last_swapin_rate_kb=last_rate)
    st, r = badis.step(st, _swapping_vg(sampled_mib, swapin_kb, seconds),
                       params)
    assert st.pinned_kb == pinned_mib * MiB
    assert st.learned is (why is None)
    assert r.wss == geiger(1050 * MiB)          # the estimate: Geiger's
    skipped = [e for e in r.events if 'stalled on swap' in e]
    if why is None:
        assert skipped == []
    else:
        (line,) = skipped
        assert why in line and line.startswith(
            'pinned-page correction 72 MiB kept')


@pytest.mark.parametrize('sampled_mib, swapin_kb, pinned_mib', [
    (700, 8 * MiB, 100),          # stalled: the lower bound is not taken
    (700, 0, 200),                # 900 - 700
])
def test_a_stalled_grown_interval_raises_nothing(sampled_mib, swapin_kb,
                                                 pinned_mib):
    grown = dataclasses.replace(
        _swapping_vg(sampled_mib, swapin_kb), steady=False,
        grew_from_kb=900 * MiB)
    st, _ = badis.step(state(Mode.VG, pinned_kb=100 * MiB), grown,
                       badis.BadisParams(stall_filter=True))
    assert st.pinned_kb == pinned_mib * MiB


def test_the_last_sampled_round_is_remembered_for_the_stall_sign():
    params = badis.BadisParams(stall_filter=True)
    st, _ = badis.step(state(Mode.V), _quiet(1.0, s_kb=800 * MiB,
                                             swapin_kb=0, interval_s=1.0),
                       params)
    assert (st.last_sampled_kb, st.last_swapin_rate_kb) == (800 * MiB, 0.0)
    # a round without a sample (run on swap activity) keeps them
    st2, _ = badis.step(st, badis.Observation(
        timestamp=1.5, m_cur_kb=M_CUR, booked_kb=BOOKED,
        ghost=geiger(1050 * MiB), swapping=True, swapin_kb=MiB,
        interval_s=0.5), params)
    assert (st2.last_sampled_kb, st2.last_swapin_rate_kb) == (800 * MiB,
                                                              0.0)


def test_swap_monitors_report_swap_ins_and_the_interval():
    from memmut.agent.wss import swap_monitors

    class VM:
        uuid, name = 'u', 'vm'
        memory_stats = {'swap_in': 0, 'swap_out': 0}

    clock = iter([0.0, 2.0]).__next__
    mon = swap_monitors.BalloonStatsSwapMonitor(clock=clock)
    vm = VM()
    mon.read(vm, M_CUR)
    vm.memory_stats = {'swap_in': 8 * MiB, 'swap_out': 9 * MiB}
    reading = mon.read(vm, M_CUR)
    assert (reading.in_kb, reading.seconds) == (8 * MiB, 2.0)
    o = badis.Observation(timestamp=0, m_cur_kb=M_CUR, booked_kb=BOOKED,
                          swapin_kb=reading.in_kb,
                          interval_s=reading.seconds)
    assert o.swapin_rate_kb == 4 * MiB


# -- issue 13: probe a lower correction with the balloon (pinned_probe) --

def _probe_params(**kw):
    # the balloon starts far above the estimate: without the slow start's
    # descent (test_a_probe_waits_for_a_paced_descent) the probe may start
    # in the first round
    # (probe_burst_s: these guests' first reclaims are not blind; the
    # burst has its own tests below)
    # (probe_answer_rate, probe_over_demand: these rounds report swap
    # activity without its amount, and a demand held above the estimate
    # as one no probe starts under; both rules have their own tests)
    base = dict(time_slice=4.0, shrink_swapin_window=3.0, pinned_decay=0.25,
                pinned_probe=True, pinned_probe_step_kb=16 * MiB,
                shrink_slow_start_kb=0, probe_burst_s=0.0,
                probe_answer_rate=False, probe_over_demand=False)
    base.update(kw)
    return badis.BadisParams(**base)


def _probe_state(**kw):
    base = dict(pinned_kb=200 * MiB, pinned_floor_kb=72 * MiB,
                pinned_at=0.0, pinned_note='calibrated', recent=(500 * MiB,))
    base.update(kw)
    return badis.BadisState(**base)


def _start_probe(params=None):
    params = params or _probe_params()
    # quiet V round at a steady 1000 MiB, sampled 300 MiB: estimate 500
    st, r = badis.step(_probe_state(), _quiet(7.0), params)
    return st, r


def test_probe_starts_after_the_pacing_and_keeps_the_estimate():
    params = _probe_params()
    st, r = badis.step(_probe_state(), _quiet(6.0), params)   # < 7 s
    assert r.probe_kb is None and st.probe_pinned_kb is None
    st, r = _start_probe(params)
    # one step: the larger of 16 MiB and 25 % of the 128 MiB above the
    # floor (32 MiB); the balloon asked for 500 - 32 = 468 MiB
    assert st.probe_pinned_kb == 168 * MiB
    assert r.probe_kb == 468 * MiB
    # the estimate is not lowered: a right correction costs no error
    assert r.wss.wss_kb == 500 * MiB and r.pinned_kb == 200 * MiB
    assert st.pinned_kb == 200 * MiB
    assert any(e.startswith('balloon probe of a pinned-page correction '
                            'of 168 MiB') for e in r.events)


@pytest.mark.parametrize('over_demand', [False, True])
def test_a_probe_waits_for_a_paced_descent(over_demand):
    # with the slow start the balloon comes down from 1000 MiB to the
    # 500 MiB estimate in doubling steps; a probe starts only once the
    # demand has settled on the estimate (the last step covers the rest),
    # never on a paced demand halfway down (probe_over_demand: only a
    # demand the max-average holds is probed under)
    params = _probe_params(shrink_slow_start_kb=4 * MiB,
                           probe_over_demand=over_demand)
    st, m_cur, t, paced = _probe_state(), M_CUR, 7.0, 0
    for _ in range(12):
        o = dataclasses.replace(_quiet(t), m_cur_kb=m_cur,
                                shrunk=m_cur < M_CUR)
        st, r = badis.step(st, o, params)
        if r.probe_kb is not None:
            break
        paced += any('slow start' in e for e in r.events)
        m_cur = r.demand_kb + badis.sizing.headroom(
            r.demand_kb, params.headroom_kb, params.headroom_fraction)
        t += 8.0
    assert r.probe_kb is not None and paced >= 5
    assert not any('slow start' in e for e in r.events)
    assert r.demand_kb <= 500 * MiB + params.pinned_probe_step_kb


@pytest.mark.parametrize('kw', [
    dict(pinned_probe=False),                       # switched off
])
def test_no_probe_when_off(kw):
    st, r = _start_probe(_probe_params(**kw))
    assert r.probe_kb is None and st.pinned_kb == 200 * MiB


@pytest.mark.parametrize('state_kw, obs_kw', [
    (dict(pinned_kb=72 * MiB), {}),                 # at its floor
    (dict(mode=Mode.VG), {}),                       # not in V
    ({}, dict(steady=False)),                       # the balloon moved
    ({}, dict(swapping=True)),                      # swap activity
    ({}, dict(sampled=None)),                       # no sample
    (dict(swap_at=5.0), {}),                        # swapped recently
    (dict(recent=(700 * MiB,) * 4), {}),            # max-avg holds more
])
def test_probe_needs_a_quiet_steady_v_round_above_the_floor(state_kw,
                                                            obs_kw):
    st = _probe_state(**state_kw)
    o = dataclasses.replace(_quiet(7.0), **obs_kw)
    st, r = badis.step(st, o, _probe_params())
    assert r.probe_kb is None and st.probe_pinned_kb is None


def test_a_probe_over_a_held_demand_goes_one_step_below_it():
    # stop 83, probe_over_demand: the max-average holds the demand at 700
    # MiB over a 500 MiB estimate (a hot set that moves is sampled twice
    # at each move, and the peak stays for a time slice)
    st = _probe_state(recent=(700 * MiB,) * 4)
    _, r = badis.step(st, _quiet(7.0), _probe_params())
    assert r.probe_kb is None                       # off: no probe
    st, r = badis.step(st, _quiet(7.0),
                       _probe_params(probe_over_demand=True))
    # one step (32 MiB) below the demand (the moving average with this
    # round's 500 MiB: 660 MiB), not below the estimate
    assert r.probe_kb == 628 * MiB and st.probe_pinned_kb == 168 * MiB
    assert st.probe_from_kb == 660 * MiB
    assert r.wss.wss_kb == 500 * MiB and st.pinned_kb == 200 * MiB
    # a settled demand probes below the estimate, as without the option
    st, r = badis.step(_probe_state(), _quiet(7.0),
                       _probe_params(probe_over_demand=True))
    assert r.probe_kb == 468 * MiB


# (events after the start at t = 7 s: (t, m_cur MiB, evicted KiB,
# swapping)) -> the correction after the 3 s window, the next wait
@pytest.mark.parametrize('rounds, pinned_mib, wait', [
    # the guest evicted below the estimate, no swap-ins: lower kept
    ([(8.0, 468, 4 * MiB, False), (10.0, 468, 0, False)], 168, 1),
    # swap-ins: the correction was needed; kept, the next waits twice
    ([(8.0, 468, 4 * MiB, False), (9.0, 468, 0, True)], 200, 2),
    # no evictions (free memory, or the balloon did not move): kept
    ([(8.0, 468, 0, False), (10.0, 468, 0, False)], 200, 2),
    # evictions, but not below the estimate it started from: kept
    ([(8.0, 520, 4 * MiB, False), (10.0, 520, 0, False)], 200, 2),
])
def test_probe_outcome(rounds, pinned_mib, wait):
    params = _probe_params()
    st, _ = _start_probe(params)
    probes = []
    for t, m_cur, evicted, swapping in rounds:
        o = badis.Observation(
            timestamp=t, m_cur_kb=m_cur * MiB, booked_kb=BOOKED,
            sampled=sampled(300 * MiB), ghost=(geiger((m_cur + 20) * MiB)
                                               if swapping else None),
            swapping=swapping, steady=False, evicted_kb=evicted)
        st, r = badis.step(st, o, params)
        probes.append(r.probe_kb)
        # the estimate is never lowered by the probe itself
        assert r.pinned_kb in (200 * MiB, pinned_mib * MiB)
    assert st.pinned_kb == pinned_mib * MiB
    assert st.probe_pinned_kb is None and st.probe_wait == wait
    assert probes[-1] is None                      # the probe has ended
    if not rounds[-1][3]:
        assert probes[0] == 468 * MiB              # held while it ran
    if pinned_mib != 200:
        assert st.pinned_note.startswith('lowered by a balloon probe')
        assert st.pinned_at == rounds[-1][0]


# stop 91 (stop 90's CI, TCG, load_idle from a loaded start): a probe
# asked 69 MiB, the balloon stopped at 96 and the correction went to the
# probe's, 23 MiB under what the guest lived at
@pytest.mark.parametrize('on, m_cur_mib, pinned_mib', [
    (True, 480, 180),       # stopped 12 MiB short: lowered by 20 MiB
    (False, 480, 168),      # off: to the correction tested
    (True, 468, 168),       # got there: to the correction tested
    (True, 469, 168),       # within the balloon's slack of it
])
def test_a_probe_lowers_the_correction_as_far_as_the_balloon_got(
        on, m_cur_mib, pinned_mib):
    params = _probe_params(probe_lowers_to_reached=on)
    st, _ = _start_probe(params)
    assert st.probe_size_kb == 468 * MiB and st.probe_from_kb == 500 * MiB
    for t, evicted in ((8.0, 4 * MiB), (10.0, 0)):
        o = badis.Observation(
            timestamp=t, m_cur_kb=m_cur_mib * MiB, booked_kb=BOOKED,
            sampled=sampled(300 * MiB), steady=False, evicted_kb=evicted)
        st, r = badis.step(st, o, params)
    assert st.probe_pinned_kb is None and st.pinned_kb == pinned_mib * MiB
    assert st.probe_wait == 1
    if on and m_cur_mib == 480:
        assert any('evicted at a balloon of 480 MiB (asked 468 MiB)' in e
                   for e in r.events), r.events


@pytest.mark.parametrize('on, pinned_mib', [(True, 160), (False, 168)])
def test_a_probe_never_raises_a_correction_lowered_while_it_ran(
        on, pinned_mib):
    # a bound took the correction under the one the probe tests while it
    # ran: its end keeps the lower one (off: the probe's, a raise)
    params = _probe_params(probe_lowers_to_reached=on)
    st, _ = _start_probe(params)
    st = dataclasses.replace(st, pinned_kb=160 * MiB)
    for t, evicted in ((8.0, 4 * MiB), (10.0, 0)):
        o = badis.Observation(
            timestamp=t, m_cur_kb=468 * MiB, booked_kb=BOOKED,
            sampled=sampled(300 * MiB), steady=False, evicted_kb=evicted)
        st, r = badis.step(st, o, params)
    assert st.probe_pinned_kb is None and st.pinned_kb == pinned_mib * MiB
    if on:
        assert any('the correction already at 160 MiB' in e
                   for e in r.events), r.events


# stop 70 (TCG, badis69 r2): after a probe answered by its burst the
# guest held 85-92 MiB of swap cache, gave it up to the next probes with
# no swap-out, and they read "no evictions"
@pytest.mark.parametrize('evidence, start_kb, end_kb, pinned_mib', [
    (True, 530 * MiB, 522 * MiB, 168),      # gave up 8 MiB: lowered
    (False, 530 * MiB, 522 * MiB, 200),     # option off: swap-outs only
    (True, 530 * MiB, 529 * MiB, 200),      # within the statistics' slack
    (True, None, 522 * MiB, 200),           # unknown when it began
    (True, 530 * MiB, None, 200),           # unknown at its end
])
def test_a_probe_counts_memory_in_use_given_up_without_swap_outs(
        evidence, start_kb, end_kb, pinned_mib):
    params = _probe_params(probe_in_use_evidence=evidence)
    st, r = badis.step(_probe_state(), _quiet(7.0, in_use_kb=start_kb),
                       params)
    assert r.probe_kb == 468 * MiB and st.probe_in_use_kb == start_kb
    for t, in_use in ((8.0, start_kb), (10.0, end_kb)):
        o = badis.Observation(timestamp=t, m_cur_kb=468 * MiB,
                              booked_kb=BOOKED, sampled=sampled(300 * MiB),
                              steady=False, in_use_kb=in_use)
        st, r = badis.step(st, o, params)
    assert st.probe_pinned_kb is None and st.pinned_kb == pinned_mib * MiB
    assert st.probe_in_use_kb is None
    if pinned_mib != 200:
        assert st.probe_wait == 1
        assert any('giving up 8 MiB of memory in use, 0 MiB of it written '
                   'to swap, without swap-ins' in e for e in r.events)
    else:
        assert st.probe_wait == 2
        assert any('no evictions' in e for e in r.events)


@pytest.mark.parametrize('rebase', [False, True])
def test_a_probe_that_lowers_the_correction_rebases_the_averages(rebase):
    # stop 53 (TCG, badis41): after each probe that lowered a cold
    # correction the balloon went back up by the drop, on the estimates
    # the max-average still held from before it
    params = _probe_params(pinned_drop_rebase=rebase)
    st, _ = _start_probe(params)
    before = st.recent
    for t, evicted in ((8.0, 4 * MiB), (10.0, 0)):
        o = badis.Observation(timestamp=t, m_cur_kb=468 * MiB,
                              booked_kb=BOOKED, sampled=sampled(300 * MiB),
                              steady=False, evicted_kb=evicted)
        st, r = badis.step(st, o, params)
    assert st.pinned_kb == 168 * MiB               # 32 MiB lowered
    lowered = any(e == 'moving average lowered by 32 MiB with the '
                  'correction' for e in r.events)
    if rebase:
        assert lowered
        # every estimate held was 500 MiB with the old correction
        assert set(st.recent) == {468 * MiB}
        assert {a for _, a in st.window} == {468 * MiB}
        # this round asks for the size the probe proved, not 500 MiB
        assert r.demand_kb == 468 * MiB
    else:
        assert not lowered
        assert max(st.recent) == 500 * MiB and len(st.recent) > len(before)
        assert r.demand_kb == 500 * MiB


def _next_probe_at(params, answered=False):
    """When the probe after a first one (started at 7 s, its window over
    at 10 s: lowered the correction, or ``answered`` by swap-ins at 9 s)
    starts, quiet rounds every second from 11 s (None: not by 30 s)."""
    st, _ = _start_probe(params)
    rounds = ((8.0, 4 * MiB, False), (9.0, 0, True)) if answered else (
        (8.0, 4 * MiB, False), (10.0, 0, False))
    for t, evicted, swapping in rounds:
        o = badis.Observation(
            timestamp=t, m_cur_kb=468 * MiB, booked_kb=BOOKED,
            sampled=sampled(300 * MiB), steady=False, evicted_kb=evicted,
            swapping=swapping,
            ghost=geiger(488 * MiB) if swapping else None)
        st, r = badis.step(st, o, params)
    assert st.probe_pinned_kb is None
    for t in range(11, 31):
        st, r = badis.step(st, _quiet(float(t)), params)
        if r.probe_kb is not None:
            return t
    return None


@pytest.mark.parametrize('kw, at', [
    # the wait after a probe: time_slice + shrink_swapin_window (7 s)
    (dict(pinned_drop_rebase=True, probe_chain=False), 17),
    (dict(pinned_drop_rebase=False, probe_chain=True), 17),  # needs both
    # chained: one shrink_swapin_window after the probe that lowered it
    (dict(pinned_drop_rebase=True, probe_chain=True), 13),
])
def test_a_probe_that_lowered_the_correction_chains_the_next(kw, at):
    assert _next_probe_at(_probe_params(**kw)) == at


def test_a_probe_answered_by_swap_ins_breaks_the_chain():
    # the correction was needed: the next waits twice time_slice +
    # shrink_swapin_window from the swap activity, chained or not
    for chain in (False, True):
        params = _probe_params(pinned_drop_rebase=True, probe_chain=chain)
        assert _next_probe_at(params, answered=True) == 23


def test_rebase_estimates_moves_both_ways_within_the_booking():
    recent, window = badis.rebase_estimates(
        (100, 200), ((1.0, 150), (2.0, 30)), -50, 220)
    assert recent == (50, 150) and window == ((1.0, 100), (2.0, 0))
    # not below this round's estimate unless there already
    recent, window = badis.rebase_estimates(
        (100, 200, 170), ((1.0, 150),), -50, 220, low_kb=160)
    assert recent == (100, 160, 160) and window == ((1.0, 150),)
    recent, window = badis.rebase_estimates((100, 200), ((1.0, 150),), 40,
                                            220)
    assert recent == (140, 220) and window == ((1.0, 190),)


def test_a_decayed_correction_does_not_rebase():
    # a decay is a guess, not evidence: the averages keep their estimates
    params = _params(pinned_drop_rebase=True)
    st = badis.BadisState(pinned_kb=300 * MiB, pinned_at=0.0,
                          pinned_note='calibrated', recent=(600 * MiB,) * 3)
    for t in range(1, 40):
        before = st.pinned_kb
        st, r = badis.step(st, _quiet(float(t)), params)
        if st.pinned_kb < before:
            break
    assert st.pinned_kb < 300 * MiB
    assert st.pinned_note.startswith('decayed')
    assert not any(e.startswith('moving average lowered') for e in r.events)


def test_probe_walks_a_cold_correction_down_to_its_floor():
    # load-then-idle: 200 MiB counted as pinned, 72 MiB really pinned;
    # every probe finds the guest evicting cold data without swap-ins
    params = _probe_params()
    st = _probe_state()
    t, seen = 7.0, [st.pinned_kb]
    for _ in range(200):         # about 10 s per step (3 s + 7 s wait)
        o = _quiet(t)
        if st.probe_pinned_kb is not None:
            o = dataclasses.replace(o, m_cur_kb=st.probe_size_kb,
                                    evicted_kb=MiB, steady=False)
        st, r = badis.step(st, o, params)
        seen.append(st.pinned_kb)
        t += 1.0
    assert st.pinned_kb == 72 * MiB
    assert seen == sorted(seen, reverse=True)      # never rose


# -- stop 35: the probe for an unconfirmed calibration (calibration_probe) --

def _calibration_params(**kw):
    # every gap probed (calibration_probe_min_fraction: the gaps here are
    # 128 MiB of a 2000 MiB booking, under the default's 0.15)
    kw.setdefault('calibration_probe_min_fraction', 0.0)
    return _probe_params(pinned_probe=False, calibration_probe=True, **kw)


def _walk(st, params, rounds, answer, seen=None):
    """``rounds`` 1 s rounds from t = 7 s, quiet at 1000 MiB sampled 300
    MiB; while a probe runs, its balloon size and ``answer``:
    'evict' (cold data given up) or 'swap' (the pages were needed), or
    a function of the round's time giving one of them.
    ``seen``: a list to which each new correction (MiB) is appended."""
    t = 7.0
    for _ in range(rounds):
        if seen is not None and (not seen or
                                 seen[-1] != st.pinned_kb // MiB):
            seen.append(st.pinned_kb // MiB)
        o = _quiet(t)
        if st.probe_pinned_kb is not None:
            o = dataclasses.replace(o, m_cur_kb=st.probe_size_kb,
                                    evicted_kb=MiB, steady=False)
            if (answer(t) if callable(answer) else answer) == 'swap':
                o = dataclasses.replace(o, swapping=True,
                                        ghost=geiger(st.probe_from_kb))
        st, _ = badis.step(st, o, params)
        t += 1.0
    return st


@pytest.mark.parametrize('early, at', [(False, 7), (True, 3)])
def test_the_first_calibration_probe_waits_a_window_when_early(early, at):
    # calibration_probe_early: every estimate the max-average holds
    # carries the calibration, so the first probe waits the read-back
    # window (3 s here) after it, not a time slice more (7 s); at
    # production's clock, 3 minutes instead of 63
    params = _calibration_params(calibration_probe_early=early)
    for t in range(1, 10):
        st, r = badis.step(_probe_state(pinned_unconfirmed=True),
                           _quiet(float(t)), params)
        if r.probe_kb is not None:
            break
    assert t == at


def test_an_early_first_probe_leaves_the_later_waits_alone():
    # after a first probe answered by swap-ins the wait doubles as
    # before: twice time_slice + shrink_swapin_window from the swap-ins
    params = _calibration_params(calibration_probe_early=True,
                                 pinned_drop_rebase=True)
    assert _next_probe_at(params, answered=True) == 23


def test_calibration_probe_walks_a_cold_calibration_down():
    # load_idle from boot: the calibration counted 128 MiB of loaded,
    # cold data as pinned; the probe gives it back step by step
    params = _calibration_params()
    st = _probe_state(pinned_unconfirmed=True, pinned_calibrated_kb=200 * MiB)
    seen = []
    st = _walk(st, params, 200, 'evict', seen)
    # the smallest step first, doubled after each that lowered it
    assert seen == [200, 184, 152, 88, 72]
    # the calibration no longer floors the cap of pinned_used_bound
    assert st.pinned_calibrated_kb == 0
    assert st.pinned_note.startswith('lowered by a balloon probe')


@pytest.mark.parametrize('reprobe', [False, True])
def test_a_probe_answered_while_settling_is_not_for_good(reprobe):
    # TCG, load-then-idle from boot (badis38): the first probe came while
    # the guest finished loading and was answered by swap-ins; the cold
    # data stays out after that
    params = _calibration_params(calibration_reprobe=reprobe)
    st = _probe_state(pinned_unconfirmed=True, pinned_calibrated_kb=200 * MiB)
    seen = []
    st = _walk(st, params, 300,
               lambda t: 'swap' if t < 12 else 'evict', seen)
    if reprobe:
        # probed again after twice the wait, from the smallest step
        assert seen[:3] == [200, 184, 152] and seen[-1] == 72
    else:
        assert seen == [200] and not st.pinned_unconfirmed


def _answered_starts(params, rounds, sampled_mib=lambda t: 300):
    """Probe starts in ``rounds`` 1 s rounds from t = 7 s, every probe
    answered by swap-ins, sampled ``sampled_mib(t)``."""
    st = _probe_state(pinned_unconfirmed=True, pinned_calibrated_kb=200 * MiB)
    starts = []
    for i in range(rounds):
        t = 7.0 + i
        running = st.probe_pinned_kb is not None
        o = _quiet(t, s_kb=sampled_mib(t) * MiB)
        if running:
            o = dataclasses.replace(o, m_cur_kb=st.probe_size_kb,
                                    evicted_kb=MiB, steady=False,
                                    swapping=True,
                                    ghost=geiger(st.probe_from_kb))
        st, _ = badis.step(st, o, params)
        if not running and st.probe_pinned_kb is not None:
            starts.append(t)
    return st, starts


def test_reprobing_a_right_correction_backs_off():
    # every probe answered by swap-ins: each waits twice as long as the
    # last (7 s units here), so 300 s hold five probes, not 40 (with no
    # limit on answers in a row: calibration_reprobe_answers=0)
    st, starts = _answered_starts(
        _calibration_params(calibration_reprobe=True,
                            calibration_reprobe_answers=0), 300)
    assert len(starts) == 5 and st.pinned_kb == 200 * MiB
    assert st.probe_wait == 16


def test_reprobing_stops_after_answers_until_the_sample_falls():
    # calibration_reprobe_answers: two probes in a row answered at the
    # same correction under the same sample, and no third (Zipf 0.8 on
    # the paged guest model: each cost 14 MiB of read-backs)
    params = _calibration_params(calibration_reprobe=True,
                                 calibration_reprobe_answers=2)
    st, starts = _answered_starts(params, 300)
    assert len(starts) == 2 and st.probe_answers == 2
    assert st.pinned_kb == 200 * MiB
    # (0, no limit: five, test_reprobing_a_right_correction_backs_off)
    # a sample that fell by less than a step (16 MiB) is the same test
    st, starts = _answered_starts(params, 300,
                                  lambda t: 300 if t < 100 else 290)
    assert len(starts) == 2
    # by a step or more, data went cold since: probed again
    st, starts = _answered_starts(params, 300,
                                  lambda t: 300 if t < 100 else 280)
    assert len(starts) == 3 and starts[-1] >= 100


def test_calibration_probe_steps_capped_at_half_the_gap_bisect():
    # calibration_probe_max_gap_fraction: the doubled step (64 MiB at
    # 152) is cut to half of what is left above the floor, so no probe
    # goes further below the need than half the gap
    params = _calibration_params(calibration_probe_max_gap_fraction=0.5)
    st = _probe_state(pinned_unconfirmed=True, pinned_calibrated_kb=200 * MiB)
    seen = []
    _walk(st, params, 300, 'evict', seen)
    assert seen == [200, 184, 152, 112, 92, 76, 72]
    with pytest.raises(ValueError):
        badis.BadisParams(calibration_probe_max_gap_fraction=0)


def _warm_walk(params, warm_mib, rounds=200, sampled_mib=lambda t: 300,
               slope_kb_s=None):
    """A cold calibration walked down by probes (the guest evicts and
    reads nothing back) with ``calibration_probe_warm_rounds``: whenever
    Badis asks for a read over rounds, the next round is that read's
    last, which saw ``warm_mib`` (or ``warm_mib(t)``) touched beyond its
    first round; sampled ``sampled_mib(t)``.
    (state, corrections seen in MiB, probe start times, probes spared)"""
    st = _probe_state(pinned_unconfirmed=True, pinned_calibrated_kb=200 * MiB)
    seen, started, spared = [200], [], 0
    t = 7.0
    for _ in range(rounds):
        o = _quiet(t, s_kb=sampled_mib(t) * MiB, can_read_warm=True)
        if st.warm_wanted:
            warm = warm_mib(t) if callable(warm_mib) else warm_mib
            slope = slope_kb_s(t) if callable(slope_kb_s) else slope_kb_s
            o = dataclasses.replace(o, sampled=None, warm_kb=warm * MiB,
                                    warm_slope_kb_s=slope)
        elif st.probe_pinned_kb is not None:
            o = dataclasses.replace(o, m_cur_kb=st.probe_size_kb,
                                    evicted_kb=MiB, steady=False)
        running = st.probe_pinned_kb is not None
        st, r = badis.step(st, o, params)
        if not running and st.probe_pinned_kb is not None:
            started.append(t)
        spared += any(e.startswith('no balloon probe') for e in r.events)
        if seen[-1] != st.pinned_kb // MiB:
            seen.append(st.pinned_kb // MiB)
        t += 1.0
    return st, seen, started, spared


@pytest.mark.parametrize('warm_mib, last_mib', [
    (0, 72),        # nothing touched: walked down to the floor as before
    (40, 112),      # 40 MiB touched within the read: not probed below
    # 24 MiB left above: one 16 MiB step, then 8 MiB left is less than
    # the smallest step (pinned_probe_step_kb) and not probed
    (104, 184),
])
def test_a_read_over_rounds_keeps_the_touched_part(warm_mib, last_mib):
    # calibration_probe_warm_rounds (stop 61): the part of the correction
    # the guest touches less often than once a round (a Zipf tail) is not
    # probed; what no round touches (cold data) still is
    params = _calibration_params(calibration_probe_warm_rounds=4)
    st, seen, started, _ = _warm_walk(params, warm_mib)
    assert seen[-1] == last_mib and min(seen) == last_mib
    assert started


@pytest.mark.parametrize('slope_kb_s, on, last_mib', [
    (None, True, 72),       # no slope known: as before
    (512, True, 72),        # under the 1 MiB/s bound: walked down
    (2048, True, 200),      # over it: no probe at all
    (2048, False, 72),      # the option off
])
def test_a_read_still_finding_memory_spares_the_probe(slope_kb_s, on,
                                                      last_mib):
    # calibration_probe_warm_slope (stop 62): nothing touched beyond the
    # first round left to spare, but new memory found at the read's end
    # faster than swapin_bound_kb_s: the correction is in use
    params = _calibration_params(calibration_probe_warm_rounds=4,
                                 calibration_probe_warm_slope=on,
                                 calibration_probe_warm_budget=False)
    st, seen, started, spared = _warm_walk(params, 0,
                                           slope_kb_s=slope_kb_s)
    assert seen[-1] == last_mib
    assert bool(started) == (last_mib < 200)
    assert bool(spared) == (last_mib == 200)


@pytest.mark.parametrize('slope_mib_s, least, seen_mib', [
    # 128 MiB untouched read at 2 MiB/s: 64 MiB of it read back at the
    # 1 MiB/s bound; the doubling steps 16, 32, then cut to the 16 left
    (2, 0.0, [200, 184, 152, 136]),
    # at 8 MiB/s, 16 MiB: one step
    (8, 0.0, [200, 184]),
    # ... and none when less than calibration_probe_min_fraction of the
    # booking (1000 MiB here) is left of it
    (8, 0.02, [200]),
    # at 1 MiB/s or less, all of it (to the floor, 72 MiB)
    (1, 0.0, [200, 184, 152, 88, 72]),
])
def test_a_read_budgets_what_the_probes_may_give_up(slope_mib_s, least,
                                                    seen_mib):
    # calibration_probe_warm_budget (stop 90): the read's slope prices
    # giving up everything it did not see touched; the series after it
    # gives up what is read back at the bound. The later reads see the
    # evicted memory come back (their slope is far above the bound), so
    # no second series here.
    params = _calibration_params(calibration_probe_warm_rounds=4,
                                 calibration_probe_min_fraction=least,
                                 calibration_probe_warm_budget=True)
    first = []

    def slope(t):
        first.append(t)
        return slope_mib_s * MiB if len(first) == 1 else 1e9

    st, seen, started, spared = _warm_walk(params, 0, slope_kb_s=slope)
    assert seen == seen_mib
    assert bool(spared) == (slope_mib_s > 1)
    assert badis.warm_budget_kb(128 * MiB, 2 * MiB, MiB) == 64 * MiB
    assert badis.warm_budget_kb(128 * MiB, 0, MiB) == 128 * MiB
    assert badis.warm_budget_kb(128 * MiB, MiB // 2, MiB) == 128 * MiB


def test_a_read_over_rounds_that_sees_it_all_spares_the_probe():
    # the whole correction above its floor touched within the read (the
    # paged guest model, Zipf 0.8: every probe read back, 14 MiB each):
    # no probe, and the next decision waits twice as long each time
    params = _calibration_params(calibration_probe_warm_rounds=4,
                                 calibration_probe_min_fraction=0.05)
    st, seen, started, spared = _warm_walk(params, 128, rounds=300)
    assert seen == [200] and not started
    assert 2 <= spared <= 6 and st.probe_wait == 16
    with pytest.raises(ValueError):
        badis.BadisParams(calibration_probe_warm_rounds=1)


def test_a_read_is_used_up_only_by_a_probe_that_starts():
    # a probe the hindsight floor refuses (above_kb) leaves the read for
    # the next round; before, each refusal sent for a new read of four
    # rounds (TCG, load-then-idle: three reads in a row, badis51)
    params = _calibration_params(calibration_probe_warm_rounds=4)
    st = _probe_state(pinned_unconfirmed=True, pinned_calibrated_kb=200 * MiB,
                      warm_kb=0, warm_at=6.0, warm_fresh=True)
    o = _quiet(7.0, can_read_warm=True)
    wss = sampled(500 * MiB)
    refused = badis._probe(st, o, params, wss, Mode.V, False, 200 * MiB,
                           500 * MiB, above_kb=500 * MiB - 8 * MiB)
    assert refused.probe_kb is None
    assert refused.fields['warm_fresh'] and not refused.fields['warm_wanted']
    started = badis._probe(st, o, params, wss, Mode.V, False, 200 * MiB,
                           500 * MiB)
    assert started.probe_kb is not None
    assert not started.fields['warm_fresh']


def test_a_fall_after_a_spared_probe_reads_again_at_once():
    # what the read saw touched went cold with a fall of the working set
    # (a sweep's step down; the paged guest model at 512 MiB, W2 and W4):
    # a fall of the sampled part by a step (16 MiB) brings the next read
    # and decision without waiting out the doubled wait (7 s x 16 here)
    params = _calibration_params(calibration_probe_warm_rounds=4,
                                 calibration_probe_min_fraction=0.05)
    st, seen, started, spared = _warm_walk(
        params, lambda t: 128 if t < 150 else 0, rounds=200,
        sampled_mib=lambda t: 300 if t < 150 else 280)
    assert started and 150 <= started[0] <= 160
    assert min(seen) < 200
    # by less than a step: the same conditions, the doubled wait holds
    st, seen, started, spared = _warm_walk(
        params, lambda t: 128 if t < 150 else 0, rounds=200,
        sampled_mib=lambda t: 300 if t < 150 else 290)
    assert not started or started[0] > 170


@pytest.mark.parametrize('used_mib, size_mib, low_mib', [
    (None, 484, 184),       # unknown: one step below the estimate
    # uses more than the estimate: one step under what it uses, at most
    # the allocation the lower correction would be given (484 MiB and 32
    # of headroom; probe_evicts_one_step, stop 90)
    (600, 516, 184),
    (510, 494, 184),
    (450, 434, 134),        # free memory: one step below what it uses
    (300, 372, 72),         # not below the correction's floor
])
def test_a_probe_goes_below_what_the_guest_uses(used_mib, size_mib,
                                                low_mib):
    # stop 36, TCG: 4 MiB probes above what a load-then-idle guest used
    # evicted nothing and kept a cold 140 MiB counted as pinned
    params = _calibration_params()
    st = _probe_state(pinned_unconfirmed=True, pinned_calibrated_kb=200 * MiB)
    used = used_mib * MiB if used_mib is not None else None
    st, r = badis.step(st, _quiet(7.0, used_kb=used), params)
    assert r.probe_kb == size_mib * MiB
    assert st.probe_pinned_kb == low_mib * MiB
    assert r.wss.wss_kb == 500 * MiB            # the estimate is kept
    # the guest gave up cold pages there without reading them back
    for t in (8.0, 11.0):
        o = dataclasses.replace(_quiet(t), m_cur_kb=size_mib * MiB,
                                evicted_kb=MiB, steady=False)
        st, r = badis.step(st, o, params)
    assert st.pinned_kb == low_mib * MiB


def test_a_probe_sized_on_what_the_guest_uses_stopping_short():
    # the probe asked the lower correction's allocation (484 MiB and its
    # headroom: 516) of a guest using 600; the guest evicted there, and
    # the balloon ended the window 8 MiB above it (given back): the
    # correction is lowered by 8 MiB less than tested, not measured from
    # the estimate (524 is above the 500 MiB estimate: nothing lowered)
    params = _calibration_params()
    st = _probe_state(pinned_unconfirmed=True, pinned_calibrated_kb=200 * MiB)
    st, r = badis.step(st, _quiet(7.0, used_kb=600 * MiB), params)
    assert r.probe_kb == 516 * MiB and st.probe_pinned_kb == 184 * MiB
    for t, m_cur in ((8.0, 516), (11.0, 524)):
        o = dataclasses.replace(_quiet(t), m_cur_kb=m_cur * MiB,
                                evicted_kb=MiB, steady=False)
        st, r = badis.step(st, o, params)
    assert st.pinned_kb == 192 * MiB
    assert any('evicted at a balloon of 524 MiB (asked 516 MiB)' in e
               for e in r.events), r.events


def test_calibration_probe_stops_once_swap_ins_confirm_it():
    # without calibration_reprobe (on by default since stop 51)
    params = _calibration_params(calibration_reprobe=False)
    st = _probe_state(pinned_unconfirmed=True, pinned_calibrated_kb=200 * MiB)
    st = _walk(st, params, 12, 'swap')           # one probe, answered
    assert st.pinned_kb == 200 * MiB and not st.pinned_unconfirmed
    starts = 0
    for t in range(20, 400):
        st, r = badis.step(st, _quiet(float(t)), params)
        starts += r.probe_kb is not None
    assert starts == 0                           # never again


# -- stop 44: a probe answered by what the guest reads back, not by its
# first page (probe_readback_fraction) --

def _probe_rounds(params, rounds):
    """A calibration probe started at t = 7 s, then ``rounds`` of
    (t, swapin_kb, evicted_kb) at the probe's balloon size: the state
    after them and the rounds' results."""
    st = _probe_state(pinned_unconfirmed=True, pinned_calibrated_kb=200 * MiB)
    st, r = badis.step(st, _quiet(7.0), params)
    size, results = st.probe_size_kb, []
    for t, read, out in rounds:
        o = badis.Observation(
            timestamp=t, m_cur_kb=size, booked_kb=BOOKED,
            sampled=sampled(300 * MiB), swapping=read > 0,
            ghost=geiger(st.probe_from_kb) if read else None,
            swapin_kb=read, evicted_kb=out, steady=False)
        st, r = badis.step(st, o, params)
        results.append(r)
    return st, results


def _probe_ended(params, rounds, pinned_mib, confirmed):
    """:func:`_probe_rounds`, then: the probe has ended with the
    correction at ``pinned_mib``, confirmed by swap-ins or not."""
    st, results = _probe_rounds(params, rounds)
    assert st.pinned_kb == pinned_mib * MiB
    assert st.pinned_unconfirmed is not confirmed
    assert st.probe_pinned_kb is None
    return st, results


@pytest.mark.parametrize('fraction, rounds, pinned_mib, confirmed', [
    # off: the first page read back keeps the correction for good
    (0.0, [(8.0, 3 * MiB, 26 * MiB), (11.0, 0, 0)], 200, True),
    # cold data: 3 of the 26 MiB evicted came back; lowered by a step
    (0.25, [(8.0, 3 * MiB, 26 * MiB), (11.0, 0, 0)], 184, False),
    # hot pages: 8 of 21 MiB in the first round, the rest the next
    (0.25, [(8.0, 8 * MiB, 21 * MiB), (9.0, 8 * MiB, 0)], 200, True),
    # reaching the fraction over two rounds answers it as well
    (0.25, [(8.0, 2 * MiB, 16 * MiB), (9.0, 3 * MiB, 4 * MiB)], 200, True),
    # read-back with no eviction counted: answered (as before)
    (0.25, [(8.0, 1 * MiB, 0)], 200, True),
])
def test_a_probe_is_answered_by_what_the_guest_reads_back(
        fraction, rounds, pinned_mib, confirmed):
    params = _calibration_params(probe_readback_fraction=fraction)
    st, results = _probe_ended(params, rounds, pinned_mib, confirmed)
    assert st.probe_in_kb == st.probe_out_kb == 0
    for r in results[:-1]:
        # while it runs, its swap activity is not a shortage
        assert r.mode is Mode.V and r.wss.wss_kb == 500 * MiB
    if not confirmed:
        assert 'reading back 3 MiB of the 26 MiB' in st.pinned_note


def test_probe_answered_bounds():
    params = _calibration_params(probe_readback_fraction=0.5)
    assert badis.probe_answered(5, 10, params)
    assert not badis.probe_answered(4, 10, params)
    assert badis.probe_answered(1, 0, params)
    # probe_answer_rate: over swapin_bound_kb_s (1 MiB/s) since it began
    rate = _calibration_params(probe_readback_fraction=0.5,
                               probe_answer_rate=True)
    assert badis.probe_answered(5 * MiB, 10 * MiB, rate, 4.0)
    assert not badis.probe_answered(4 * MiB, 4 * MiB, rate, 4.0)
    assert badis.probe_answered(4 * MiB, 4 * MiB, rate)   # time unknown
    with pytest.raises(ValueError):
        _calibration_params(probe_readback_fraction=1.5)


# stop 83: probe_answer_rate; the probe starts at 7 s, the bound is
# 1 MiB/s (a hot set that moves reads its new pages back whatever the
# balloon: the probe's window over a move is no answer)
@pytest.mark.parametrize('on, rounds, pinned_mib, confirmed', [
    # off: the first read-back answers it
    (False, [(8.0, MiB // 2, 26 * MiB), (10.0, MiB, 0)], 200, True),
    # on: 1.5 MiB in 3 s, under the bound: lived through, lowered
    (True, [(8.0, MiB // 2, 26 * MiB), (10.0, MiB, 0)], 184, False),
    # on: 4 MiB in its first second, over the bound: answered
    (True, [(8.0, 4 * MiB, 26 * MiB), (10.0, 0, 0)], 200, True),
    # on: the rate counts from the probe's start, not from a quiet spell
    (True, [(8.0, 0, 26 * MiB), (9.0, 2500 * 1024, 0), (10.0, 0, 0)],
     200, True),
])
def test_a_probe_is_answered_by_a_read_back_faster_than_the_bound(
        on, rounds, pinned_mib, confirmed):
    params = _calibration_params(probe_readback_fraction=0.0,
                                 probe_answer_rate=on)
    st, _ = _probe_ended(params, rounds, pinned_mib, confirmed)
    if not confirmed:
        assert 'reading back 1536 KiB of the 26 MiB' in st.pinned_note


# -- stop 68: the blind first reclaim after a load (probe_burst_s) and
# what the probe made the guest write (probe_rise_written) --

@pytest.mark.parametrize('burst, rounds, pinned_mib, confirmed', [
    # default: the burst of the first round answers it
    (0.0, [(8.0, 10 * MiB, 20 * MiB), (9.0, 0, 0), (11.0, 0, 0)], 200,
     True),
    # one burst, then quiet at the probe's size: lowered by a step
    (1.5, [(8.0, 10 * MiB, 20 * MiB), (9.0, 0, 0), (11.0, 0, 0)], 184,
     False),
    # read-backs within the burst do not answer it, past it they do
    (1.5, [(8.0, 10 * MiB, 20 * MiB), (9.0, 2 * MiB, 0),
           (9.5, 2 * MiB, 0)], 200, True),
    # nor is a correction lowered while the guest still reads back in
    # the probe's last round
    (5.0, [(8.0, 10 * MiB, 20 * MiB), (10.0, 1 * MiB, 0)], 200, True),
])
def test_a_probe_outlives_the_first_reclaims_burst(
        burst, rounds, pinned_mib, confirmed):
    params = _calibration_params(probe_burst_s=burst)
    st, results = _probe_ended(params, rounds, pinned_mib, confirmed)
    assert st.probe_swap_at is None
    # the burst is the probe's: not a shortage
    assert results[0].mode is Mode.V
    assert results[0].wss.wss_kb == 500 * MiB
    if not confirmed:
        assert 'reading back 10 MiB of the 20 MiB' in st.pinned_note
    with pytest.raises(ValueError):
        _calibration_params(probe_burst_s=-1)


def test_only_the_guests_first_reclaim_gets_a_burst():
    # a guest that has evicted before: its accessed bits tell hot from
    # cold, and the probe's first swap-in answers it
    params = _calibration_params(probe_burst_s=1.5)
    st = _probe_state(pinned_unconfirmed=True,
                      pinned_calibrated_kb=200 * MiB, evicted_once=True)
    st, _ = badis.step(st, _quiet(7.0), params)
    assert st.probe_pinned_kb is not None and not st.probe_blind
    o = badis.Observation(
        timestamp=8.0, m_cur_kb=st.probe_size_kb, booked_kb=BOOKED,
        sampled=sampled(300 * MiB), swapping=True, ghost=geiger(500 * MiB),
        swapin_kb=10 * MiB, evicted_kb=20 * MiB, steady=False)
    st, _ = badis.step(st, o, params)
    assert st.probe_pinned_kb is None and st.pinned_kb == 200 * MiB
    # and the first eviction is remembered
    st2, _ = badis.step(_probe_state(), dataclasses.replace(
        _quiet(7.0), evicted_kb=4 * MiB), params)
    assert st2.evicted_once


@pytest.mark.parametrize('written, rise', [(False, True), (True, False)])
def test_a_probe_reads_its_own_evictions_reuse_distances(written, rise):
    """TCG, slow hot set: the balloon 14 MiB above the estimate, a 4 MiB
    probe step, the guest wrote 57 MiB and read back 40 of them in the
    probe's first round; Geiger's WSS (the allocation plus the reuse
    distances) read above the estimate plus the step, so the round was
    taken for a rise: V -> VG, a floor, a bad shrink beside the probe."""
    params = _calibration_params(probe_rise_written=written,
                                 probe_burst_s=2.0)
    st = _probe_state(pinned_unconfirmed=True,
                      pinned_calibrated_kb=200 * MiB)
    st, _ = badis.step(st, _quiet(7.0), params)
    size = st.probe_size_kb
    o = badis.Observation(
        timestamp=8.0, m_cur_kb=size, booked_kb=BOOKED,
        sampled=sampled(300 * MiB), swapping=True,
        ghost=geiger(size + 50 * MiB), swapin_kb=40 * MiB,
        evicted_kb=57 * MiB, steady=False)
    st, r = badis.step(st, o, params)
    assert (r.mode is not Mode.V) is rise
    # the probe's own doing: the estimate stays where the probe began
    assert (r.wss.wss_kb == 500 * MiB) is not rise


@pytest.mark.parametrize('answer, released',
                         [('evict', True), ('swap', False)])
def test_a_probe_below_a_shrink_floor_tests_the_floor_too(answer, released):
    # TCG, load_idle from boot (stop 36): a floor set while the guest
    # loaded its data held the balloon, and the probe, for 60 rounds
    from memmut.agent.wss import shrink_floor
    params = _calibration_params()
    floor = shrink_floor.Floor(kb=700 * MiB, ref_kb=520 * MiB,
                               quiet_rounds=2)
    st = _probe_state(pinned_unconfirmed=True, floor=floor)
    st, r = badis.step(st, _quiet(7.0), params)
    assert r.demand_kb >= 700 * MiB            # the floor holds the demand
    assert r.probe_kb is not None and r.probe_kb < 700 * MiB
    st = _walk(st, params, 4, answer)
    assert (st.floor.kb == 0) is released
    events = ' '.join(e for e in badis.step(st, _quiet(12.0), params)[1]
                      .events)
    assert 'shrink floor' not in events        # nothing more to say
    if released:
        assert st.pinned_kb < 200 * MiB


def test_a_probe_that_evicted_nothing_leaves_a_shrink_floor():
    # a probe below a floor that the guest met from free memory tested
    # nothing (badis44, TCG load_idle loaded: such a probe released a
    # floor and the correction stayed): the floor stands
    from memmut.agent.wss import shrink_floor
    params = _calibration_params()
    floor = shrink_floor.Floor(kb=700 * MiB, ref_kb=520 * MiB,
                               quiet_rounds=2)
    st = _probe_state(pinned_unconfirmed=True, floor=floor)
    st, r = badis.step(st, _quiet(7.0), params)
    assert r.probe_kb is not None and r.probe_kb < 700 * MiB
    t = 8.0
    while st.probe_pinned_kb is not None:
        o = dataclasses.replace(_quiet(t), m_cur_kb=st.probe_size_kb,
                                steady=False)
        st, r = badis.step(st, o, params)
        t += 1.0
    assert any('no evictions' in e for e in r.events)
    assert st.floor.kb == 700 * MiB and st.pinned_kb == 200 * MiB


@pytest.mark.parametrize('used_mib, probed', [(480, True), (470, False)])
def test_a_probe_held_off_by_a_floor_goes_to_the_floor(used_mib, probed):
    # badis45, TCG load-then-idle: a floor set by the read-backs of the
    # first probe (at 480 MiB here) and stepped down to 470 kept out every
    # probe one step under what the guest uses; one at the floor tests the
    # correction and, lived through, releases the floor
    from memmut.agent.wss import shrink_floor
    params = _calibration_params()
    floor = shrink_floor.Floor(kb=470 * MiB, ref_kb=470 * MiB,
                               evidenced=True, read_at_kb=480 * MiB)
    st = _probe_state(pinned_unconfirmed=True, floor=floor)
    st, r = badis.step(st, _quiet(7.0, used_kb=used_mib * MiB), params)
    if not probed:
        # the guest uses no more than the floor: a probe there tests
        # nothing
        assert r.probe_kb is None and st.floor.kb == floor.kb
        return
    assert r.probe_kb == 470 * MiB
    assert st.probe_pinned_kb == 170 * MiB       # 200 - (500 - 470)
    t = 8.0
    while st.probe_pinned_kb is not None:
        o = dataclasses.replace(_quiet(t), m_cur_kb=st.probe_size_kb,
                                steady=False, evicted_kb=MiB)
        st, r = badis.step(st, o, params)
        t += 1.0
    assert st.floor.kb == 0 and st.pinned_kb == 170 * MiB
    assert any('where the read-backs that set it came' in e
               for e in r.events)


def test_swap_growth_alone_does_not_end_a_probe():
    # TCG, stop 35: a 36 MiB probe step made the guest write to swap fast
    # enough to count as swap pressure, with no swap-in: that is the
    # eviction the probe looks for, not a sign the pages were needed
    params = _calibration_params()
    st = _probe_state(pinned_unconfirmed=True)
    st, r = badis.step(st, _quiet(7.0), params)
    size = st.probe_size_kb
    for t in (8.0, 9.0, 10.0):           # the probe's 3 s
        st, r = badis.step(st, badis.Observation(
            timestamp=t, m_cur_kb=size, booked_kb=BOOKED,
            sampled=sampled(300 * MiB), pressure_kb=8 * MiB,
            evicted_kb=8 * MiB, steady=False), params)
        # our doing: no shortage, the estimate stays where it was
        assert r.mode is Mode.V and r.wss.wss_kb == 500 * MiB
    assert st.pinned_kb == 184 * MiB and st.pinned_unconfirmed


def test_after_a_probe_the_cap_may_go_below_the_calibration():
    # once a probe showed the calibration counted data the guest gives up,
    # the guest's own statistics may remove the rest at once (one probe
    # in the 12 rounds: not chained)
    params = _calibration_params(probe_chain=False)
    st = _probe_state(pinned_unconfirmed=True, pinned_calibrated_kb=200 * MiB)
    st = _walk(st, params, 12, 'evict')
    assert st.pinned_kb == 184 * MiB and st.pinned_calibrated_kb == 0
    st, r = badis.step(st, badis.Observation(
        timestamp=30.0, m_cur_kb=M_CUR, booked_kb=BOOKED,
        sampled=_full_sample(300 * MiB), used_kb=390 * MiB), params)
    assert st.pinned_kb == 90 * MiB
    assert st.pinned_note.startswith('bounded')


def test_what_a_probe_took_counts_down_to_where_the_balloon_went():
    # TCG, stop 35 (phases from boot, 4 MiB step): the balloon went 4 MiB
    # below the probe's target, and a Geiger WSS 1 MiB above the target's
    # margin counted as a rise that grew the balloon
    params = _calibration_params(pinned_probe_step_kb=4 * MiB)
    st = _probe_state(pinned_unconfirmed=True)
    st, r = badis.step(st, _quiet(7.0), params)
    assert r.probe_kb == 496 * MiB
    obs_ = badis.Observation(
        timestamp=8.0, m_cur_kb=492 * MiB, booked_kb=BOOKED,
        sampled=sampled(300 * MiB), ghost=geiger(505 * MiB),
        swapping=True, steady=False)
    _, r = badis.step(st, obs_, params)
    assert r.mode is Mode.V and r.wss.wss_kb == 500 * MiB
    # beyond what it took down to 492 MiB: a rise
    _, r = badis.step(st, dataclasses.replace(
        obs_, ghost=geiger(510 * MiB)), params)
    assert r.mode is Mode.VG


def test_the_read_back_after_a_probe_is_not_a_shortage():
    # TCG, stop 35 (phases after loading): a 16 MiB probe of a right
    # correction was answered by swap-ins; read as a shortage, the guest
    # reading back what the probe took (Geiger 200-256 MiB against an
    # allocation growing back) took the balloon to the booking
    params = _calibration_params()
    st = _probe_state(pinned_unconfirmed=True)
    st, r = badis.step(st, _quiet(7.0), params)
    assert r.probe_kb == 484 * MiB
    bad = st.bad_shrinks
    for t, m_cur, ghost in ((8.0, 484, 490), (9.0, 520, 700),
                            (10.0, 540, 900), (11.0, 540, 800)):
        st, r = badis.step(st, badis.Observation(
            timestamp=t, m_cur_kb=m_cur * MiB, booked_kb=BOOKED,
            sampled=sampled(300 * MiB), ghost=geiger(ghost * MiB),
            swapping=True, steady=False, shrunk=(t == 8.0),
            shrunk_from_kb=540 * MiB), params)
        assert r.mode is Mode.V and r.wss.wss_kb == 500 * MiB, t
        assert r.demand_kb == 500 * MiB and not st.floor.kb
    assert st.bad_shrinks == bad and not st.pinned_unconfirmed
    assert st.pinned_kb == 200 * MiB
    # after the window, swap-ins are a shortage again
    st, r = badis.step(st, badis.Observation(
        timestamp=12.0, m_cur_kb=540 * MiB, booked_kb=BOOKED,
        sampled=sampled(300 * MiB), ghost=geiger(800 * MiB),
        swapping=True), params)
    assert r.mode is Mode.VG and r.wss.wss_kb == 800 * MiB


def _answered_probe(params, out_mib=40, in_mib=2):
    """A calibration probe from a 540 MiB balloon to 484 MiB during
    which the guest wrote ``out_mib`` to swap and read ``in_mib`` back
    each round: answered, its read-back window over at t = 14."""
    st = _probe_state(pinned_unconfirmed=True)
    st, r = badis.step(st, _quiet(7.0), params)
    assert r.probe_kb == 484 * MiB
    for t in (8.0, 9.0, 10.0):
        st, r = badis.step(st, badis.Observation(
            timestamp=t, m_cur_kb=484 * MiB, booked_kb=BOOKED,
            sampled=sampled(300 * MiB), ghost=geiger(490 * MiB),
            swapping=True, steady=False, shrunk=(t == 8.0),
            shrunk_from_kb=540 * MiB,
            evicted_kb=out_mib * MiB if t == 8.0 else 0,
            swapin_kb=in_mib * MiB, swapin_distances=((0, in_mib * MiB),)),
            params)
    assert st.probe_pinned_kb is None and st.pinned_kb == 200 * MiB
    return st


@pytest.mark.parametrize('vg_mode', [Mode.V, Mode.VG])
@pytest.mark.parametrize('least_mib, out_mib, mode', [
    (0, 0, Mode.V),         # pages the probe evicted: its read-back
    (60, 0, None),          # older pages than the probe's: a shortage
    (0, 4, None),           # the guest writes again: a shortage
])
def test_reading_back_a_probes_pages_is_the_probes_doing(least_mib, out_mib,
                                                         mode, vg_mode):
    # probe_owns_readback (stop 90; TCG, sqlite3 paced: the guest read
    # back what a probe made it write for 12 s, past the probe's window,
    # and the balloon went to the booking)
    params = _calibration_params()
    st = _answered_probe(params)
    # 40 MiB written, 6 MiB read back: 34 MiB of the probe's in swap
    assert st.probe_debt_kb == 34 * MiB
    # (still judged in hindsight: a hot set that moves reads back past
    # the probe's window)
    assert st.ledger.from_kb == 540 * MiB
    # (in VG too: a sample at the allocation's edge, then the pages)
    st = dataclasses.replace(st, mode=vg_mode)
    st, r = badis.step(st, badis.Observation(
        timestamp=20.0, m_cur_kb=540 * MiB, booked_kb=BOOKED,
        sampled=sampled(300 * MiB), ghost=geiger(800 * MiB),
        swapping=True, swapin_kb=2 * MiB, evicted_kb=out_mib * MiB,
        swapin_distances=((least_mib * MiB, 2 * MiB),)), params)
    # (a shortage: Geiger's estimate, in VG)
    assert r.mode is (mode or Mode.VG)
    assert r.wss.wss_kb == (500 if mode else 800) * MiB
    if mode is Mode.V:
        assert r.wss.wss_kb == 500 * MiB and st.probe_debt_kb == 32 * MiB
    # the option off: a shortage as before
    off = _calibration_params(probe_owns_readback=False)
    st = _answered_probe(off)
    assert st.probe_debt_kb == 0 and st.ledger.from_kb == 540 * MiB
    st, r = badis.step(st, badis.Observation(
        timestamp=20.0, m_cur_kb=540 * MiB, booked_kb=BOOKED,
        sampled=sampled(300 * MiB), ghost=geiger(800 * MiB),
        swapping=True, swapin_kb=2 * MiB,
        swapin_distances=((0, 2 * MiB),)), off)
    assert r.mode is Mode.VG


def test_the_debt_ends_when_the_guest_writes_again():
    params = _calibration_params()
    st = _answered_probe(params)
    st, r = badis.step(st, dataclasses.replace(
        _quiet(20.0), evicted_kb=4 * MiB), params)
    assert st.probe_debt_kb == 0


@pytest.mark.parametrize('state_kw', [
    dict(pinned_unconfirmed=False),     # learned in VG, or confirmed
    dict(pinned_unconfirmed=True, pinned_kb=72 * MiB),    # at its floor
])
def test_calibration_probe_only_for_an_unconfirmed_calibration(state_kw):
    # without calibration_reprobe (on by default since stop 51)
    st, r = badis.step(_probe_state(**state_kw), _quiet(7.0),
                       _calibration_params(calibration_reprobe=False))
    assert r.probe_kb is None and st.probe_pinned_kb is None


def test_learning_in_vg_confirms_the_calibration():
    params = _calibration_params()
    st = _probe_state(pinned_unconfirmed=True, mode=Mode.VG)
    st, _ = badis.step(st, badis.Observation(
        timestamp=8.0, m_cur_kb=468 * MiB, booked_kb=BOOKED,
        sampled=sampled(250 * MiB), ghost=geiger(490 * MiB),
        swapping=True), params)
    assert st.pinned_kb == 218 * MiB and not st.pinned_unconfirmed


def test_learning_in_vg_ends_a_running_probe():
    params = _probe_params()
    st, _ = _start_probe(params)
    st = dataclasses.replace(st, mode=Mode.VG)
    st, r = badis.step(st, badis.Observation(
        timestamp=8.0, m_cur_kb=468 * MiB, booked_kb=BOOKED,
        sampled=sampled(250 * MiB), ghost=geiger(490 * MiB),
        swapping=True), params)
    assert st.pinned_kb == 218 * MiB                # learned: 468 - 250
    assert st.probe_pinned_kb is None and r.probe_kb is None


def _capped(t, used_mib):
    # a quiet round sampled 300 MiB (low 300) whose balloon statistics
    # say the guest uses used_mib: pinned_used_bound caps the correction
    # at used_mib - 300
    return dataclasses.replace(
        _quiet(t, used_kb=used_mib * MiB),
        sampled=est.TechniqueEstimate(300 * MiB, est.SOURCE_VMWARE,
                                      low_kb=300 * MiB))


def test_a_cap_below_a_running_probe_counts_as_its_success():
    # stop 36, TCG: the guest gave up cold pages to the probe and the
    # statistics' cap (pinned_used_bound) lowered the correction below
    # what the probe tested before it ended; the next step is longer
    params = _calibration_params(pinned_used_bound=True)
    st = _probe_state(pinned_unconfirmed=True, pinned_calibrated_kb=0)
    st, r = badis.step(st, _quiet(7.0), params)
    assert st.probe_pinned_kb == 184 * MiB and st.probe_streak == 0
    st, r = badis.step(st, _capped(8.0, 400), params)
    assert st.pinned_kb == 100 * MiB                # 400 - 300
    assert st.probe_pinned_kb is None and st.probe_streak == 1
    assert st.probe_wait == 1


def test_a_probe_started_on_a_correction_the_cap_just_lowered_runs():
    # TCG, stop 91 (functional test of the early calibration probe): the
    # cap (pinned_used_bound) lowered the correction in the round a probe
    # started, sized on the lowered one; the probe was cancelled at once
    # as moot while its start was logged, and the next waited a window
    params = _calibration_params(pinned_used_bound=True)
    st = _probe_state(pinned_unconfirmed=True, pinned_calibrated_kb=0)
    st, r = badis.step(st, _capped(7.0, 490), params)
    assert st.pinned_kb == 190 * MiB                # 490 - 300
    assert any('bounded' in e for e in r.events), r.events
    assert st.probe_pinned_kb is not None and r.probe_kb is not None
    assert st.probe_pinned_kb < 190 * MiB
    assert any(e.startswith('balloon probe of a pinned-page correction')
               and '(now 190 MiB)' in e for e in r.events), r.events


def test_on_demand_sets_the_probe_size_without_headroom():
    from memmut.agent.mutualization import on_demand
    from memmut.agent.wss import estimate
    from tests import common

    class VM:
        booked_kb, balloon_kb = BOOKED, 600 * MiB

    ctl = on_demand.OnDemandController(common.private_conf(), None)
    est = estimate.Estimate(uuid='u', wss_kb=500 * MiB,
                            max_avg_kb=500 * MiB, demand_kb=500 * MiB,
                            source='badis/x', probe_kb=468 * MiB)
    assert ctl.plan(VM, est)[0] == 468 * MiB
    normal = dataclasses.replace(est, probe_kb=None)
    assert ctl.plan(VM, normal)[0] > 500 * MiB     # demand + headroom


@pytest.mark.parametrize('ghost_mib, mode, wss_mib, source', [
    # the probe's own swap-ins: the estimate before it, in V
    (480, Mode.V, 500, badis.SOURCE_PROBE),
    # above it by no more than the probe took (32 MiB): still the probe's
    (530, Mode.V, 500, badis.SOURCE_PROBE),
    # above it by more than the probe took: a rise, a shortage as usual
    (560, Mode.VG, 560, est.SOURCE_GEIGER),
])
def test_swap_ins_of_a_probe_are_not_a_shortage(ghost_mib, mode, wss_mib,
                                                source):
    params = _probe_params()
    st, _ = _start_probe(params)
    st, r = badis.step(st, badis.Observation(
        timestamp=8.0, m_cur_kb=468 * MiB, booked_kb=BOOKED,
        sampled=sampled(300 * MiB), ghost=geiger(ghost_mib * MiB),
        swapping=True, steady=False), params)
    assert st.mode is mode and r.wss.wss_kb == wss_mib * MiB
    assert r.wss.source == source
    assert st.pinned_kb == 200 * MiB and st.probe_pinned_kb is None
    assert r.probe_kb is None                   # the balloon goes back
    assert (st.short_kb == 0) is (mode is Mode.V)


# -- stop 30: the correction capped by what the guest has not free --

def _full_sample(kb):
    return est.TechniqueEstimate(kb, est.SOURCE_VMWARE_REFERENCED, kb)


@pytest.mark.parametrize('changes, expect_mib', [
    # 450 not free, 300 seen: at most 150 unseen; a learned 500 falls
    # there at once, with the defaults (pinned_relearn off)
    ({}, 150),
    # never below the floor (the kernel's reservation)
    ({'used_kb': 350 * MiB}, 120),
    # nothing to cap: the bound is above the correction
    ({'used_kb': 900 * MiB}, 500),
    # a bound within the statistics' noise (under 1 MiB lower) is the
    # same correction; 1 MiB lower is a cap
    ({'used_kb': 800 * MiB - 512}, 500),
    ({'used_kb': 799 * MiB}, 499),
    # statistics unknown or moving during the interval (None)
    ({'used_kb': None}, 500),
    # sample seeing more than the guest has not free: inconsistent
    ({'sampled': _full_sample(460 * MiB)}, 500),
    # only from a sample whose lower end is known
    ({'sampled': sampled(300 * MiB)}, 500),
    # a sample of pages: not from one round (see below)
    ({'sampled': est.vmware_sampling(30, 100, M_CUR)}, 500),
    # not while swapping, nor after the allocation moved
    ({'swapping': True, 'ghost': geiger(1200 * MiB)}, 500),
    ({'steady': False}, 500),
])
def test_correction_capped_by_what_the_guest_has_not_free(
        changes, expect_mib):
    fields = dict(timestamp=10.0, m_cur_kb=M_CUR, booked_kb=BOOKED,
                  sampled=_full_sample(300 * MiB), used_kb=450 * MiB)
    fields.update(changes)
    st = badis.BadisState(pinned_kb=500 * MiB, pinned_floor_kb=120 * MiB,
                          pinned_at=0.0, learned=True,
                          pinned_note='learned in VG: swapping at 1000 MiB, '
                                      'sampled 500 MiB')
    st, r = badis.step(st, badis.Observation(**fields),
                       badis.BadisParams(time_slice=4.0,
                                         shrink_swapin_window=3.0))
    assert st.pinned_kb == expect_mib * MiB
    assert any('bounded' in e for e in r.events) is (expect_mib != 500)
    # the next round's estimate is the sample plus the capped correction
    fields['timestamp'] = 11.0
    st, r = badis.step(st, badis.Observation(**fields),
                       badis.BadisParams(time_slice=4.0,
                                         shrink_swapin_window=3.0))
    if 'swapping' not in changes:
        assert r.wss.wss_kb == fields['sampled'].wss_kb + expect_mib * MiB


@pytest.mark.parametrize('changes, why', [
    ({}, None),                          # capped: nothing to explain
    ({'used_kb': None}, 'statistics unknown'),
    ({'sampled': sampled(300 * MiB)}, 'no access sample'),
    ({'swapping': True, 'ghost': geiger(1200 * MiB)}, 'swap activity'),
    ({'steady': False}, 'balloon moved'),
    ({'sampled': _full_sample(460 * MiB)}, 'older than the sample'),
])
def test_the_round_says_why_the_cap_did_not_act(changes, why):
    # (a correction stuck above what the guest uses must be explainable
    # from the agent's debug log: CI at stop 51)
    fields = dict(timestamp=10.0, m_cur_kb=M_CUR, booked_kb=BOOKED,
                  sampled=_full_sample(300 * MiB), used_kb=450 * MiB)
    fields.update(changes)
    st = badis.BadisState(pinned_kb=500 * MiB, pinned_floor_kb=120 * MiB,
                          pinned_at=0.0, learned=True)
    _, r = badis.step(st, badis.Observation(**fields),
                      badis.BadisParams(time_slice=4.0,
                                        shrink_swapin_window=3.0))
    if why is None:
        assert r.used_bound_skip is None and r.pinned_kb == 150 * MiB
    else:
        assert why in r.used_bound_skip and r.pinned_kb == 500 * MiB


def test_no_reason_is_given_when_there_is_nothing_to_cap():
    obs_ = badis.Observation(timestamp=10.0, m_cur_kb=M_CUR,
                             booked_kb=BOOKED, sampled=sampled(300 * MiB))
    st = badis.BadisState(pinned_kb=120 * MiB, pinned_floor_kb=120 * MiB,
                          pinned_at=0.0)
    _, r = badis.step(st, obs_, badis.BadisParams())
    assert r.used_bound_skip is None


def test_correction_cap_is_an_option():
    obs_ = badis.Observation(timestamp=10.0, m_cur_kb=M_CUR,
                             booked_kb=BOOKED,
                             sampled=_full_sample(300 * MiB),
                             used_kb=400 * MiB)
    st = badis.BadisState(pinned_kb=500 * MiB, pinned_at=0.0, learned=True)
    st, _ = badis.step(st, obs_, badis.BadisParams(pinned_used_bound=False))
    assert st.pinned_kb == 500 * MiB


def test_correction_cap_never_goes_below_the_calibration():
    # the W1-W5 guest swaps with 15 MiB free at 128 MiB and sampling sees
    # the hot part of its kernel's reservation: at the first steady
    # rounds "not free - sampled" (61 MiB) read under the calibrated 73
    # MiB it cannot give up (bench_badis W3,d, stop 30). Only what was
    # learned above the calibration is capped.
    fields = dict(timestamp=10.0, m_cur_kb=128 * MiB, booked_kb=256 * MiB,
                  sampled=_full_sample(52 * MiB), used_kb=113 * MiB)
    for pinned_mib, expect_mib in ((73, 73), (150, 73), (70, 70)):
        st = badis.BadisState(pinned_kb=pinned_mib * MiB,
                              pinned_floor_kb=51 * MiB,
                              pinned_calibrated_kb=73 * MiB, pinned_at=0.0)
        st, _ = badis.step(st, badis.Observation(**fields),
                           badis.BadisParams())
        assert st.pinned_kb == expect_mib * MiB


def test_a_sampled_back_end_caps_after_three_rounds_at_their_largest_bound():
    # page_idle or kmod (KVM): 100 pages of 1000 MiB, 30 accessed: 300
    # MiB estimated, at least 180.7 MiB (99.5 %). With 450 MiB not free,
    # a round's bound is 269.3 MiB; the cap waits for three rounds in a
    # row and takes the largest of their bounds.
    params = badis.BadisParams(time_slice=4.0, shrink_swapin_window=3.0)
    st = badis.BadisState(pinned_kb=500 * MiB, pinned_floor_kb=120 * MiB,
                          pinned_at=0.0, learned=True)

    def round_(st, t, accessed, used_mib=450, **kw):
        sample = est.vmware_sampling(accessed, 100, M_CUR)
        return badis.step(st, badis.Observation(
            timestamp=t, m_cur_kb=M_CUR, booked_kb=BOOKED, sampled=sample,
            used_kb=used_mib * MiB, **kw), params)

    st, _ = round_(st, 10.0, 30)
    st, _ = round_(st, 11.0, 34)             # lower end 212.4 MiB
    assert st.pinned_kb == 500 * MiB and len(st.used_bounds) == 2
    # a round with no bound (the allocation moved) starts the run again
    st, _ = round_(st, 12.0, 30, steady=False)
    assert st.used_bounds == () and st.pinned_kb == 500 * MiB
    st, _ = round_(st, 13.0, 30)
    st, _ = round_(st, 14.0, 34)
    st, r = round_(st, 15.0, 30)
    low30 = est.sample_low(30, 100, M_CUR)
    assert st.pinned_kb == 450 * MiB - low30      # the largest bound
    assert any('3 rounds in a row' in e for e in r.events)
    assert 'at least' in st.pinned_note


def test_a_sampled_bound_never_acts_on_one_over_read():
    # 700 MiB not free, about 300 MiB touched: an honest sample (30 of
    # 100) bounds the correction at 519 MiB, one that over-read (60 of
    # 100) at 217. Taken alone, that round would cap a right 500 MiB
    # correction to 217; taken with the two before it, it does not.
    params = badis.BadisParams(time_slice=4.0, shrink_swapin_window=3.0)
    st = badis.BadisState(pinned_kb=500 * MiB, pinned_floor_kb=50 * MiB,
                          pinned_at=0.0, learned=True)
    for t, accessed in enumerate((30, 30, 60, 30)):
        st, _ = badis.step(st, badis.Observation(
            timestamp=10.0 + t, m_cur_kb=M_CUR, booked_kb=BOOKED,
            sampled=est.vmware_sampling(accessed, 100, M_CUR),
            used_kb=700 * MiB), params)
        assert st.pinned_kb == 500 * MiB, accessed
    assert len(st.used_bounds) == badis.USED_BOUND_ROUNDS
