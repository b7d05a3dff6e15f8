import logging

import oslo_messaging as messaging
import pytest

from memmut.agent import manager
from memmut import objects
from memmut.virt import driver
from memmut.virt import simulated


class FakeController:
    """Stands in for ControllerAPI; can be switched off like a dead GMC."""

    def __init__(self):
        self.up = True
        self.stored = {}

    def report(self, report, timeout=None):
        if not self.up:
            raise messaging.MessagingTimeout('no reply')
        key = (report.host, report.boot_id, report.seq)
        new = key not in self.stored
        self.stored[key] = report
        return new


class FlakyDriver(simulated.SimDriver):
    down = False

    def connect(self):
        if self.down:
            raise driver.HypervisorUnavailable('socket gone')


@pytest.fixture
def parts(conf, clock):
    d = FlakyDriver(conf, clock=clock, vms=['a:512:W1', 'b:512:W3'])
    ctl = FakeController()
    return manager.AgentManager(conf, d, ctl, clock=clock), d, ctl


def test_poll_adopts_vms_and_reports(parts):
    agent, d, ctl = parts
    report = agent.poll_once()
    assert agent.flush() == 1
    assert {v.name for v in report.vms} == {'a', 'b'}
    assert report.host == 'node1' and report.seq == 1
    assert set(d.stats_periods.values()) == {1}
    assert list(ctl.stored) == [('node1', agent.boot_id, 1)]


def test_reports_kept_while_controller_down_then_sent_in_order(parts, caplog):
    agent, d, ctl = parts
    ctl.up = False
    caplog.set_level(logging.INFO)
    for _ in range(3):
        agent.poll_once()
        agent.flush()
    assert len(agent.backlog) == 3 and not ctl.stored
    assert sum('Controller unreachable' in r.message
               for r in caplog.records) == 1
    ctl.up = True
    agent.poll_once()
    assert agent.flush() == 4
    assert [k[2] for k in ctl.stored] == [1, 2, 3, 4]
    assert any('Controller is back' in r.message for r in caplog.records)


def test_backlog_is_bounded(parts, conf):
    agent, d, ctl = parts
    conf.set_override('report_backlog', 2, group='agent')
    ctl.up = False
    for _ in range(5):
        agent.poll_once()
    assert [r.seq for r in agent.backlog] == [4, 5]


def test_hypervisor_outage_skips_polls_and_resyncs(parts, caplog, clock):
    agent, d, ctl = parts
    caplog.set_level(logging.INFO)
    agent.poll_once()
    d.stats_periods.clear()
    d.down = True
    assert agent.poll_once() is None and agent.poll_once() is None
    assert sum('unavailable' in r.message for r in caplog.records) == 1
    d.down = False
    clock.advance(5)
    report = agent.poll_once()
    assert report.seq == 2
    assert len(d.stats_periods) == 2          # settings re-applied
    assert any('is back' in r.message for r in caplog.records)


def test_vm_that_leaves_is_forgotten(parts):
    agent, d, ctl = parts
    agent.poll_once()
    gone = next(iter(d.vms))
    del d.vms[gone]
    report = agent.poll_once()
    assert len(report.vms) == 1 and gone not in agent.samples


def test_samples_history_is_bounded(parts, conf, clock):
    agent, d, ctl = parts
    conf.set_override('sample_history', 3, group='agent')
    agent.samples.clear()
    agent._adopted.clear()
    for _ in range(5):
        clock.advance(1)
        agent.poll_once()
    assert all(len(q) == 3 for q in agent.samples.values())


def _lmc_alloc(agent, **kw):
    fields = dict(allocation_id='x', client_host='c', vm_uuid='v',
                  size_kb=1024, psk_identity='memmut-alloc-x',
                  psk_key='0f' * 32)
    fields.update(kw)
    return objects.AllocResult.from_primitive(agent.lmc_alloc(
        {}, objects.LmcAllocRequest(**fields).to_primitive()))


def test_lmc_calls_answer_without_a_memstore(parts, monkeypatch):
    agent, d, ctl = parts
    monkeypatch.setattr(agent, '_reservoir_kb', lambda: 1 << 20)
    result = _lmc_alloc(agent)
    assert not result.granted and 'memstore' in result.reason
    # What the request says is checked before memstore is asked.
    for kw, why in ((dict(client_host=agent.host), 'itself'),
                    (dict(size_kb=0), 'positive'),
                    (dict(size_kb=2 << 20), 'reservoir'),
                    (dict(psk_key=None), 'credentials'),
                    (dict(psk_identity='memmut-alloc-y'), 'identity'),
                    (dict(psk_key='short'), 'hex')):
        result = _lmc_alloc(agent, **kw)
        assert not result.granted and why in result.reason, (kw, result)
    # Nothing is lent or used, and the reports say so (RPC 1.3).
    agent.lmc_release({}, {'allocation_id': 'x'})
    agent.lmc_reclaim({}, {'allocation_id': 'x'})
    report = agent.poll_once()
    assert (report.remote_exports, report.remote_attachments) == ([], [])
    # A malformed request is an expected error for the caller, not a
    # server-side traceback.
    with pytest.raises(messaging.ExpectedException) as exc:
        agent.lmc_alloc({}, {'allocation_id': 'x'})
    assert isinstance(exc.value.exc_info[1], objects.SchemaError)


