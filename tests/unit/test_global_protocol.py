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


def _hosts(db, *hosts):
    """Hosts that reported at NOW with the given reservoirs."""
    db._clock = lambda: NOW
    for name, reservoir_kb in hosts:
        db.store_report(objects.HostReport(
            host=name, boot_id='b', seq=1, timestamp=NOW, hypervisor='sim',
            memory_total_kb=1 << 24, memory_free_kb=1 << 23, cpu_count=4,
            cpu_util=0.1, reservoir_kb=reservoir_kb))
    return db


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
    db._clock = lambda: NOW     # receive times on the controller's clock
    return protocol.GlobalProtocol(db, agents, conf, clock=lambda: NOW)


def _req(size=1024):
    return objects.RemoteAllocRequest(client_host='c', vm_uuid='vm',
                                      size_kb=size)


def test_alloc_release_flow(conf, db):
    agents = FakeAgents()
    gp = _gp(_hosts(db, ('s', 4096), ('c', 0)), agents, conf)
    result = gp.alloc(_req(), sender='c')
    assert result.granted and result.device.server_host == 's'
    aid = result.device.allocation_id
    alloc = db.get_remote_allocation(aid)
    assert alloc.state == 'granted' and alloc.uri.startswith('nbd://s/')
    assert (alloc.client_host, alloc.vm_uuid, alloc.size_kb) == \
        ('c', 'vm', 1024)
    # Client and lender get the same fresh credentials.
    assert result.device.psk_identity == alloc.psk_identity == \
        'memmut-alloc-%s' % aid
    assert result.device.psk_key == alloc.psk_key
    assert len(alloc.psk_key) == 64 and 'psk_key=<hidden>' in repr(
        result.device)
    assert gp.release(objects.AllocationRef(allocation_id=aid,
                                            reason='done'),
                      sender='c')['released']
    alloc = db.get_remote_allocation(aid)
    assert (alloc.state, alloc.reason) == ('released', 'done')
    assert alloc.psk_key is None                 # closed: key forgotten
    assert agents.calls[-1] == ('release', 's', aid)
    gp.release(objects.AllocationRef(allocation_id=aid), sender='c')
    assert len(agents.calls) == 2                # released only once
    gp.release(objects.AllocationRef(allocation_id='no-such-id'),
               sender='c')
    assert len(agents.calls) == 2


def test_every_allocation_gets_its_own_key(conf, db):
    gp = _gp(_hosts(db, ('s', 1 << 20), ('c', 0)), FakeAgents(), conf)
    keys = {gp.alloc(_req(), sender='c').device.psk_key for _ in range(20)}
    assert len(keys) == 20


def test_a_lender_answering_for_another_slab_is_refused(conf, db):
    class Liar(FakeAgents):
        def lmc_alloc(self, host, req):
            result = super().lmc_alloc(host, req)
            result.device.size_kb = req.size_kb // 2
            return result
    agents = Liar()
    gp = _gp(_hosts(db, ('s', 4096), ('c', 0)), agents, conf)
    result = gp.alloc(_req(), sender='c')
    assert not result.granted and 'not the one asked for' in result.reason
    assert [a.state for a in db.list_remote_allocations()] == ['refused']
    assert agents.calls[-1][0] == 'release'


def test_what_a_host_lends_is_not_offered_again(conf, db):
    """The reservoir a lender reports still counts its slabs: the
    controller offers only what is left of it, until a slab comes back."""
    gp = _gp(_hosts(db, ('s', 4096), ('c', 0)), FakeAgents(), conf)
    first = gp.alloc(_req(3072), sender='c')
    assert first.granted
    again = gp.alloc(_req(2048), sender='c')
    assert not again.granted and 'no live host' in again.reason
    assert gp.alloc(_req(1024), sender='c').granted      # what is left
    assert gp.release(objects.AllocationRef(
        allocation_id=first.device.allocation_id), sender='c')['released']
    assert gp.alloc(_req(2048), sender='c').granted


def test_alloc_refusals_are_recorded(conf, db):
    gp = _gp(_hosts(db, ('c', 0)), FakeAgents(), conf)
    assert not gp.alloc(_req(), sender='c').granted
    assert 'no live host' in gp.alloc(_req(), sender='c').reason
    assert not gp.alloc(_req(0), sender='c').granted
    assert not gp.alloc(_req(), sender=None).granted
    assert db.list_remote_allocations() == []    # nothing was asked
    _hosts(db, ('s', 4096))
    for agents in (FakeAgents(grant=False), FakeAgents(fail=True)):
        result = _gp(db, agents, conf).alloc(_req(), sender='c')
        assert not result.granted
    allocs = db.list_remote_allocations(host='s')
    assert [a.state for a in allocs] == ['refused'] * 2
    assert 'full' in allocs[0].reason and 'did not answer' in allocs[1].reason


