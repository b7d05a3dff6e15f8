"""Badis's demand in a shortage round ([badis] shortage_grow_fraction and
shortage_ramp) and in the round whose sample reached the allocation
(vg_entry_grow), on simulated rounds of a guest whose working set rises
(issue 13)."""

from memmut.agent.wss import badis
from memmut.agent.wss import techniques as est
# the benchmark guests' booking and balloon sizing
from tests.unit.agent.test_shrink_floor import BOOKED, MiB, TARGET

EVICTED = 10 * MiB          # what the guest evicts per round while short


def simulate(need, fraction, rounds=20, start=171 * MiB, out_ratio=0.0,
             read_back=None, ramp=False, vg_entry=False, no_grow=False):
    """Rounds of 1 s of a guest that needs ``need(i)`` KiB, sampled right
    when it has what it needs; while short it swaps and evicts EVICTED
    per round, and with ``read_back`` (KiB) the swap monitor counts that
    read back and EVICTED written per short round
    (``shortage_grow_out_ratio``). Returns per round (balloon, short,
    demand, events)."""
    params = badis.BadisParams(average_window=3, time_slice=4.0,
                               shrink_swapin_window=3.0,
                               shortage_grow_fraction=fraction,
                               shortage_grow_out_ratio=out_ratio,
                               shortage_ramp=ramp,
                               vg_entry_grow=vg_entry,
                               rise_hold_no_grow=no_grow)
    bal = prev = start
    st, out = None, []
    for i in range(rounds):
        short = bal < need(i)
        traffic = {}
        if read_back is not None and short:
            traffic = dict(evicted_kb=EVICTED, swapin_kb=read_back)
        o = badis.Observation(
            timestamp=float(i), m_cur_kb=bal, booked_kb=BOOKED,
            sampled=est.TechniqueEstimate(min(bal, need(i)),
                                          est.SOURCE_VMWARE_REFERENCED),
            swapping=short, steady=bal == prev, full=short,
            pressure_kb=EVICTED if short else 0,
            grew_from_kb=prev if bal > prev else None,
            shrunk=bal < prev, shrunk_from_kb=prev if bal < prev else None,
            **traffic)
        st, r = badis.step(st, o, params)
        out.append((bal, short, r.demand_kb, r.events))
        prev = bal
        t = badis.balloon_target(r.demand_kb, bal, BOOKED, TARGET)
        if t:
            bal = t[0]
    return out


def rise(i):
    return 156 * MiB if i < 5 else 236 * MiB


def short_rounds(out):
    return sum(1 for _, short, _, _ in out if short)


def test_a_rise_is_covered_in_fewer_swapping_rounds():
    by_estimate = simulate(rise, 0.0)
    halfway = simulate(rise, 0.5)
    assert short_rounds(by_estimate) >= 3
    assert short_rounds(halfway) <= 2
    assert any('of the way from' in e for _, _, _, ev in halfway
               for e in ev)
    assert not any('of the way from' in e for _, _, _, ev in by_estimate
                   for e in ev)


def test_the_excess_is_given_back_once_the_rounds_are_quiet():
    out = simulate(rise, 0.5, rounds=30)
    # at most the need plus the max-average's memory of the shortage
    # estimates, once the short rounds are over; never the booking
    # for good
    assert max(d for _, _, d, _ in out[15:]) <= 246 * MiB
    assert out[-1][2] >= 236 * MiB


def test_no_jump_without_a_shortage():
    steady = simulate(lambda i: 150 * MiB, 0.5)
    assert short_rounds(steady) == 0
    assert max(d for _, _, d, _ in steady) <= 171 * MiB


def test_shortage_demand_is_a_fraction_of_the_gap():
    o = badis.Observation(timestamp=0.0, m_cur_kb=156 * MiB,
                          booked_kb=BOOKED)
    assert badis.shortage_demand(o, 0.5) == 206 * MiB
    assert badis.shortage_demand(o, 0.0) == 156 * MiB
    full = badis.Observation(timestamp=0.0, m_cur_kb=BOOKED,
                             booked_kb=BOOKED)
    assert badis.shortage_demand(full, 0.5) == BOOKED


