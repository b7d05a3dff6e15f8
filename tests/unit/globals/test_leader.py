"""Leader lease of consolidation rounds (memmut.globals.leader): two
controllers on one database never both run a round; a round that loses
the lease executes nothing more."""

import threading

from memmut.globals import executor as executor_mod
from memmut.globals import leader
from memmut.globals import rounds
from tests.unit.globals import test_rounds as tr


def leadership(db, clock, holder, duration=900.0):
    return leader.Leadership(db, holder, duration, clock=clock)


def test_only_the_lease_holder_runs_rounds(db, clock):
    tr.underloaded_pair(db, clock)
    a, b = tr.FakeExecutor(db), tr.FakeExecutor(db)
    ra = rounds.RoundRunner(tr.round_conf(), db, executor_factory=a.factory,
                            clock=clock, leader=leadership(db, clock, 'A'))
    rb = rounds.RoundRunner(tr.round_conf(), db, executor_factory=b.factory,
                            clock=clock, leader=leadership(db, clock, 'B'))
    first = ra.run(dry_run=True)
    assert first.status == 'completed'
    busy = rb.run(dry_run=True)
    assert (busy.status, busy.round_id) == ('busy', None)
    assert 'A' in busy.reason
    # The leader keeps it from round to round ...
    assert ra.run(dry_run=True).status == 'completed'
    # ... until it stops (release): the other takes over at once.
    ra.release()
    assert rb.run(dry_run=True).status == 'completed'
    assert ra.run(dry_run=True).status == 'busy'
    assert len(db.list_rounds()) == 3


def test_an_expired_lease_is_taken_over_and_old_rounds_closed(db, clock):
    tr.underloaded_pair(db, clock)
    la, lb = leadership(db, clock, 'A', 60), leadership(db, clock, 'B', 60)
    # A died in the middle of a round: its row stays running.
    assert la.acquire()
    dead = db.create_round(parameters={})
    rb = rounds.RoundRunner(tr.round_conf(), db, clock=clock, leader=lb)
    assert rb.recover() == []          # A's lease still runs
    assert rb.run(dry_run=True).status == 'busy'
    clock.advance(61)
    result = rb.run(dry_run=True)
    assert result.status == 'completed'
    assert db.get_round(dead.id).status == 'failed'


def test_recover_takes_the_lease_only_for_the_time_of_it(db, clock):
    la, lb = leadership(db, clock, 'A'), leadership(db, clock, 'B')
    dead = db.create_round(parameters={})
    ra = rounds.RoundRunner(tr.round_conf(), db, clock=clock, leader=la)
    assert ra.recover() == [dead.id]
    assert lb.acquire()


def test_a_round_that_lost_the_lease_executes_nothing(db, clock):
    tr.underloaded_pair(db, clock)
    la, lb = leadership(db, clock, 'A', 60), leadership(db, clock, 'B', 60)
    fake = tr.FakeExecutor(db)
    runner = rounds.RoundRunner(tr.round_conf(), db,
                                executor_factory=fake.factory, clock=clock,
                                leader=la)
    real_plan = rounds.planner.plan

    def plan_then_lose(*args, **kwargs):
        # Planning took longer than the lease; B took it meanwhile.
        out = real_plan(*args, **kwargs)
        clock.advance(61)
        assert lb.acquire()
        return out
    rounds.planner.plan = plan_then_lose
    try:
        result = runner.run(dry_run=False)
    finally:
        rounds.planner.plan = real_plan
    assert result.migrations, 'the pair should be consolidated'
    assert fake.calls == []
    assert result.status == 'failed'
    assert 'lost the consolidation lease before executing' in result.reason
    assert {m.status for m in db.list_migrations(result.round_id)} == \
        {'cancelled'}
    assert db.get_round(result.round_id).status == 'failed'


def test_a_lease_lost_while_executing_stops_the_executor(db, clock):
    tr.underloaded_pair(db, clock)
    la, lb = leadership(db, clock, 'A', 0.3), leadership(db, clock, 'B', 60)
    stopped = threading.Event()

    class Waiting(tr.FakeExecutor):
        def execute(self, migrations):
            # B takes the expired lease; A's next renewal fails and sets
            # the round's stop event, which the executor watches.
            clock.advance(1)
            assert lb.acquire()
            if self.stop.wait(10):
                stopped.set()
            out = {}
            for m in migrations:
                self.db.update_migration(m.id, 'cancelled', error='stop')
                out[m.id] = executor_mod.Outcome('cancelled', 0, 'stop',
                                                 m.dest_host)
            return out
    fake = Waiting(db)
    powered = []
    runner = rounds.RoundRunner(
        tr.round_conf(), db, executor_factory=fake.factory, clock=clock,
        leader=la, power_off=lambda h: powered.append(h) or (True, 'ok'))
    result = runner.run(dry_run=False)
    assert stopped.is_set()
    assert powered == []
    assert 'lost the consolidation lease while executing' in result.reason
    assert result.status == 'failed'


def test_one_controller_at_a_time_rolls_samples_up(db, clock):
    from memmut.globals import service as controller_service
    from memmut import rpc
    from tests import common
    end = tr.underloaded_pair(db, clock)
    services, transports, confs = [], [], []
    for name in ('c1', 'c2'):
        conf = common.private_conf(
            DEFAULT={'host': name},
            controller={'raw_sample_retention': 1800})
        transport = rpc.get_transport(conf)
        services.append(controller_service.ControllerService(
            conf, transport, db))
        transports.append(transport)
        confs.append(conf)
    try:
        raw, _ = db.count_samples()
        rolled, purged = services[0]._housekeep_once(now=end)
        assert rolled > 0 and purged == 0
        assert services[1]._housekeep_once(now=end + 600) == (0, 0)
        assert services[0]._housekeep_once(now=end + 600)[0] > 0
        left, rollups = db.count_samples()
        # 2 VMs, 5 polls per 300 s interval: far fewer rows.
        assert left + rollups < raw / 2
        services[0]._rollup_lease.release()
        assert services[1]._housekeep_once(now=end + 900)[0] > 0
    finally:
        for t, c in zip(transports, confs):
            t.cleanup()
            c.reset()


