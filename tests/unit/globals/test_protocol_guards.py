"""The controller refuses what an agent may not ask (issue 18, item 3).

Each test is a hole of the global protocol as it was: a host that is not a
party of an allocation released or reclaimed it, a report from the future or
with an impossible size was stored, and a host's liveness was read from the
agent's own clock. The calls go through the RPC endpoint
(:class:`memmut.globals.manager.ControllerManager`) with the sender in the
RPC context, as the agents send it.
"""

from memmut.globals import manager
from memmut import objects
from tests.unit import test_global_protocol as tgp

NOW = tgp.NOW
GIB = 1 << 20


def _manager(db, conf, agents=None, clock=lambda: NOW):
    # The database stamps receive times with the controller's clock.
    db._clock = clock
    return manager.ControllerManager(db, agents or tgp.FakeAgents(), conf,
                                     clock=clock)


def _report(host, timestamp=NOW, total=16 * GIB, reservoir=4 * GIB,
            seq=1, **kw):
    return objects.HostReport(
        host=host, boot_id='b-' + host, seq=seq, timestamp=timestamp,
        hypervisor='sim', memory_total_kb=total, memory_free_kb=total // 2,
        cpu_count=4, cpu_util=0.1, reservoir_kb=reservoir,
        **kw).to_primitive()


def _ctxt(host):
    return {'host': host}


def _granted(db, conf, clock):
    """One allocation: 1 GiB of s lent to VM vm of c; (manager, id)."""
    m = _manager(db, conf, clock=clock)
    for h in ('s', 'c', 'x'):
        m.report(_ctxt(h), _report(h))
    reply = m.gmc_alloc(_ctxt('c'), objects.RemoteAllocRequest(
        client_host='c', vm_uuid='vm', size_kb=GIB).to_primitive())
    assert reply['granted'], reply
    return m, reply['device']['allocation_id']


def test_release_from_a_host_that_is_not_a_party_is_refused(conf, db):
    m, aid = _granted(db, conf, lambda: NOW)
    m.gmc_release(_ctxt('x'), objects.AllocationRef(
        allocation_id=aid, reason='mine now').to_primitive())
    assert db.get_remote_allocation(aid).state != 'released'
    m.gmc_release(_ctxt('c'), objects.AllocationRef(
        allocation_id=aid).to_primitive())
    assert db.get_remote_allocation(aid).state == 'released'


def test_reclaim_of_another_hosts_memory_is_refused(conf, db):
    m, aid = _granted(db, conf, lambda: NOW)
    reply = m.gmc_reclaim(_ctxt('x'), objects.ReclaimRequest(
        server_host='s', size_kb=GIB).to_primitive())
    assert reply['reclaimed_kb'] == 0
    assert db.get_remote_allocation(aid).state in ('granted', 'active')


def test_inform_about_another_host_is_refused(conf, db):
    m = _manager(db, conf)
    m.report(_ctxt('s'), _report('s', reservoir=GIB))
    m.gmc_inform(_ctxt('x'), objects.ReservoirInform(
        host='s', reservoir_kb=8 * GIB, timestamp=NOW).to_primitive())
    assert db.get_host('s').reservoir_kb == GIB


def test_report_and_inform_from_the_future_are_refused(conf, db):
    m = _manager(db, conf)
    reply = m.report(_ctxt('s'), _report('s', timestamp=NOW + 3600))
    assert not reply['stored']
    assert db.count_reports('s') == 0
    m.report(_ctxt('s'), _report('s', reservoir=GIB))
    m.gmc_inform(_ctxt('s'), objects.ReservoirInform(
        host='s', reservoir_kb=2 * GIB, timestamp=NOW + 3600).to_primitive())
    assert db.get_host('s').reservoir_kb == GIB


def test_impossible_sizes_are_refused(conf, db):
    m = _manager(db, conf)
    for bad in (dict(reservoir=-1), dict(total=1 << 51),
                dict(reservoir=32 * GIB)):          # more than its RAM
        assert not m.report(_ctxt('s'), _report('s', **bad))['stored'], bad
    assert db.count_reports('s') == 0
    m.report(_ctxt('s'), _report('s', reservoir=GIB))
    for size in (-GIB, 1 << 51, 32 * GIB):
        m.gmc_inform(_ctxt('s'), objects.ReservoirInform(
            host='s', reservoir_kb=size, timestamp=NOW).to_primitive())
        assert db.get_host('s').reservoir_kb == GIB, size
    m.report(_ctxt('c'), _report('c'))
    for size in (1 << 51, 64 * GIB):
        reply = m.gmc_alloc(_ctxt('c'), objects.RemoteAllocRequest(
            client_host='c', vm_uuid='vm', size_kb=size).to_primitive())
        assert not reply['granted'], size
    assert db.list_remote_allocations() == []


