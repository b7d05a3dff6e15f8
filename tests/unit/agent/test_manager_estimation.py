"""The agent's estimation + actuation wiring (AgentManager.poll_once)."""

import logging

from memmut.agent.mutualization import local_controller
from memmut.agent import manager
from memmut.virt import simulated
from tests import common
from tests.unit.test_agent_manager import FakeController

MIB = 1024


def make(clock, vms=('a:1024:W2:800',), **groups):
    opts = {'DEFAULT': {'host': 'node1'},
            'badis': {'round_interval': 10.0, 'time_slice': 30.0},
            'simulated_hypervisor': {'step_seconds': 600}}
    for g, v in groups.items():
        opts.setdefault(g, {}).update(v)
    conf = common.private_conf(**opts)
    d = simulated.SimDriver(conf, clock=clock, vms=list(vms))
    return manager.AgentManager(conf, d, FakeController(), clock=clock), d


def polls(agent, clock, n, dt=5.0):
    reports = []
    for _ in range(n):
        clock.advance(dt)
        reports.append(agent.poll_once())
    return reports


def test_reports_carry_estimates_and_balloons_follow(clock, caplog):
    agent, d = make(clock)
    caplog.set_level(logging.INFO)
    reports = polls(agent, clock, 20)
    first = reports[0].vms[0]
    assert first.wss_kb is None and first.wss_estimator is None
    last = reports[-1].vms[0]
    assert last.wss_estimator == 'badis/sim+balloon_stats'
    assert 0 < last.wss_kb <= last.booked_kb
    vm = next(iter(d.vms.values()))
    assert vm.balloon_kb < vm.booked_kb          # W2 starts high, yet
    assert 'balloon shrink' in caplog.text       # demand < booked - headroom
    assert vm.name in caplog.text and vm.uuid in caplog.text
    assert agent.estimation.cpu_seconds > 0
    # what Badis learned goes to the controller with each sample
    state = agent.estimation.badis.state(vm.uuid)
    assert last.pinned_kb == state.pinned_kb
    assert last.pinned_note == (state.pinned_note or None)
    assert last.pinned_at == state.pinned_at
    assert last.shrink_floor_kb == state.floor.kb
    assert last.shrink_floor_note == (state.floor_note or None)
    assert last.shrink_floor_at == state.floor_at


def test_estimation_only_leaves_balloons_alone(clock):
    agent, d = make(clock, agent={'balloon_actuation': False})
    reports = polls(agent, clock, 20)
    assert reports[-1].vms[0].wss_kb is not None
    assert all(v.balloon_kb == v.booked_kb for v in d.vms.values())


def test_estimator_none_reports_nothing_and_moves_nothing(clock):
    agent, d = make(clock, agent={'wss_estimator': 'none'})
    reports = polls(agent, clock, 10)
    assert reports[-1].vms[0].wss_kb is None
    assert all(v.balloon_kb == v.booked_kb for v in d.vms.values())


def test_baseline_estimator_is_named_in_reports(clock):
    agent, d = make(clock, agent={'wss_estimator': 'balloon_stats'})
    reports = polls(agent, clock, 6)
    assert reports[-1].vms[0].wss_estimator == 'balloon_stats'


class RecordingLocalController:
    made = []

    def __init__(self, conf, driver, controller_api):
        self.steps = []
        self.reservoir_kb = 4242
        RecordingLocalController.made.append(self)

    def step(self, vms, estimates, now):
        self.steps.append((list(vms), dict(estimates), now))

    def vm_status(self, uuid):
        return local_controller.VMStatus(
            uuid=uuid, role='server', mem_init_kb=1 << 20,
            alloc_kb=768 << 10, lent_kb=256 << 10, borrowed_kb=0)


def test_mutualization_enabled_hands_estimates_to_the_local_controller(
        clock, monkeypatch):
    monkeypatch.setattr(local_controller, 'LocalController',
                        RecordingLocalController)
    RecordingLocalController.made = []
    agent, d = make(clock, mutualization={'enabled': True})
    reports = polls(agent, clock, 6)
    lc = RecordingLocalController.made[0]
    assert len(lc.steps) == 6
    vms, estimates, now = lc.steps[-1]
    assert {v.uuid for v in vms} == set(d.vms)
    assert set(estimates) == set(d.vms) and now == clock()
    assert reports[-1].reservoir_kb == 4242
    sample = reports[-1].vms[0]
    assert (sample.mut_role, sample.mem_init_kb, sample.lent_kb,
            sample.borrowed_kb) == ('server', 1 << 20, 256 << 10, 0)
    # the single-VM loop did not run alongside
    assert all(v.balloon_kb == v.booked_kb for v in d.vms.values())


def test_without_mutualization_samples_carry_no_role(clock):
    agent, d = make(clock)
    sample = polls(agent, clock, 2)[-1].vms[0]
    assert (sample.mut_role, sample.lent_kb, sample.borrowed_kb) == \
        (None, 0, 0)


def test_vm_that_leaves_is_forgotten_by_the_pipeline(clock):
    agent, d = make(clock, vms=('a:512:W1', 'b:512:W3'))
    polls(agent, clock, 4)
    gone = next(u for u, v in d.vms.items() if v.name == 'b')
    del d.vms[gone]
    polls(agent, clock, 1)
    assert gone not in agent.estimation._vms
    assert gone not in agent.estimation.badis.states
