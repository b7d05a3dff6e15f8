"""The remote allocation state machine and the pure checks beside it."""

import pytest

from memmut.globals import allocations as al

# Every (state, event) pair: the state it leads to, or None when illegal.
# Written out in full on purpose: a transition added to the code without
# being added here fails the test.
R, G, A, RL, RC = (al.REQUESTED, al.GRANTED, al.ACTIVE, al.RELEASING,
                   al.RECLAIMING)
EXPECTED = {
    #              granted refused  failed  in_use release reclaim detached freed lender_dead  # noqa: E501
    al.REQUESTED: (G, al.REFUSED, al.FAILED, None, None, None, None, None, al.FAILED),  # noqa: E501
    al.GRANTED: (None, None, al.FAILED, A, RL, RC, None, None, al.FAILED),
    al.ACTIVE: (None, None, al.FAILED, A, RL, RC, None, None, al.FAILED),
    al.RECLAIMING: (None, None, al.FAILED, None, RL, RC, RL, al.RELEASED, al.FAILED),  # noqa: E501
    al.RELEASING: (None, None, al.FAILED, None, RL, None, None, al.RELEASED, al.FAILED),  # noqa: E501
    al.RELEASED: (None,) * 9,
    al.REFUSED: (None,) * 9,
    al.FAILED: (None,) * 9,
}


def test_table_covers_every_state_and_event():
    assert set(EXPECTED) == set(al.STATES)
    assert len(al.EVENTS) == 9


@pytest.mark.parametrize('state', al.STATES)
@pytest.mark.parametrize('index,event', list(enumerate(al.EVENTS)))
def test_transition(state, index, event):
    expected = EXPECTED[state][index]
    if expected is None:
        with pytest.raises(al.IllegalTransition) as e:
            al.next_state(state, event)
        assert state in str(e.value) and event in str(e.value)
    else:
        assert al.next_state(state, event) == expected


def test_closed_states_never_reopen():
    for state in al.CLOSED_STATES:
        for event in al.EVENTS:
            with pytest.raises(al.IllegalTransition):
                al.next_state(state, event)


@pytest.mark.parametrize('value,limit,ok', [
    (0, None, True), (1, None, True), (al.MAX_KB, None, True),
    (-1, None, False), (al.MAX_KB + 1, None, False), (1 << 63, None, False),
    (True, None, False), (1.5, None, False),
    (100, 100, True), (101, 100, False),
])
def test_size_problem(value, limit, ok):
    assert (al.size_problem('x', value, limit) is None) == ok


def test_size_problem_zero_when_not_allowed():
    assert 'positive' in al.size_problem('x', 0, allow_zero=False)


def test_timestamp_problem_only_refuses_the_future():
    assert al.timestamp_problem(100.0, 100.0, 5) is None
    assert al.timestamp_problem(105.0, 100.0, 5) is None
    assert al.timestamp_problem(0.0, 100.0, 5) is None      # late is fine
    assert 'ahead' in al.timestamp_problem(106.0, 100.0, 5)
    assert al.timestamp_problem(float('nan'), 100.0, 5)


def test_credentials_problem():
    aid = 'a1'
    good = 'ab' * 32
    assert al.credentials_problem(al.psk_identity(aid), good, aid) is None
    assert al.credentials_problem('memmut-alloc-other', good, aid)
    assert al.credentials_problem(al.psk_identity(aid), good[:-2], aid)
    assert al.credentials_problem(al.psk_identity(aid), good.upper(), aid)
    assert al.credentials_problem(al.psk_identity(aid), None, aid)


class Alloc:
    def __init__(self, aid, state, updated_at=0.0, client='c', server='s'):
        self.allocation_id = aid
        self.state = state
        self.updated_at = updated_at
        self.client_host = client
        self.server_host = server


NOW, DOWN, GRACE = 1000.0, 60, 120


def _events(allocs, hosts):
    return al.reconcile(allocs, hosts, NOW, DOWN, GRACE)


def test_reconcile_dead_lender_closes_everything_open():
    allocs = [Alloc(str(i), s) for i, s in enumerate(al.OPEN_STATES)]
    hosts = {'s': al.HostView(NOW - 61, [], []),
             'c': al.HostView(NOW, [], [str(i) for i in range(5)])}
    events, _ = _events(allocs, hosts)
    assert {(e[0], e[1]) for e in events} == {
        (str(i), al.E_LENDER_DEAD) for i in range(len(al.OPEN_STATES))}


def test_reconcile_unused_allocation_is_released_after_grace():
    hosts = {'s': al.HostView(NOW, ['g', 'a'], []),
             'c': al.HostView(NOW, [], [])}
    fresh = [Alloc('g', al.GRANTED, NOW - 10), Alloc('a', al.ACTIVE, NOW)]
    assert _events(fresh, hosts) == ([], [])
    old = [Alloc('g', al.GRANTED, NOW - GRACE), Alloc('a', al.ACTIVE, 0.0)]
    events, _ = _events(old, hosts)
    assert [(e[0], e[1]) for e in events] == [('g', al.E_RELEASE),
                                              ('a', al.E_RELEASE)]