def test_without_rollups_old_samples_are_purged(db, clock):
    from memmut.globals import service as controller_service
    from memmut import rpc
    from tests import common
    end = tr.underloaded_pair(db, clock)
    conf = common.private_conf(controller={'raw_sample_retention': 0,
                                           'sample_retention': 3600})
    transport = rpc.get_transport(conf)
    try:
        svc = controller_service.ControllerService(conf, transport, db)
        rolled, purged = svc._housekeep_once(now=end)
        assert rolled == 0 and purged > 0
        assert db.count_samples()[1] == 0
    finally:
        transport.cleanup()
        conf.reset()


# -- a dead holder of this host is replaced at once ---------------------------

def _sleeper():
    """A live process that is not a controller."""
    import subprocess
    import sys
    return subprocess.Popen([sys.executable, '-c',
                             'import time; time.sleep(120)'])


def _holder_of(host, proc, token='0badc0de', **change):
    import dataclasses
    proc = dataclasses.replace(proc, **change)
    return '%s:%d:%s proc=%s/%d/%d/%d' % (
        host, proc.pid, token, proc.boot_id, proc.pidns, proc.pid,
        proc.start)


def test_the_holder_records_host_boot_pid_namespace_pid_and_start():
    import os
    me = leader.process()
    assert me is not None and me.pid == os.getpid()
    holder = leader.holder_id('node-1:a', tag='cli')
    assert holder.startswith('node-1:a:%d:' % os.getpid())
    assert leader.parse_holder(holder) == ('node-1:a', me)
    assert leader.parse_holder('ctl-0') is None         # old style
    assert leader.parse_holder('node-1:%d:0123abcd' % os.getpid()) is None
    # this very process is alive
    assert leader.gone(holder, 'node-1:a') is None


def test_a_restarted_controller_takes_its_dead_lease_at_once(db, clock):
    from tests.harness import lease_holder
    proc, theirs = lease_holder.start(db.url, 'node-1', clock())
    try:
        mine = leadership(db, clock, leader.holder_id('node-1'))
        assert not mine.acquire()               # it runs: not before expiry
        assert mine.holder_now() == theirs
        other_host = leadership(db, clock, leader.holder_id('node-2'))
        proc.kill()
        proc.wait()
        # another host cannot tell whether it is gone: it waits
        assert not other_host.acquire()
        assert mine.acquire() and mine.new
        lease = db.get_lease(leader.CONSOLIDATION)
        assert (lease.holder, lease.acquired_at) == (mine.holder, clock())
        assert lease.expires_at == clock() + 900.0
    finally:
        proc.kill()
        proc.wait()


def test_a_killed_but_unreaped_holder_counts_as_gone(db, clock):
    from tests.harness import lease_holder
    proc, theirs = lease_holder.start(db.url, 'node-1', clock())
    try:
        proc.kill()
        import time
        for _ in range(200):        # until the kernel made it a zombie
            if leader._stat(proc.pid)[0] == 'Z':
                break
            time.sleep(0.01)
        assert 'has exited' in leader.gone(theirs, 'node-1')
        mine = leadership(db, clock, leader.holder_id('node-1'))
        assert mine.acquire()
    finally:
        proc.wait()


def test_two_live_controllers_of_one_host_never_take_each_others_lease(
        db, clock):
    from tests.harness import lease_holder
    proc, theirs = lease_holder.start(db.url, 'node-1', clock())
    try:
        for _ in range(3):
            assert not leadership(db, clock,
                                  leader.holder_id('node-1')).acquire()
        # and in one process, two holders (this process is alive)
        proc.kill()
        proc.wait()
        first = leadership(db, clock, leader.holder_id('node-1'))
        second = leadership(db, clock, leader.holder_id('node-1'))
        assert first.acquire()
        assert not second.acquire()
        assert db.get_lease(leader.CONSOLIDATION).holder == first.holder
    finally:
        proc.kill()
        proc.wait()


def test_what_cannot_be_checked_is_left_to_expire():
    child = _sleeper()
    try:
        alive = leader.process(child.pid)
        assert alive is not None and alive.pid == child.pid
        # alive, same start time: not gone
        assert leader.gone(_holder_of('h', alive), 'h') is None
        # the pid runs a process started at another time: pid reused
        assert 'another process' in leader.gone(
            _holder_of('h', alive, start=alive.start - 1), 'h')
    finally:
        child.kill()
        child.wait()
    dead = alive
    assert leader.gone(_holder_of('h', dead), 'h')     # (or pid reused)
    # another host name, boot or PID namespace: cannot tell, not gone
    assert leader.gone(_holder_of('h', dead), 'other') is None
    assert leader.gone(_holder_of(
        'h', dead, boot_id='00000000-0000-0000-0000-000000000000'),
        'h') is None
    assert leader.gone(_holder_of('h', dead, pidns=dead.pidns + 1),
                       'h') is None
    # written without the process fields (older memmut)
    assert leader.gone('h:%d:0123abcd' % dead.pid, 'h') is None