def ramped(out):
    return [i for i, (_, _, _, ev) in enumerate(out)
            if any(e.startswith('rise:') for e in ev)]


def test_a_ramp_covers_a_rise_in_fewer_swapping_rounds():
    # a 74 MiB rise: the estimate grows by what one round read back
    def to_230(i):
        return 156 * MiB if i < 5 else 230 * MiB
    by_estimate = simulate(to_230, 0.0, rounds=30)
    ahead = simulate(to_230, 0.0, rounds=30, ramp=True)
    assert short_rounds(ahead) < short_rounds(by_estimate)
    assert ramped(ahead) and not ramped(by_estimate)
    # only from the second short round of the rise
    first_short = next(i for i, (_, s, _, _) in enumerate(ahead) if s)
    assert min(ramped(ahead)) > first_short


def test_one_short_round_does_not_ramp():
    # a guest short for one round only (a hot set's one-round move)
    out = simulate(lambda i: 180 * MiB if i == 5 else 150 * MiB, 0.0,
                   ramp=True)
    assert short_rounds(out) == 1
    assert not ramped(out)


def test_the_ramp_excess_is_given_back_once_the_rounds_are_quiet():
    out = simulate(rise, 0.0, rounds=40, ramp=True)
    assert max(d for _, _, d, _ in out) <= BOOKED
    # the first quiet rounds hold at most the estimate's max-average
    # and the floor; later the demand comes down to the need plus the
    # balloon's headroom, not the booking
    assert out[-1][2] < BOOKED
    assert out[-1][2] >= 236 * MiB


def test_shortage_ramp_demand_asks_the_growth_once_more():
    o = badis.Observation(timestamp=0.0, m_cur_kb=156 * MiB,
                          booked_kb=BOOKED)
    assert badis.shortage_ramp_demand(o, 180 * MiB) == 204 * MiB
    # never beyond the booking; the allocation when the estimate is not
    # above it (the guest swaps there)
    assert badis.shortage_ramp_demand(o, 240 * MiB) == BOOKED
    assert badis.shortage_ramp_demand(o, 150 * MiB) == 156 * MiB


def test_the_first_quiet_round_after_a_rise_does_not_grow():
    def rise_80(i):
        return 100 * MiB if i < 5 else 180 * MiB

    def first_quiet(no_grow):
        out = simulate(rise_80, 0.0, rounds=20, start=116 * MiB, ramp=True,
                       no_grow=no_grow)
        last = max(i for i, (_, s, _, _) in enumerate(out) if s)
        return out[last + 1][0], out[last + 2][0]

    # the round estimates the allocation (G, nothing swapped) and kept
    # the demand at it: the balloon grew by its headroom
    at, after = first_quiet(False)
    assert after > at
    at, after = first_quiet(True)
    assert after <= at


def test_after_rise_demand():
    params = badis.BadisParams(rise_hold_no_grow=True)
    o = badis.Observation(timestamp=0.0, m_cur_kb=200 * MiB,
                          booked_kb=BOOKED)
    idle = est.TechniqueEstimate(200 * MiB, badis.SOURCE_GEIGER_IDLE)
    hold = badis.hold_demand(200 * MiB, params)
    assert badis.after_rise_demand(0, idle, o, params) == hold < 200 * MiB
    # under the balloon's size: the estimate itself
    low = est.TechniqueEstimate(150 * MiB, est.SOURCE_VMWARE_REFERENCED)
    assert badis.after_rise_demand(0, low, o, params) == 150 * MiB
    # a shortage's estimate, which step() has put in the demand, stays
    short = est.TechniqueEstimate(220 * MiB, est.SOURCE_GEIGER)
    assert badis.after_rise_demand(220 * MiB, short, o,
                                   params) == 220 * MiB
    # off: the estimate, as before
    off = badis.BadisParams(rise_hold_no_grow=False)
    assert badis.after_rise_demand(0, idle, o, off) == 200 * MiB


