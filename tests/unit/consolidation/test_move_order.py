"""The order planned migrations are handed to nova (and queued in the
simulator): memmut.consolidation.move_order."""

import pytest

from memmut.consolidation import move_order as mo


def e(kind, src, dst, load=0.0):
    return mo.Entry(mo.OVERLOAD if kind == 'o' else mo.UNDERLOAD, src, dst,
                    load)


def test_overload_first_most_overloaded_source_first_else_plan_order():
    moves = [e('u', 'h1', 'h2'), e('o', 'h3', 'h2', 1.1),
             e('u', 'h4', 'h5'), e('o', 'h6', 'h7', 1.4),
             e('o', 'h3', 'h5', 1.1)]
    assert mo.order(moves, mo.PRIORITY) == [3, 1, 4, 0, 2]
    assert mo.order(moves, mo.PRIORITY_DROP) == [3, 1, 4, 0, 2]
    assert mo.order(moves, mo.PLAN) == [0, 1, 2, 3, 4]


def test_underload_moves_sharing_a_host_with_an_overload_move_wait():
    moves = [e('o', 'h1', 'h2'), e('u', 'h3', 'h2'), e('u', 'h1', 'h9'),
             e('u', 'h4', 'h5'), e('o', 'h2', 'h6')]
    busy = mo.overload_hosts(moves)
    assert busy == {'h1', 'h2', 'h6'}
    assert [mo.held_back(m, busy) for m in moves] == [
        False, True, True, False, False]
    assert not mo.held_back(moves[1], set())


def test_drop_leaves_out_whole_evacuations_that_would_wait():
    # h3's evacuation: one move to h2 (an overload destination), one to
    # h8; both go. h4's does not touch an overload host; h9's touches a
    # pending overload move of an earlier round.
    moves = [e('u', 'h3', 'h2'), e('o', 'h1', 'h2', 1.2),
             e('u', 'h3', 'h8'), e('u', 'h4', 'h5'), e('u', 'h9', 'h5')]
    kept, dropped = mo.drop_conflicting(moves, [e('o', 'h9', 'h7')])
    assert kept == [1, 3] and dropped == [0, 2, 4]
    kept, dropped = mo.drop_conflicting(moves)
    assert kept == [1, 3, 4] and dropped == [0, 2]


def test_unknown_order_is_refused():
    with pytest.raises(ValueError):
        mo.order([], 'random')
    assert mo.check('priority') == 'priority'
