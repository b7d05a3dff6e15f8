"""Shrinks judged in hindsight (memmut/agent/wss/hindsight.py) and the
shrink floor they raise."""

import pytest

from memmut.agent.wss import hindsight as hs
from memmut.agent.wss import shrink_floor as floors

MiB = 1024
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
    # 2 MiB a round read back: a quarter of 20 MiB after 3 rounds
    ledger, v = rounds(hs.Ledger(), [0, 2 * MiB, 2 * MiB, 2 * MiB, 0])
    bads = [(i, b) for i, (b, _) in enumerate(v) if b]
    assert bads == [(3, 256 * MiB)]
    assert "bad in hindsight" in v[3][1] and "6 MiB" in v[3][1]
    assert ledger == hs.Ledger()              # closed


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
                                 sample_kb=200 * MiB)
    assert floor.kb == 256 * MiB and floor.evidenced and 'set at' in ev
    # the guest uses less than the floor because what it reads back is
    # still out: no release on its free memory
    f2, ev2 = floors.update(floor, bad_shrink=False, m_cur_kb=256 * MiB,
                            sample_kb=200 * MiB, short=False,
                            used_kb=150 * MiB, params=fp)
    assert f2.kb == 256 * MiB and ev2 is None
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