def test_reclaim_takes_back_largest_first_until_enough(conf, db):
    agents = FakeAgents()
    gp = _gp(_hosts(db, ('s', 10_000)), agents, conf)
    sizes = [1000, 3000, 2000]
    ids = [gp.alloc(_req(s), sender='c').device.allocation_id
           for s in sizes]
    freed = gp.reclaim(objects.ReclaimRequest(server_host='s', size_kb=4000),
                       sender='s')
    assert freed == 5000
    states = [db.get_remote_allocation(i).state for i in ids]
    assert states == ['granted', 'released', 'released']
    calls = [c[0] for c in agents.calls]
    # the client detaches first, then the lender frees
    assert calls[3:] == ['reclaim', 'release', 'reclaim', 'release']


def test_reclaim_of_named_allocations_takes_exactly_those(conf, db):
    """RPC 1.5: the lender names the allocations it takes back (it deletes
    exactly those after its timeout); its others stay, and a name that is
    not one of its allocations is ignored."""
    agents = FakeAgents()
    gp = _gp(_hosts(db, ('s', 10_000), ('c', 0)), agents, conf)
    small, big = (gp.alloc(_req(s), sender='c').device for s in (1000, 3000))
    freed = gp.reclaim(objects.ReclaimRequest(
        server_host='s', size_kb=1000,
        allocation_ids=[small.allocation_id, 'not-an-allocation']),
        sender='s')
    assert freed == 1000
    state = {a: db.get_remote_allocation(a).state for a in (
        small.allocation_id, big.allocation_id)}
    assert state == {small.allocation_id: 'released',
                     big.allocation_id: 'granted'}


def test_a_client_whose_slab_failed_closes_it_as_failed(conf, db):
    agents = FakeAgents()
    gp = _gp(_hosts(db, ('s', 4096), ('c', 0)), agents, conf)
    aid = gp.alloc(_req(), sender='c').device.allocation_id
    reply = gp.release(objects.AllocationRef(
        allocation_id=aid, reason='lender down', failed=True), sender='c')
    assert reply == {'released': True, 'reason': ''}
    assert db.get_remote_allocation(aid).state == 'failed'
    # the lender is told to free what may be left of the slab
    assert agents.calls[-1] == ('release', 's', aid)
    # a second report of the same failure changes nothing
    again = gp.release(objects.AllocationRef(allocation_id=aid,
                                             failed=True), sender='c')
    assert again['released'] is False


def test_a_reclaim_the_client_did_not_answer_is_retried(conf, db):
    class Deaf(FakeAgents):
        def lmc_reclaim(self, host, ref):
            super().lmc_reclaim(host, ref)
            if len([c for c in self.calls if c[0] == 'reclaim']) == 1:
                raise messaging.MessagingTimeout('client busy')
    agents = Deaf()
    gp = _gp(_hosts(db, ('s', 4096), ('c', 0)), agents, conf)
    aid = gp.alloc(_req(), sender='c').device.allocation_id
    assert gp.reclaim(objects.ReclaimRequest(
        server_host='s', size_kb=1024, allocation_ids=[aid]),
        sender='s') == 0
    assert db.get_remote_allocation(aid).state == 'reclaiming'
    # both still list it: the client is told again at reconciliation
    db.store_report(objects.HostReport(
        host='s', boot_id='b', seq=2, timestamp=NOW, hypervisor='sim',
        memory_total_kb=1 << 24, memory_free_kb=1 << 23, cpu_count=4,
        cpu_util=0.1, reservoir_kb=4096, remote_exports=[aid]))
    db.store_report(objects.HostReport(
        host='c', boot_id='b', seq=2, timestamp=NOW, hypervisor='sim',
        memory_total_kb=1 << 24, memory_free_kb=1 << 23, cpu_count=4,
        cpu_util=0.1, reservoir_kb=0, remote_attachments=[aid]))
    assert gp.reconcile() == []
    assert agents.calls[-1] == ('reclaim', 'c', aid)