def warm(need, warmup, rounds=12, under=0):
    """A VM seen from its first round at the full booking whose sample
    reads ``need(i) - under``; balloon moved by the target."""
    # (no slow start: its paced descent keeps the balloon off a load
    # that warm-up is there to wait out)
    params = badis.BadisParams(average_window=3, time_slice=4.0,
                               warmup_slices=warmup, headroom_kb=16 * MiB,
                               headroom_fraction=0.05, shrink_slow_start_kb=0)
    bal = prev = BOOKED
    st, out = None, []
    for i in range(rounds):
        o = badis.Observation(
            timestamp=float(i), m_cur_kb=bal, booked_kb=BOOKED,
            sampled=est.TechniqueEstimate(need(i) - under,
                                          est.SOURCE_VMWARE_REFERENCED),
            steady=bal == prev, full=False,
            shrunk=bal < prev, shrunk_from_kb=prev if bal < prev else None)
        st, r = badis.step(st, o, params)
        out.append((bal, r.demand_kb, r.events))
        prev = bal
        t = badis.balloon_target(r.demand_kb, bal, BOOKED, TARGET)
        if t:
            bal = t[0]
    return out


def test_no_shrink_on_the_first_time_slice_of_rounds():
    # a guest whose first samples read low (it is loading its data)
    def need(i):
        return 100 * MiB if i < 3 else 200 * MiB
    cold = warm(need, 0.0)
    held = warm(need, 1.0)
    assert min(b for b, _, _ in cold[:5]) < 200 * MiB   # shrunk on the load
    assert all(b == BOOKED for b, _, _ in held[:5])     # 4 s: one slice
    assert any('warm-up' in e for e in held[0][2])
    # afterwards it shrinks on the max-average as usual
    assert held[-1][0] < BOOKED
    assert held[-1][0] >= 200 * MiB


def test_the_hold_never_grows_the_balloon():
    # an agent restarted on a VM whose balloon is already down: held
    # where it is, not grown by the headroom every round
    params = badis.BadisParams(time_slice=4.0, warmup_slices=1.0,
                               headroom_kb=16 * MiB, headroom_fraction=0.05)
    d = badis.hold_demand(180 * MiB, params)
    assert badis.balloon_target(d, 180 * MiB, BOOKED, TARGET) is None


def rise_seen_in_the_sample(vg_no_shrink):
    """Rounds at a balloon of 192 MiB whose samples read 155 MiB, then a
    rise the sample sees (190 MiB) before any swap activity: the round's
    (balloon target or None, events, mode)."""
    params = badis.BadisParams(average_window=3, time_slice=4.0,
                               headroom_kb=16 * MiB, headroom_fraction=0.05,
                               vg_no_shrink=vg_no_shrink,
                               no_shrink_below_estimate=False)
    st = r = None
    for i, sampled in enumerate([155] * 5 + [190]):
        o = badis.Observation(
            timestamp=float(i), m_cur_kb=192 * MiB, booked_kb=BOOKED,
            sampled=est.TechniqueEstimate(sampled * MiB,
                                          est.SOURCE_VMWARE_REFERENCED),
            full=False)
        st, r = badis.step(st, o, params)
    return (badis.balloon_target(r.demand_kb, 192 * MiB, BOOKED, TARGET),
            r.events, r.mode)


def test_a_round_that_ends_in_vg_does_not_shrink_into_a_rise():
    # badis18 README section 5: phases after loading, the t=7.0 round
    target, _, mode = rise_seen_in_the_sample(False)
    assert mode is badis.Mode.VG
    assert target is not None and target[0] < 192 * MiB  # the defect
    target, events, mode = rise_seen_in_the_sample(True)
    assert mode is badis.Mode.VG
    assert target is None or target[0] >= 192 * MiB
    assert any('VG: no shrink' in e for e in events)


