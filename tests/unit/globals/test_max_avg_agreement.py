"""Agent and controller agree on a VM's WSS^max_avg: the controller packs
on the figure the agent computed, never on one of its own."""

from memmut.agent import manager
from memmut.globals import rounds
from memmut.virt import simulated
from tests import common
from tests.unit.test_agent_manager import FakeController


def test_controller_history_is_the_agents_max_avg(db, clock):
    conf = common.private_conf(
        DEFAULT={'host': 'node1'},
        badis={'round_interval': 10.0, 'time_slice': 60.0,
               'average_window': 3},
        simulated_hypervisor={'step_seconds': 60})
    driver = simulated.SimDriver(conf, clock=clock, vms=['a:1024:W5:800'])
    agent = manager.AgentManager(conf, driver, FakeController(),
                                 clock=clock)
    reported = []
    for _ in range(120):
        clock.advance(5.0)
        report = agent.poll_once()
        db.store_report(report)
        reported.append((report.timestamp, report.vms[0]))
    uuid = reported[0][1].uuid
    first_seen = db.list_vms()[0].first_seen
    series = db.vm_series(since=0.0)[uuid]
    compared = 0
    for t, vm in reported:
        if vm.wss_max_avg_kb is None or t - first_seen < 60.0:
            continue
        hist = rounds.memory_history(
            [s for s in series if s.timestamp <= t], end=t, interval=5.0,
            length=1, booked_mb=vm.booked_kb / 1024.0,
            first_seen=first_seen, time_slice=60.0)
        assert hist == [min(vm.wss_max_avg_kb, vm.booked_kb) / 1024.0]
        # the VM's own slice: time_slice, longer while shortages recur
        # (at most time_slice_max_slices = 15 of them)
        assert vm.max_avg_window == 3
        assert 60.0 <= vm.max_avg_slice_s <= 15 * 60.0
        assert vm.badis_mode in ('V', 'VG', 'G')
        compared += 1
    assert compared > 50
    # The series moves (W5 rises and falls), so agreement is not trivial.
    assert len({vm.wss_max_avg_kb for _, vm in reported
                if vm.wss_max_avg_kb}) > 3
