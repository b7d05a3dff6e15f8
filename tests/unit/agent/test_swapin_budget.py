"""The swap-in budget (swapin_budget.py) and Badis with it (issue 13)."""

import pytest

from memmut.agent.wss import badis
from memmut.agent.wss import swapin_budget as sb
from memmut.agent.wss import techniques as est

MiB = 1024
BOOKED = 256 * MiB
TARGET = badis.TargetParams(headroom_kb=16 * MiB, headroom_fraction=0.05,
                            floor_kb=96 * MiB, min_change_kb=4 * MiB,
                            max_step_fraction=0.125, max_grow_fraction=0.5)


def test_the_mean_follows_the_rate_with_its_time_constant():
    b = sb.Budget()
    # 10 s at 2048 KiB/s with a 10 s time constant: 1 - 1/e of it
    b, ev = sb.update(b, swapin_kb=20480, interval_s=10.0, rise=False,
                      limit_kb_s=4096, window_s=10.0)
    assert b.rate_kb_s == pytest.approx(2048 * (1 - 1 / 2.718281828), 1e-6)
    assert not b.over and ev is None


def test_over_the_limit_holds_until_under_half_of_it():
    b, ev = sb.update(sb.Budget(), swapin_kb=40 * MiB, interval_s=1.0,
                      rise=False, limit_kb_s=1024, window_s=30.0)
    assert b.over and 'no shrink until it falls under 512 KiB/s' in ev
    quiet = 0
    while b.over:
        b, ev = sb.update(b, swapin_kb=0, interval_s=1.0, rise=False,
                          limit_kb_s=1024, window_s=30.0)
        quiet += 1
        if b.rate_kb_s < 1024:
            assert b.over or 'allowed again' in ev   # hysteresis
    # 30 s x ln(1343 / 512): 29 rounds
    assert 27 <= quiet <= 31
    assert 'shrinks allowed again' in ev


def test_a_rise_of_the_working_set_and_unknown_rounds_cost_nothing():
    b, _ = sb.update(sb.Budget(), swapin_kb=30 * MiB, interval_s=1.0,
                     rise=True, limit_kb_s=1024, window_s=30.0)
    assert b == sb.Budget(rate_kb_s=0.0, over=False)
    b2, _ = sb.update(b, swapin_kb=30 * MiB, interval_s=None, rise=False,
                      limit_kb_s=1024, window_s=30.0)
    assert b2 is b
    off, _ = sb.update(b, swapin_kb=30 * MiB, interval_s=1.0, rise=False,
                       limit_kb_s=0, window_s=30.0)
    assert off is b


def moving_hot_set(rounds=120, **kw):
    """Rounds of 1 s of a guest that needs 236 MiB but whose sample reads
    a hot set of 100 MiB that moves every 15 rounds: below its need it
    swaps in 8 MiB a round once the hot set has moved onto what was
    swapped out (the rounds after a move). Returns (balloons, swap-in
    rounds, events)."""
    # the budget alone (the slow start paces the descents between moves;
    # a VM's own time slice holds each move's peak across the next)
    params = badis.BadisParams(average_window=3, time_slice=4.0,
                               shrink_swapin_window=3.0, round_interval=1.0,
                               headroom_kb=16 * MiB, headroom_fraction=0.05,
                               **dict(dict(shrink_slow_start_kb=0,
                                           time_slice_max_slices=0), **kw))
    bal = prev = BOOKED
    st, bals, swaps, events = None, [], 0, []
    for i in range(rounds):
        short = bal < 236 * MiB and i % 15 < 4
        swapin = 8 * MiB if short else 0
        swaps += short
        o = badis.Observation(
            timestamp=float(i), m_cur_kb=bal, booked_kb=BOOKED,
            sampled=est.TechniqueEstimate(100 * MiB, est.SOURCE_VMWARE),
            swapping=short, steady=bal == prev, shrunk=bal < prev,
            shrunk_from_kb=prev if bal < prev else None, full=short,
            swapin_kb=swapin, interval_s=1.0)
        st, r = badis.step(st, o, params)
        bals.append(bal)
        events += r.events
        prev = bal
        t = badis.balloon_target(r.demand_kb, bal, BOOKED, TARGET)
        if t:
            bal = t[0]
    return bals, swaps, events


def test_a_moving_hot_set_stops_costing_swap_ins_once_over_budget():
    # the budget alone (no shrink floor): the sawtooth goes on every 15
    # rounds without it, and stops for as long as the mean stays high
    _, without, _ = moving_hot_set(shrink_floor=False)
    bals, with_, events = moving_hot_set(shrink_floor=False,
                                         swapin_budget_kb_s=1024)
    assert without >= 25
    assert with_ <= 0.6 * without
    assert any(e.startswith('swap-in budget:') for e in events)
    # held where the shortages had grown it: above the need most rounds
    assert sum(b >= 236 * MiB for b in bals[60:]) > 40
    # with the floor (the default) it costs nothing more
    _, floor_only, _ = moving_hot_set()
    _, both, _ = moving_hot_set(swapin_budget_kb_s=1024)
    assert both <= floor_only


def test_off_by_default_and_bad_values_refused():
    assert badis.BadisParams().swapin_budget_kb_s == 0
    with pytest.raises(ValueError, match='swapin_budget'):
        badis.BadisParams(swapin_budget_kb_s=-1)
    with pytest.raises(ValueError, match='swapin_budget'):
        badis.BadisParams(swapin_budget_rounds=0)
