"""Slow start for shrinks (slow_start.py) and Badis with it (issue 13)."""

from memmut.agent.wss import badis
from memmut.agent.wss import slow_start
from memmut.agent.wss import techniques as est

MiB = 1024


def _descend(demands, hold_kb=200 * MiB, first_kb=4 * MiB, swapping=(),
             still=()):
    """Paced demands of rounds whose raw demand is ``demands[i]``, the
    balloon following the paced demand (hold = the last paced one)
    except in the rounds of ``still``, where it did not move."""
    d, out, hold, shrunk = slow_start.Descent(), [], hold_kb, False
    for i, raw in enumerate(demands):
        paced, d, _ = slow_start.pace(d, demand_kb=raw, hold_kb=hold,
                                      swapping=i in swapping,
                                      shrunk=shrunk, first_kb=first_kb)
        out.append(paced // MiB)
        shrunk = i not in still and paced < hold
        if shrunk:
            hold = paced
    return out


def test_a_descent_starts_small_and_doubles():
    assert _descend([100 * MiB] * 6) == [196, 188, 172, 140, 100, 100]


def test_the_step_doubles_only_once_the_balloon_moved():
    # the max-average held the balloon for two rounds: still 4 MiB steps
    assert _descend([100 * MiB] * 5, still={0, 1}) == [196, 196, 196, 188,
                                                       172]


def test_off_changes_nothing():
    assert _descend([100 * MiB] * 3, first_kb=0) == [100, 100, 100]


def test_swap_activity_starts_the_next_descent_small():
    # round 2 swaps (the guard holds the demand): the next descent
    # starts again at 4 MiB, not at 16
    demands = [100 * MiB, 100 * MiB, 188 * MiB, 100 * MiB, 100 * MiB]
    assert _descend(demands, swapping={2}) == [196, 188, 188, 184, 176]
    assert _descend(demands) == [196, 188, 188, 184, 176]
    # a swapping round's own shrink (swap-ins too few for the guard)
    # goes the smallest step, and the next round starts from it again
    paced, d, _ = slow_start.pace(slow_start.Descent(16 * MiB),
                                  demand_kb=100 * MiB, hold_kb=200 * MiB,
                                  swapping=True, shrunk=True,
                                  first_kb=4 * MiB)
    assert paced == 196 * MiB and d.step_kb == 0
    paced, d, _ = slow_start.pace(d, demand_kb=100 * MiB, hold_kb=196 * MiB,
                                  swapping=False, shrunk=True,
                                  first_kb=4 * MiB)
    assert paced == 192 * MiB and d.step_kb == 4 * MiB


def test_a_round_that_does_not_fall_restarts_it():
    d = slow_start.Descent(step_kb=64 * MiB)
    paced, d, ev = slow_start.pace(d, demand_kb=250 * MiB,
                                   hold_kb=200 * MiB, swapping=False,
                                   shrunk=True, first_kb=4 * MiB)
    assert paced == 250 * MiB and d.step_kb == 0 and ev is None


def test_a_fall_within_the_allowance_is_not_paced():
    paced, d, ev = slow_start.pace(slow_start.Descent(), demand_kb=198 * MiB,
                                   hold_kb=200 * MiB, swapping=False,
                                   shrunk=False, first_kb=4 * MiB)
    assert paced == 198 * MiB and ev is None and d.step_kb == 4 * MiB


def test_badis_paces_its_demand_below_the_balloon():
    params = badis.BadisParams(shrink_slow_start_kb=4 * MiB,
                               headroom_kb=16 * MiB, headroom_fraction=0.05)
    obs = badis.Observation(
        timestamp=0.0, m_cur_kb=256 * MiB, booked_kb=256 * MiB,
        sampled=est.TechniqueEstimate(100 * MiB, est.SOURCE_VMWARE),
        steady=True)
    _, r = badis.step(None, obs, params)
    hold = badis.hold_demand(256 * MiB, params)
    assert r.demand_kb == hold - 4 * MiB
    assert any('slow start' in e for e in r.events)
    _, r = badis.step(None, obs, badis.BadisParams(headroom_kb=16 * MiB,
                                                   shrink_slow_start_kb=0))
    assert r.demand_kb < hold - 4 * MiB


def test_the_first_step_is_at_least_the_controllers_smallest_move():
    # a 16 MiB deadband ignores a 4 MiB step: the balloon would never
    # move and the step never double
    assert _descend([100 * MiB] * 4, first_kb=4 * MiB) == [196, 188, 172,
                                                           140]
    d, out, hold, shrunk = slow_start.Descent(), [], 200 * MiB, False
    for _ in range(4):
        paced, d, _ = slow_start.pace(d, demand_kb=100 * MiB, hold_kb=hold,
                                      swapping=False, shrunk=shrunk,
                                      first_kb=4 * MiB, min_move_kb=16 * MiB)
        out.append(paced // MiB)
        shrunk = paced < hold
        hold = paced
    assert out == [184, 152, 100, 100]
    assert slow_start.first_step(0, 16 * MiB) == 0     # off stays off


def test_badis_takes_the_smallest_move_from_the_configuration(conf):
    conf.set_override('shrink_slow_start_kb', 4 * MiB, 'badis')
    conf.set_override('min_change_kb', 16 * MiB, 'badis')
    conf.set_override('min_change_kb', 8 * MiB, 'mutualization')
    assert badis.BadisParams.from_conf(conf).balloon_min_change_kb == (
        16 * MiB)
    conf.set_override('enabled', True, 'mutualization')
    assert badis.BadisParams.from_conf(conf).balloon_min_change_kb == (
        8 * MiB)


def test_badis_moves_a_balloon_held_back_by_a_deadband():
    """With the controller's 16 MiB deadband the paced demand still asks
    for a move the controller makes."""
    params = badis.BadisParams(headroom_kb=16 * MiB, headroom_fraction=0.05,
                               balloon_min_change_kb=16 * MiB)
    target = badis.TargetParams(headroom_kb=16 * MiB, headroom_fraction=0.05,
                                min_change_kb=16 * MiB)
    m_cur, st = 256 * MiB, None
    for t in range(4):
        obs = badis.Observation(
            timestamp=float(t), m_cur_kb=m_cur, booked_kb=256 * MiB,
            sampled=est.TechniqueEstimate(100 * MiB, est.SOURCE_VMWARE),
            steady=t == 0, shrunk=t > 0,
            shrunk_from_kb=None if t == 0 else m_cur + 16 * MiB)
        st, r = badis.step(st, obs, params)
        moved = badis.balloon_target(r.demand_kb, m_cur, 256 * MiB, target)
        assert moved is not None, (t, r.events)
        m_cur = moved[0]
    assert m_cur < 256 * MiB - 3 * 16 * MiB


def test_a_held_round_is_no_descent():
    """A round whose balloon the agent holds (a first calibration
    pending) keeps the balloon where it is and logs the hold, not a
    paced shrink that never comes; the descent after it starts at its
    first step."""
    params = badis.BadisParams(shrink_slow_start_kb=4 * MiB,
                               headroom_kb=16 * MiB, headroom_fraction=0.05)
    hold = badis.hold_demand(256 * MiB, params)

    def obs(t, held):
        return badis.Observation(
            timestamp=float(t), m_cur_kb=256 * MiB, booked_kb=256 * MiB,
            sampled=est.TechniqueEstimate(100 * MiB, est.SOURCE_VMWARE),
            steady=True, hold=held)
    st = None
    for t in range(3):
        st, r = badis.step(st, obs(t, True), params)
        assert r.demand_kb == hold
        assert not any('slow start' in e for e in r.events), r.events
        assert any('calibration pending' in e for e in r.events)
        assert st.descent == slow_start.Descent()
    st, r = badis.step(st, obs(3, False), params)
    assert r.demand_kb == hold - 4 * MiB
    assert any('slow start' in e for e in r.events)