def test_reconcile_client_use_activates_and_down_client_releases():
    hosts = {'s': al.HostView(NOW, ['g'], []),
             'c': al.HostView(NOW, [], ['g'])}
    events, _ = _events([Alloc('g', al.GRANTED, NOW)], hosts)
    assert [e[1] for e in events] == [al.E_IN_USE]
    events, _ = _events([Alloc('g', al.ACTIVE, NOW)], hosts)
    assert events == []
    hosts['c'] = al.HostView(NOW - 100, [], ['g'])
    events, _ = _events([Alloc('g', al.ACTIVE, NOW)], hosts)
    assert [e[1] for e in events] == [al.E_RELEASE]


def test_reconcile_agents_that_do_not_list_are_not_judged():
    hosts = {'s': al.HostView(NOW, None, None),
             'c': al.HostView(NOW, None, None)}
    allocs = [Alloc('a', al.ACTIVE, 0.0), Alloc('r', al.RELEASING, 0.0),
              Alloc('k', al.RECLAIMING, 0.0)]
    assert _events(allocs, hosts) == ([], [])


def test_reconcile_requested_fails_after_grace_and_closes_releases():
    hosts = {'s': al.HostView(NOW, [], []), 'c': al.HostView(NOW, [], [])}
    events, _ = _events([Alloc('q', al.REQUESTED, NOW - 1),
                         Alloc('q2', al.REQUESTED, NOW - GRACE),
                         Alloc('r', al.RELEASING, NOW),
                         Alloc('k', al.RECLAIMING, NOW)], hosts)
    assert [(e[0], e[1]) for e in events] == [
        ('q2', al.E_FAILED), ('r', al.E_FREED), ('k', al.E_DETACHED)]


def test_reconcile_orphans_are_named_with_their_role():
    hosts = {'s': al.HostView(NOW, ['open', 'gone'], []),
             'c': al.HostView(NOW, [], ['open', 'lost']),
             'dead': al.HostView(NOW - 100, ['x'], ['y'])}
    _, orphans = _events([Alloc('open', al.ACTIVE, NOW)], hosts)
    assert orphans == [('c', 'client', 'lost'), ('s', 'server', 'gone')]


def test_reconcile_a_slab_the_lender_lost_fails_after_grace():
    """A lender whose memstore restarted, or that deleted a slab after a
    reclaim nobody answered, no longer lists it: the allocation fails
    (after the grace, so a report older than the grant is not taken for
    a loss)."""
    hosts = {'s': al.HostView(NOW, [], []),
             'c': al.HostView(NOW, [], ['a', 'g'])}
    fresh = [Alloc('a', al.ACTIVE, NOW - 1), Alloc('g', al.GRANTED, NOW)]
    events, _ = _events(fresh, hosts)
    assert [(e[0], e[1]) for e in events] == [('g', al.E_IN_USE)]
    old = [Alloc('a', al.ACTIVE, NOW - GRACE),
           Alloc('g', al.GRANTED, NOW - GRACE)]
    events, _ = _events(old, hosts)
    assert [(e[0], e[1]) for e in events] == [('a', al.E_FAILED),
                                              ('g', al.E_FAILED)]
    assert 'no longer holds' in events[0][2]


def test_reconcile_reclaim_the_lender_ended_on_its_own():
    """The lender deleted a slab it reclaims (its reclaim timeout) while
    the client still lists it: released, and the client an orphan."""
    hosts = {'s': al.HostView(NOW, [], []),
             'c': al.HostView(NOW, [], ['k'])}
    events, orphans = _events([Alloc('k', al.RECLAIMING, NOW)], hosts)
    assert [(e[0], e[1]) for e in events] == [('k', al.E_FREED)]
    assert 'reclaim timeout' in events[0][2]
    # still exported: the client is waited for
    hosts['s'] = al.HostView(NOW, ['k'], [])
    assert _events([Alloc('k', al.RECLAIMING, 0.0)], hosts) == ([], [])
    # once closed, the client's listing is an orphan it is told about
    _, orphans = _events([], hosts)
    assert ('c', 'client', 'k') in orphans


def test_reconcile_does_not_judge_on_lists_older_than_the_allocation():
    """After a controller restart the stored lists predate what happened
    just before the crash (a slab made, a grant not yet attached): an
    allocation is judged only on lists received after its last
    transition."""
    old = {'s': al.HostView(NOW, [], [], listed_at=NOW - GRACE - 1),
           'c': al.HostView(NOW, [], [], listed_at=None)}
    allocs = [Alloc('g', al.GRANTED, NOW - GRACE),
              Alloc('k', al.RECLAIMING, NOW - GRACE),
              Alloc('r', al.RELEASING, NOW - GRACE)]
    assert _events(allocs, old) == ([], [])
    fresh = {'s': al.HostView(NOW, [], [], listed_at=NOW),
             'c': al.HostView(NOW, [], [], listed_at=NOW)}
    events, _ = _events(allocs, fresh)
    assert [(e[0], e[1]) for e in events] == [
        ('g', al.E_RELEASE), ('k', al.E_DETACHED), ('r', al.E_FREED)]