def test_an_unreadable_vm_is_kept_and_left_alone(conf, clock):
    """A VM libvirt cannot read this poll (listed stale) keeps its
    estimation state and is not ballooned; the others go on."""
    import dataclasses

    class Stale(simulated.SimDriver):
        stale = set()
        balloons = []

        def list_vms(self):
            return [dataclasses.replace(v, state='unknown', stale=True)
                    if v.uuid in self.stale else v
                    for v in super().list_vms()]

        def _set_balloon(self, uuid, kib):
            self.balloons.append(uuid)
            super()._set_balloon(uuid, kib)

    d = Stale(conf, clock=clock, vms=['a:512:W1', 'b:512:W3'])
    agent = manager.AgentManager(conf, d, FakeController(), clock=clock)
    uuids = {v.name: v.uuid for v in d.list_vms()}
    for _ in range(30):
        clock.advance(5)
        agent.poll_once()
    assert set(uuids.values()) <= set(agent.estimation._vms)
    d.stale = {uuids['a']}
    d.balloons.clear()
    for _ in range(30):
        clock.advance(5)
        report = agent.poll_once()
    assert uuids['a'] in agent.estimation._vms       # not forgotten
    assert uuids['a'] in agent.samples
    assert uuids['a'] not in d.balloons              # not acted on
    states = {v.name: v.state for v in report.vms}
    assert states == {'a': 'unknown', 'b': 'running'}


def test_a_failed_host_read_skips_the_poll_not_the_hypervisor(
        conf, clock, caplog):
    class HostFlaky(simulated.SimDriver):
        fail = False

        def host_info(self):
            if self.fail:
                raise driver.HostReadFailed(
                    'libvirt error 86: agent unresponsive')
            return super().host_info()

    d = HostFlaky(conf, clock=clock, vms=['a:512:W1'])
    agent = manager.AgentManager(conf, d, FakeController(), clock=clock)
    assert agent.poll_once() is not None and agent.hypervisor_up
    d.fail = True
    caplog.set_level(logging.WARNING)
    assert [agent.poll_once() for _ in range(3)] == [None] * 3
    assert agent.hypervisor_up                     # not marked down
    assert caplog.text.count('Reading the host failed') == 1
    d.fail = False
    assert agent.poll_once() is not None


def test_remote_policy_gets_each_rounds_unmet_demand(parts, monkeypatch):
    agent, d, ctl = parts
    from memmut.agent import remote
    assert isinstance(agent.remote, remote.NoRemoteMemory)
    assert isinstance(agent.remote_policy, remote.RemoteClientPolicy)
    seen = []
    monkeypatch.setattr(agent.remote_policy, 'step',
                        lambda unmet, vms: seen.append((unmet, vms)))

    class Plan:
        unmet_kb = {'u1': 2048}

    class Result:
        plan = Plan()
    monkeypatch.setattr(agent.balloon_controller, 'step',
                        lambda vms, est, now: Result())
    vms = d.list_vms()
    agent._actuate(vms, 0)
    assert seen == [({'u1': 2048}, {vm.uuid for vm in vms})]
    # a round that planned nothing: None, allocations are only checked
    Result.plan = None
    agent._actuate(vms, 0)
    assert seen[-1][0] is None

    def boom(unmet, vms):
        raise RuntimeError('policy bug')
    monkeypatch.setattr(agent.remote_policy, 'step', boom)
    agent._actuate(vms, 0)      # logged, the poll goes on


def test_a_lender_whose_vms_lack_memory_reclaims_and_lends_no_more(
        parts, monkeypatch):
    """Local needs first (seed 004): with unmet local demand the lender
    asks its slabs back (GMC_reclaim), borrows nothing itself, and refuses
    new LMC_allocs until its VMs are satisfied."""
    agent, d, ctl = parts
    from memmut.agent.mutualization import books as bookmod
    books = bookmod.Books(8 << 20, 1 << 20)
    books.export('a1', 4096)
    monkeypatch.setattr(agent, '_books', lambda: books)
    agent.lender.books = agent._books
    monkeypatch.setattr(agent, '_reservoir_kb', lambda: books.reservoir_kb)
    asked, seen = [], []
    ctl.gmc_reclaim = lambda req, timeout=None: asked.append(req) or 0
    monkeypatch.setattr(agent.remote_policy, 'step',
                        lambda unmet, vms: seen.append(unmet))

    class Plan:
        unmet_kb = {'u1': 2048}

    class Result:
        plan = Plan()
    monkeypatch.setattr(agent.balloon_controller, 'step',
                        lambda vms, est, now: Result())
    agent._actuate(d.list_vms(), 0)
    assert [(r.server_host, r.size_kb, r.allocation_ids) for r in asked] \
        == [(agent.host, 4096, ['a1'])]
    assert seen == [None]           # it lends: it does not borrow
    result = _lmc_alloc(agent)
    assert not result.granted and 'its own VMs' in result.reason
    # the demand is met again, the reclaim ended: it lends again
    Plan.unmet_kb = {}
    books.release_export('a1')
    agent._actuate(d.list_vms(), 0)
    assert agent.lender.pending == {} and seen[-1] == {}
    result = _lmc_alloc(agent)
    assert 'its own VMs' not in result.reason
