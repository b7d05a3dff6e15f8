import types

import oslo_messaging as messaging

from memmut.globals import protocol
from memmut import objects

NOW = 10_000.0


def test_choose_server_prefers_largest_live_reservoir_not_the_client():
    hosts = [('a', 900, NOW), ('b', 500, NOW), ('c', 2000, NOW - 500),
             ('client', 5000, NOW)]
    assert protocol.choose_server(hosts, 'client', 400, NOW, 60) == 'a'
    # c is the biggest but has not reported for 500 s
    assert protocol.choose_server(hosts, 'client', 950, NOW, 60) is None
    assert protocol.choose_server(hosts, 'client', 950, NOW, 600) == 'c'


def test_choose_server_ties_break_by_name_and_needs_whole_size():
    hosts = [('z', 100, NOW), ('y', 100, NOW), ('x', 99, NOW)]
    assert protocol.choose_server(hosts, 'c', 100, NOW, 60) == 'y'
    assert protocol.choose_server(hosts, 'c', 101, NOW, 60) is None
    assert protocol.choose_server([('n', 1, None)], 'c', 1, NOW, 60) is None


class FakeDB:
    def __init__(self, hosts):
        self.hosts = hosts
        self.allocs = {}

    def list_hosts(self):
        return [types.SimpleNamespace(name=n, reservoir_kb=r,
                                      last_report_at=t)
                for n, r, t in self.hosts]

    def create_remote_allocation(self, **kw):
        self.allocs[kw['allocation_id']] = types.SimpleNamespace(**kw)

    def update_remote_allocation(self, allocation_id, state, uri=None,
                                 reason=None):
        a = self.allocs[allocation_id]
        a.state, a.uri, a.reason = state, uri, reason

    def get_remote_allocation(self, allocation_id):
        return self.allocs[allocation_id]

    def list_remote_allocations(self, host=None, state=None):
        return [a for a in self.allocs.values()
                if (state is None or a.state == state)
                and host in (None, a.client_host, a.server_host)]


class FakeAgents:
    def __init__(self, grant=True, fail=False):
        self.calls = []
        self.grant, self.fail = grant, fail

    def lmc_alloc(self, host, req):
        self.calls.append(('alloc', host, req.allocation_id))
        if self.fail:
            raise messaging.MessagingTimeout('gone')
        if not self.grant:
            return objects.AllocResult(granted=False, reason='full')
        return objects.AllocResult(granted=True, device=objects.RemoteDevice(
            allocation_id=req.allocation_id, server_host=host,
            uri='nbd://%s/%s' % (host, req.allocation_id),
            size_kb=req.size_kb))

    def lmc_release(self, host, ref):
        self.calls.append(('release', host, ref.allocation_id))

    def lmc_reclaim(self, host, ref):
        self.calls.append(('reclaim', host, ref.allocation_id))


def _gp(db, agents, conf):
    return protocol.GlobalProtocol(db, agents, conf, clock=lambda: NOW)


def _req(size=1024):
    return objects.RemoteAllocRequest(client_host='c', vm_uuid='vm',
                                      size_kb=size)


def test_alloc_release_flow(conf):
    db, agents = FakeDB([('s', 4096, NOW), ('c', 0, NOW)]), FakeAgents()
    gp = _gp(db, agents, conf)
    result = gp.alloc(_req())
    assert result.granted and result.device.server_host == 's'
    alloc = db.allocs[result.device.allocation_id]
    assert alloc.state == 'active' and alloc.uri.startswith('nbd://s/')
    gp.release(objects.AllocationRef(allocation_id=alloc.allocation_id))
    assert alloc.state == 'released'
    assert agents.calls[-1] == ('release', 's', alloc.allocation_id)
    gp.release(objects.AllocationRef(allocation_id=alloc.allocation_id))
    assert len(agents.calls) == 2                # released only once


def test_alloc_refusals_are_recorded(conf):
    gp = _gp(FakeDB([('c', 0, NOW)]), FakeAgents(), conf)
    assert not gp.alloc(_req()).granted
    assert 'no live host' in gp.alloc(_req()).reason
    assert not gp.alloc(_req(0)).granted
    db = FakeDB([('s', 4096, NOW)])
    for agents in (FakeAgents(grant=False), FakeAgents(fail=True)):
        result = _gp(db, agents, conf).alloc(_req())
        assert not result.granted
    assert sorted(a.state for a in db.allocs.values()) == ['refused'] * 2


def test_reclaim_takes_back_largest_first_until_enough(conf):
    db = FakeDB([('s', 10_000, NOW)])
    agents = FakeAgents()
    gp = _gp(db, agents, conf)
    sizes = [1000, 3000, 2000]
    ids = [gp.alloc(_req(s)).device.allocation_id for s in sizes]
    freed = gp.reclaim(objects.ReclaimRequest(server_host='s', size_kb=4000))
    assert freed == 5000
    states = [db.allocs[i].state for i in ids]
    assert states == ['active', 'reclaimed', 'reclaimed']
    assert [c[0] for c in agents.calls].count('reclaim') == 2