def jumps(need, out_ratio, read_back):
    """Rounds of simulate() at shortage_grow_fraction 0.5 that jumped."""
    rounds = simulate(need, 0.5, out_ratio=out_ratio, read_back=read_back)
    return sum(any('of the way from' in e for e in events)
               for _, _, _, events in rounds)


def test_the_jump_only_when_new_data_pushes_old_out():
    # a rise by new allocations: 10 MiB evicted, 1 MiB read back
    assert jumps(rise, 2.0, MiB) >= 1
    # as much read back as evicted (a moving hot set): no jump
    assert jumps(rise, 2.0, EVICTED) == 0
    # 0: every short round, as before
    assert jumps(rise, 0.0, EVICTED) >= 1


def test_fresh_allocation():
    o = badis.Observation(timestamp=0.0, m_cur_kb=156 * MiB,
                          booked_kb=BOOKED, evicted_kb=8 * MiB,
                          swapin_kb=2 * MiB)
    assert badis.fresh_allocation(o, 4.0)
    assert not badis.fresh_allocation(o, 5.0)
    assert badis.fresh_allocation(o, 0.0)
    none = badis.Observation(timestamp=0.0, m_cur_kb=156 * MiB,
                             booked_kb=BOOKED)
    assert not badis.fresh_allocation(none, 2.0)


def loading(no_shrink_while_allocating, allocating=True):
    """Rounds at the booking of a guest that has loaded 100 MiB and is
    still loading (its memory in use rising, ``allocating``): the
    targets of the rounds (None: no change)."""
    params = badis.BadisParams(
        average_window=3, time_slice=4.0, headroom_kb=16 * MiB,
        headroom_fraction=0.05,
        no_shrink_while_allocating=no_shrink_while_allocating)
    st, targets = None, []
    for i in range(6):
        o = badis.Observation(
            timestamp=float(i), m_cur_kb=BOOKED, booked_kb=BOOKED,
            sampled=est.TechniqueEstimate(100 * MiB,
                                          est.SOURCE_VMWARE_REFERENCED),
            full=False, allocating=allocating)
        st, r = badis.step(st, o, params)
        targets.append((badis.balloon_target(r.demand_kb, BOOKED, BOOKED,
                                             TARGET), r.events))
    return targets


def test_no_shrink_while_the_guest_allocates():
    # off: the 100 MiB sample shrinks the loading guest
    assert any(t is not None and t[0] < BOOKED for t, _ in loading(False))
    held = loading(True)
    assert all(t is None or t[0] >= BOOKED for t, _ in held)
    assert any('allocating: no shrink' in e for _, ev in held for e in ev)
    # the option alone holds nothing: a guest that stopped allocating
    # shrinks
    assert any(t is not None and t[0] < BOOKED
               for t, _ in loading(True, allocating=False))


def rise_then(no_shrink_below_estimate, m_cur_kb=BOOKED):
    """Rounds at ``m_cur_kb`` of a guest whose estimate is 100 MiB for
    three rounds and 230 MiB from the fourth (a calibration that learned
    its pinned pages): the demand and events of the fourth round."""
    # (no slow start: the demand of one round from the booking, unpaced)
    params = badis.BadisParams(
        average_window=5, time_slice=600.0, headroom_kb=16 * MiB,
        headroom_fraction=0.05, shrink_slow_start_kb=0,
        no_shrink_below_estimate=no_shrink_below_estimate)
    st = None
    for i, sampled in enumerate((100, 100, 100, 230)):
        o = badis.Observation(
            timestamp=float(i), m_cur_kb=m_cur_kb, booked_kb=BOOKED,
            sampled=est.TechniqueEstimate(sampled * MiB,
                                          est.SOURCE_VMWARE_REFERENCED),
            full=False)
        st, r = badis.step(st, o, params)
    return r


