"""Agent and controller services end to end, in one process: sim driver,
in-process RPC transport, SQLite. The same pipeline as memmut-demo."""

import time

import oslo_messaging as messaging
import pytest

from memmut.agent import service as agent_service
from memmut.globals import service as controller_service
from memmut import rpc
from tests import common


def wait_until(check, timeout=20.0, what='condition'):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError('timed out waiting for %s' % what)


@pytest.fixture
def pipeline(db):
    conf = common.private_conf(
        DEFAULT={'host': 'node1'},
        agent={'poll_interval': 0.1, 'report_timeout': 0.5},
        simulated_hypervisor={'vms': ['a:512:W1', 'b:512:W3'],
                              'time_scale': 60.0})
    transport = rpc.get_transport(conf)
    agent = agent_service.AgentService(conf, transport)
    parts = {'conf': conf, 'db': db, 'agent': agent,
             'controller': controller_service.ControllerService(
                 conf, transport, db)}
    yield parts
    agent.stop()
    parts['controller'].stop()
    transport.cleanup()
    conf.reset()


def test_reports_reach_the_database(pipeline):
    db = pipeline['db']
    pipeline['controller'].start()
    pipeline['agent'].start()
    wait_until(lambda: db.count_reports('node1') >= 3, what='3 reports')
    vms = db.list_vms('node1')
    assert sorted(v.name for v in vms) == ['a', 'b']
    for vm in vms:
        samples = db.vm_samples(vm.uuid)
        assert samples and samples[-1].booked_kb == 512 * 1024
        assert 'unused' in samples[-1].memory_stats


def test_controller_restart_loses_no_report(pipeline):
    db, agent = pipeline['db'], pipeline['agent']
    conf = pipeline['conf']
    controller = pipeline['controller']
    controller.start()
    agent.start()
    wait_until(lambda: db.count_reports('node1') >= 2, what='first reports')
    controller.stop()
    # While the controller is away the agent keeps polling and keeps its
    # reports (the in-process transport fails fast with a timeout).
    wait_until(lambda: agent.manager.controller_up is False
               and len(agent.manager.backlog) >= 3, what='a backlog')
    restarted = controller_service.ControllerService(
        conf, rpc.get_transport(conf), db)
    pipeline['controller'] = restarted
    restarted.start()
    wait_until(lambda: agent.manager.controller_up and
               not agent.manager.backlog, what='backlog flushed')
    wait_until(lambda: db.count_reports('node1') >= agent.manager.seq - 1,
               what='catch up')
    seqs = [s.seq for s in db.host_samples('node1')]
    assert seqs == list(range(1, len(seqs) + 1)), 'a report was lost'
    assert len(seqs) >= 5


def test_unreachable_controller_is_a_messaging_error(pipeline):
    # No controller at all: report() must raise (for the agent to keep the
    # report) rather than block or swallow it.
    api = pipeline['agent'].manager.controller
    report = pipeline['agent'].manager.poll_once()
    with pytest.raises(messaging.MessagingException):
        api.report(report, timeout=0.2)