def test_liveness_is_judged_on_the_controllers_clock(conf, db):
    # s's clock is 1000 s late; its reports arrive now: s is up.
    m = _manager(db, conf)
    m.report(_ctxt('s'), _report('s', timestamp=NOW - 1000))
    m.report(_ctxt('c'), _report('c'))
    reply = m.gmc_alloc(_ctxt('c'), objects.RemoteAllocRequest(
        client_host='c', vm_uuid='vm', size_kb=GIB).to_primitive())
    assert reply['granted'], reply


class Clock:
    def __init__(self, t):
        self.t = t

    def __call__(self):
        return self.t


def test_reconcile_after_a_restart_leaves_no_orphan(conf, db):
    """A controller that died in the middle: every open allocation is
    judged on what lender and client report, and what they hold that is
    not open here is let go."""
    clock = Clock(NOW)
    agents = tgp.FakeAgents()
    m, used = _granted(db, conf, clock)
    m.protocol._agents = agents
    # x has nothing to lend: the second allocation is s's too (s has 3 GiB
    # left of its 4 GiB reservoir)
    m.report(_ctxt('x'), _report('x', seq=2, reservoir=0))
    unused = m.gmc_alloc(_ctxt('c'), objects.RemoteAllocRequest(
        client_host='c', vm_uuid='vm2', size_kb=GIB).to_primitive())[
        'device']['allocation_id']
    # Cut in the middle of an LMC_alloc: the row stays requested.
    db.create_remote_allocation('cut', 'c', 's', 'vm3', GIB)
    clock.t += conf.controller.allocation_grace
    # s lends used, unused and a slab the controller never heard of; c uses
    # used and a device of an allocation that is closed.
    m.report(_ctxt('s'), _report('s', seq=2, timestamp=clock.t,
                                 remote_exports=[used, unused, 'ghost']))
    m.report(_ctxt('c'), _report('c', seq=2, timestamp=clock.t,
                                 remote_attachments=[used, 'closed']))
    applied = dict(m.protocol.reconcile())
    assert applied == {used: 'in_use', unused: 'release', 'cut': 'failed'}
    states = {a.allocation_id: a.state
              for a in db.list_remote_allocations()}
    assert states == {used: 'active', unused: 'released', 'cut': 'failed'}
    assert ('release', 's', 'ghost') in agents.calls
    assert ('reclaim', 'c', 'closed') in agents.calls
    # The lender stops reporting: its allocations close as failed, and the
    # client is told to serve the pages from its backup file.
    clock.t += conf.controller.host_down_after + 1
    m.report(_ctxt('c'), _report('c', seq=3, timestamp=clock.t,
                                 remote_attachments=[used]))
    assert dict(m.protocol.reconcile()) == {used: 'lender_dead'}
    assert db.get_remote_allocation(used).state == 'failed'
    assert agents.calls[-1] == ('reclaim', 'c', used)


def test_reconcile_trusts_no_agent_that_does_not_list(conf, db):
    clock = Clock(NOW)
    m, aid = _granted(db, conf, clock)
    clock.t += 10 * conf.controller.allocation_grace
    for h in ('s', 'c'):      # agents before RPC 1.3: lists are None
        m.report(_ctxt(h), _report(h, seq=2, timestamp=clock.t))
    assert m.protocol.reconcile() == []
    assert db.get_remote_allocation(aid).state == 'granted'


def test_a_restarted_controller_gives_hosts_time_to_report(conf, db):
    """After a controller outage longer than host_down_after, every host's
    last receive time is old: that is the controller's silence, not the
    hosts'. Nothing is closed until they had host_down_after to report."""
    clock = Clock(NOW)
    m, aid = _granted(db, conf, clock)
    clock.t += 10 * conf.controller.host_down_after     # controller down
    restarted = _manager(db, conf, clock=clock)
    assert restarted.protocol.reconcile() == []
    assert db.get_remote_allocation(aid).state == 'granted'
    clock.t += conf.controller.host_down_after + 1       # s never reports
    restarted.report(_ctxt('c'), _report('c', seq=2, timestamp=clock.t,
                                         remote_attachments=[aid]))
    assert dict(restarted.protocol.reconcile()) == {aid: 'lender_dead'}