def test_no_shrink_below_the_rounds_own_estimate():
    # off: the moving average (still mostly the 100 MiB rounds) is the
    # demand, well below the 230 MiB the guest has now
    off = rise_then(False)
    assert off.wss.wss_kb >= 230 * MiB
    assert off.demand_kb < 200 * MiB
    on = rise_then(True)
    assert on.demand_kb >= 230 * MiB
    # the balloon goes no lower than the estimate and its headroom
    target, _ = badis.balloon_target(on.demand_kb, BOOKED, BOOKED, TARGET)
    assert target >= 230 * MiB + 16 * MiB
    assert any('above the max-average' in e for e in on.events)
    # never a grow: at 180 MiB the round holds the balloon where it is
    low = rise_then(True, m_cur_kb=180 * MiB)
    assert low.demand_kb == badis.hold_demand(180 * MiB, badis.BadisParams(
        headroom_kb=16 * MiB, headroom_fraction=0.05))


def test_hold_at_estimate():
    params = badis.BadisParams(headroom_kb=16 * MiB, headroom_fraction=0.0)
    # below the estimate: raised to it
    assert badis.hold_at_estimate(100 * MiB, 200 * MiB, BOOKED,
                                  params) == 200 * MiB
    # the estimate above m_cur less the headroom: held there, no grow
    assert badis.hold_at_estimate(100 * MiB, 250 * MiB, BOOKED,
                                  params) == BOOKED - 16 * MiB
    # the demand above the estimate: unchanged
    assert badis.hold_at_estimate(220 * MiB, 200 * MiB, BOOKED,
                                  params) == 220 * MiB


def fills_then_rises(i):
    # the new data first fills the balloon's headroom (the sample reaches
    # the allocation, nothing swaps yet), then goes past it
    return 156 * MiB if i < 5 else 170 * MiB if i == 5 else 236 * MiB


def grown_at_entry(out):
    return [i for i, (_, _, _, ev) in enumerate(out)
            if any(e.startswith('rise seen by sampling') for e in ev)]


def test_a_rise_seen_by_sampling_grows_before_the_swap_ins():
    late = simulate(fills_then_rises, 0.0, rounds=30, ramp=True)
    early = simulate(fills_then_rises, 0.0, rounds=30, ramp=True,
                     vg_entry=True)
    assert grown_at_entry(early) == [5] and not grown_at_entry(late)
    # the round that saw the rise in its sample asks the estimate and its
    # rise once more (170 + 14 MiB); without the rule, the max-average
    assert early[5][2] == 184 * MiB
    assert late[5][2] < 172 * MiB
    # the balloon is larger when the swap-ins start, and the guest is
    # short of less over the rise
    assert early[6][0] > late[6][0]

    def lacking(out):
        return sum(max(0, fills_then_rises(i) - bal)
                   for i, (bal, _, _, _) in enumerate(out))
    assert lacking(early) < lacking(late)
    assert short_rounds(early) <= short_rounds(late)


def test_no_growth_at_a_steady_working_set_or_in_a_shortage():
    steady = simulate(lambda i: 150 * MiB, 0.0, vg_entry=True)
    assert not grown_at_entry(steady)
    # a rise that swaps in the round it is seen is the shortage rules'
    # (ramp), not this one's: the sample reaching the allocation there
    # comes with swap activity
    out = simulate(rise, 0.0, rounds=30, ramp=True, vg_entry=True)
    assert not grown_at_entry(out)


def test_reached_demand_adds_the_rise_once_more():
    o = badis.Observation(timestamp=0.0, m_cur_kb=172 * MiB,
                          booked_kb=BOOKED)
    assert badis.reached_demand(o, 170 * MiB, 156 * MiB) == 184 * MiB
    # no rise known, or a fall: the estimate alone
    assert badis.reached_demand(o, 170 * MiB, None) == 170 * MiB
    assert badis.reached_demand(o, 170 * MiB, 180 * MiB) == 170 * MiB
    # never past the booking
    assert badis.reached_demand(o, 250 * MiB, 150 * MiB) == BOOKED
