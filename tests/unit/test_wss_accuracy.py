"""The accuracy metrics of the Badis benchmark (pure functions over
recorded polls; the benchmark itself boots guests)."""

import pytest

from memmut.agent.wss import badis
from memmut.evaluation import wss_accuracy as bb

MIB = 1024
BOOKED = 256 * MIB
# The benchmark's balloon target: 16 MiB headroom.
TARGET = badis.TargetParams(headroom_kb=16 * MIB, headroom_fraction=0.05,
                            max_step_fraction=0.125, min_change_kb=4 * MIB,
                            floor_kb=96 * MIB, max_grow_fraction=0.5)


def rows_for(truths, balloons, estimates, key='badis', dt=0.5):
    return [{'t': i * dt, 'truth_kb': t * MIB, 'balloon_kb': b * MIB,
             key: e * MIB}
            for i, (t, b, e) in enumerate(zip(truths, balloons, estimates))]


def test_per_poll_and_allowance_split_by_phase():
    # a rise from 100 to 164 MiB between polls 1 and 2; the estimate
    # catches up at poll 3, the balloon at poll 4
    rows = rows_for(truths=[100, 100, 164, 164, 164],
                    balloons=[120, 120, 120, 120, 180],
                    estimates=[100, 100, 100, 164, 164])
    e = bb.errors(rows, 'badis', BOOKED)
    assert e['polls_S_less'] == 2 and e['polls_S_more'] == 3
    assert e['S_less'] == 12.5          # (25 % at poll 2 + 0) / 2
    assert e['S_more'] == 0
    # in % of the true WSS: 64 / 164 at poll 2, in S_less
    assert e['of_truth']['S_less'] == round(64 * 100.0 / 164 / 2, 2)
    assert e['of_truth']['S_more'] == 0
    # one poll of detection allowance: poll 2 matches the truth at poll 1
    assert e['allowance'] == {'all': 0, 'S_more': 0, 'S_less': 0}


def test_allowance_does_not_excuse_a_late_second_poll():
    rows = rows_for(truths=[100, 164, 164, 164],
                    balloons=[120, 120, 120, 180],
                    estimates=[100, 100, 100, 164])
    e = bb.errors(rows, 'badis', BOOKED)
    assert e['S_less'] == 25.0
    assert e['allowance']['S_less'] == 12.5   # poll 2 is still 64 MiB off


def test_late_oracle_scores_the_detection_delay_alone():
    truths = [100] * 4 + [164] * 6 + [100] * 6
    rows = rows_for(truths, [256] * len(truths), [100] * len(truths))
    o = bb.late_oracle_errors(rows, BOOKED, params=TARGET)
    # the oracle sizes the VM at 100 + 16 MiB headroom, so the rise is an
    # S_less poll with the whole rise as its error, and the next poll (the
    # oracle right, the balloon not grown yet) one without
    assert o['polls_S_less'] == 2 and o['S_less'] == 12.5
    assert o['allowance']['all'] == 0
    # after the fall, one poll of waste estimated at the old 164 MiB
    assert o['S_more'] > 0


def test_late_oracle_starts_at_the_run_s_first_estimate():
    rows = rows_for([76, 236, 236, 236], [256] * 4, [0, 0, 236, 236])
    for r in rows[:2]:
        del r['badis']
    o = bb.late_oracle_errors(rows, BOOKED, params=TARGET)
    assert o['polls_S_less'] == 0 and o['all'] == 0


def test_allowance_counts_a_partial_reaction_as_right():
    # the rise 76 -> 236 MiB came within the last poll and the estimate has
    # seen part of it: right within the allowance, however far from 236
    rows = rows_for(truths=[76, 236, 236], balloons=[131, 131, 256],
                    estimates=[76, 199, 236])
    e = bb.errors(rows, 'badis', BOOKED)
    assert e['S_less'] == round(37 * 100 / 256, 2)
    assert e['allowance']['S_less'] == 0
    # an overshoot beyond the new truth is not excused
    rows[1]['badis'] = 246 * MIB
    e = bb.errors(rows, 'badis', BOOKED)
    assert e['allowance']['S_less'] == round(10 * 100 / 256, 2)


def test_settled_scores_the_last_part_of_the_run_only():
    # 100 MiB over the truth for the first quarter, 4 MiB over after:
    # the second half sees 4 MiB (1.56 % of 256), the whole run more
    mib = 1024
    rows = [{'t': float(t), 'truth_kb': 100 * mib, 'balloon_kb': 256 * mib,
             'badis': (200 if t < 10 else 104) * mib} for t in range(40)]
    whole = bb.errors(rows, 'badis', 256 * mib)['allowance']
    late = bb.settled(rows, 'badis', 256 * mib)
    assert late['S_more'] == pytest.approx(1.56, abs=0.01)
    assert whole['S_more'] > 8
    # a later start of the settled part changes nothing here
    assert bb.settled(rows, 'badis', 256 * mib, 0.75) == late
    # nothing to score: no figures, not an error
    assert bb.settled([], 'badis', 256 * mib)['S_more'] is None
    assert bb.settled(rows, 'other', 256 * mib)['all'] is None


def test_packing_scores_the_figure_the_controller_packs_on():
    # truth 200 MiB; WSS^max_avg 150 MiB; a 210 MiB floor held in the
    # second half: without the floor 50 MiB short at every poll, with it
    # short only in the first half and 10 MiB over in the second
    rows = [{'t': float(t), 'truth_kb': 200 * MIB, 'balloon_kb': BOOKED,
             'max_avg_kb': 150 * MIB,
             'floor_kb': 210 * MIB if t >= 10 else 0} for t in range(20)]
    bare = bb.packing(rows, BOOKED, carry_floor=False)
    assert bare == {'short': round(50 * 100 / 256, 2), 'over': 0,
                    'polls_short': 100.0}
    floor = bb.packing(rows, BOOKED)
    assert floor['polls_short'] == 50.0
    assert floor['short'] == pytest.approx(50 * 100 / 256 / 2, abs=0.01)
    assert floor['over'] == pytest.approx(10 * 100 / 256 / 2, abs=0.01)
    late = bb.packing(rows, BOOKED, fraction=0.5)
    assert late['short'] == 0 and late['polls_short'] == 0
    # a rise within the last poll is allowed for (one poll of allowance)
    rows[5]['truth_kb'] = 150 * MIB
    assert bb.packing(rows, BOOKED, carry_floor=False)['polls_short'] \
        == 90.0
    # no truth (Zipf) or no figure recorded: nothing to score
    assert bb.packing([dict(r, truth_kb=None) for r in rows], BOOKED) \
        is None
    assert bb.packing([{k: v for k, v in r.items() if k != 'max_avg_kb'}
                       for r in rows], BOOKED) is None
