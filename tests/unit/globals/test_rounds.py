"""Consolidation rounds: planner input from the database, stored plans,
execution through an executor (a fake here; nova in
tests/functional/nova), failures recorded instead of raised."""

import json
import threading
import time

import pytest

from memmut.consolidation import loader
from memmut.consolidation import planner
from memmut.db import api as db_api
from memmut.globals import executor as executor_mod
from memmut.globals import rounds
from memmut.globals import service as controller_service
from memmut import objects
from memmut import rpc
from tests import common

GIB_KB = 1 << 20
STEP = 60.0               # seconds between two agent reports


class VMSpec:
    def __init__(self, uuid, booked_kb=GIB_KB, wss_kb=256 << 10, cores=0.1,
                 nova=True, state='running', floor_kb=None):
        self.uuid, self.booked_kb, self.wss_kb = uuid, booked_kb, wss_kb
        self.cores, self.nova, self.state = cores, nova, state
        self.floor_kb = floor_kb    # the shrink floor the agent reports


def populate(db, clock, hosts, duration=2 * 3600.0, start=100000.0):
    """Agents report every STEP s for ``duration`` s; ``hosts`` maps a host
    name to (cpu_count, memory_kb, [VMSpec]). Returns the last report's
    time; the database clock stands just after it."""
    seq = 0
    t = start
    while t <= start + duration:
        seq += 1
        clock.t = t
        for name, (cpus, mem_kb, vms) in hosts.items():
            # A VM's working set may be a function of the time.
            wss = {v.uuid: v.wss_kb(t - start) if callable(v.wss_kb)
                   else v.wss_kb for v in vms}
            samples = [objects.VMReport(
                uuid=v.uuid, name='vm-' + v.uuid, timestamp=t,
                state=v.state, booked_kb=v.booked_kb, balloon_kb=v.booked_kb,
                cpu_time_ns=int(v.cores * (t - start) * 1e9),
                nova_instance=v.nova, wss_kb=wss[v.uuid],
                wss_max_avg_kb=wss[v.uuid], max_avg_window=5,
                max_avg_slice_s=3600.0, wss_estimator='badis',
                shrink_floor_kb=v.floor_kb) for v in vms]
            db.store_report(objects.HostReport(
                host=name, boot_id='boot-' + name, seq=seq, timestamp=t,
                hypervisor='sim', memory_total_kb=mem_kb,
                memory_free_kb=mem_kb // 2, cpu_count=cpus, cpu_util=0.1,
                vms=samples))
        t += STEP
    clock.t = t - STEP + 1.0
    return t - STEP


def round_conf(**consolidation):
    values = {'interval': 300, 'history_length': 12}
    values.update(consolidation)
    return common.private_conf(consolidation=values)


class FakeExecutor:
    """Records what it was asked; outcome per VM from ``statuses``."""

    def __init__(self, db, statuses=None, error=None):
        self.db = db
        self.statuses = statuses or {}
        self.error = error
        self.calls = []

    def factory(self, conf, db, stop):
        self.stop = stop
        return self

    def execute(self, migrations):
        if self.error:
            raise self.error
        self.calls.append([m.vm_uuid for m in migrations])
        out = {}
        for m in migrations:
            status = self.statuses.get(m.vm_uuid, 'completed')
            error = None if status == 'completed' else 'boom'
            self.db.update_migration(m.id, status, attempts=1, error=error)
            out[m.id] = executor_mod.Outcome(status, 1, error, m.dest_host)
        return out


# -- histories ---------------------------------------------------------------


class S:
    def __init__(self, t, cpu_s=0.0, wss_mb=None, host_id=1,
                 max_avg_mb=None, floor_mb=None):
        self.timestamp = t
        self.shrink_floor_kb = (None if floor_mb is None
                                else int(floor_mb * 1024))
        self.cpu_time_ns = int(cpu_s * 1e9)
        self.wss_kb = None if wss_mb is None else int(wss_mb * 1024)
        self.wss_max_avg_kb = (None if max_avg_mb is None
                               else int(max_avg_mb * 1024))
        self.host_id = host_id


def test_cpu_history_is_cpu_time_per_second_per_interval():
    # One VM using 0.5 core for 200 s then 1 core, sampled every 100 s,
    # binned in 200 s intervals ending at t=600: (200,400] (400,600].
    samples = [S(0, 0), S(100, 50), S(200, 100), S(300, 200), S(400, 300),
               S(500, 400), S(600, 500)]
    # (0,200]: 0.5 core; (200,400]: 1 core; (400,600]: 1 core.
    assert rounds.cpu_history(samples, 600.0, 200.0, 3, 1000.0) == \
        [500.0, 1000.0, 1000.0]
    # Only the newest two intervals kept.
    assert rounds.cpu_history(samples, 600.0, 200.0, 2, 1000.0) == \
        [1000.0, 1000.0]


def test_cpu_history_peak_is_the_busiest_stretch_of_each_interval():
    # 100 s at 0.2 core then 100 s at 1.8 cores, twice: the mean of each
    # 200 s interval is 1 core, its peak 1.8
    samples = [S(0, 0), S(100, 20), S(200, 200), S(300, 220), S(400, 400)]
    assert rounds.cpu_history(samples, 400.0, 200.0, 2, 1000.0) == \
        [1000.0, 1000.0]
    assert rounds.cpu_history(samples, 400.0, 200.0, 2, 1000.0,
                              'peak') == [1800.0, 1800.0]
    with pytest.raises(ValueError, match='unknown CPU statistic'):
        rounds.cpu_history(samples, 400.0, 200.0, 2, 1000.0, 'max')


def test_cpu_history_skips_counter_resets_and_host_changes():
    samples = [S(0, 100), S(100, 200), S(200, 5),          # QEMU restarted
               S(300, 55, host_id=2), S(400, 105, host_id=2)]
    # Only (0,100] (1 core) and (300,400] on host 2 (0.5 core) count.
    assert rounds.cpu_history(samples, 400.0, 100.0, 4, 1000.0) == \
        [1000.0, 500.0]


def test_memory_history_is_the_reported_max_avg_and_booked_while_cold():
    # The agent reports WSS^max_avg every 100 s; intervals of 200 s ending
    # at t=1000; time slice 400 s; first seen at t=0.
    reported = [100, 300, 100, 100, 200, 100, 500, 100, 300, 100, 100]
    samples = [S(100.0 * i, max_avg_mb=w) for i, w in enumerate(reported)]
    hist = rounds.memory_history(samples, 1000.0, 200.0, 5, 1024.0,
                                 first_seen=0.0, time_slice=400.0)
    # interval ends 200, 400, 600, 800, 1000: the newest sample of each
    # (t = 200, 400, ...), booked while younger than the time slice.
    assert hist == [1024.0, 200.0, 500.0, 300.0, 100.0]


def test_memory_history_first_estimate_replaces_the_cold_placeholder():
    # [consolidation] prewarm_history = first_estimate: the intervals of
    # the first time slice hold the first WSS^max_avg, not the booking
    # (a VM growing later then reads as growing, not as falling and
    # rising again); the rest is the same history.
    reported = [100, 300, 100, 100, 200, 100, 500, 100, 300, 100, 100]
    samples = [S(100.0 * i, max_avg_mb=w) for i, w in enumerate(reported)]
    kw = dict(first_seen=0.0, time_slice=400.0)
    booked = rounds.memory_history(samples, 1000.0, 200.0, 5, 1024.0, **kw)
    first = rounds.memory_history(samples, 1000.0, 200.0, 5, 1024.0,
                                  prewarm='first_estimate', **kw)
    assert booked[0] == 1024.0
    assert first == [200.0] + booked[1:]
    # still cold everywhere: nothing to take the place of the booking
    young = rounds.memory_history(samples[:4], 300.0, 100.0, 3, 1024.0,
                                  prewarm='first_estimate', **kw)
    assert young == [1024.0] * 3
    # the first warm interval reports no WSS^max_avg: unchanged
    old = [S(100.0 * i, wss_mb=200) for i in range(10)]
    assert rounds.memory_history(old, 900.0, 300.0, 3, 512.0, 0.0, 400.0,
                                 prewarm='first_estimate') == [512.0] * 3


def test_memory_history_carries_the_shrink_floor_when_asked():
    # [consolidation] pack_on_shrink_floor: a floor above WSS^max_avg is
    # what the balloon is held at, so the VM is packed on it; a floor
    # under it, none (0 or not reported) or above the booking change
    # nothing but the cap.
    floors = [None, 0, 150, 400, 900, 50]
    samples = [S(100.0 * (i + 1), max_avg_mb=200, floor_mb=f)
               for i, f in enumerate(floors)]
    kw = dict(first_seen=-1000.0, time_slice=400.0)
    sample_only = rounds.memory_history(samples, 600.0, 100.0, 6, 512.0,
                                        **kw)
    assert sample_only == [200.0] * 6
    assert rounds.memory_history(samples, 600.0, 100.0, 6, 512.0,
                                 carry_floor=True, **kw) == \
        [200.0, 200.0, 200.0, 400.0, 512.0, 200.0]
    # a cold VM still counts at its booking, floor or not
    assert rounds.memory_history(samples, 600.0, 100.0, 6, 512.0,
                                 first_seen=0.0, time_slice=10000.0,
                                 carry_floor=True) == [512.0] * 6


def test_build_input_packs_on_the_shrink_floor_by_default(db, clock):
    # WSS^max_avg 256 MiB, the agent holding a 400 MiB floor: the VM is
    # packed on 400 MiB + headroom unless the option is off
    populate(db, clock, {'h1': (4, 8 * GIB_KB, [
        VMSpec('a', floor_kb=400 << 10), VMSpec('b')])})
    got = {v.uuid: v.ram for v in rounds.build_input(
        round_conf(), db, clock()).vms}
    assert got == {'a': 432.0, 'b': 288.0}
    off = {v.uuid: v.ram for v in rounds.build_input(
        round_conf(pack_on_shrink_floor=False), db, clock()).vms}
    assert off == {'a': 288.0, 'b': 288.0}


def test_memory_history_counts_unreported_samples_at_booked():
    # An agent before RPC 1.1 reports wss_kb only.
    samples = [S(100.0 * i, wss_mb=200) for i in range(10)]
    assert rounds.memory_history(samples, 900.0, 300.0, 2, 512.0, 0.0,
                                 300.0) == [512.0, 512.0]


def test_memory_history_never_exceeds_booked():
    samples = [S(100.0 * i, max_avg_mb=900) for i in range(10)]
    assert rounds.memory_history(samples, 900.0, 300.0, 2, 512.0, 0.0,
                                 300.0) == [512.0, 512.0]


# -- planner input -----------------------------------------------------------


def test_build_input_reads_hosts_vms_and_histories(db, clock):
    conf = round_conf(cpu_core_mhz=1000.0)
    populate(db, clock, {
        'h1': (4, 8 * GIB_KB, [VMSpec('a', cores=0.5),
                               VMSpec('b', nova=False, cores=1.0,
                                      booked_kb=2 * GIB_KB,
                                      wss_kb=GIB_KB),
                               VMSpec('off', state='shutoff')]),
        'h2': (4, 8 * GIB_KB, [])})
    data = rounds.build_input(conf, db, clock())
    hosts = {h.name: h for h in data.hosts}
    assert sorted(hosts) == ['h1', 'h2']
    # b is not nova's: off the plan, off h1's capacity (1 core, its
    # WSS^max_avg 1 GiB + 5 % headroom = 1075.2 MiB).
    assert data.pinned == {'h1': ['b']}
    assert hosts['h1'].cpu_mhz == pytest.approx(3000.0)
    assert hosts['h1'].ram == pytest.approx(8192 - 1024 * 1.05)
    assert hosts['h1'].active and not hosts['h2'].active
    (vm,) = data.vms
    assert (vm.uuid, vm.host) == ('a', 'h1')
    assert len(vm.cpu_history) == 12        # history_length intervals
    assert vm.cpu_history[-1] == pytest.approx(500.0)
    # Two hours of 256 MiB estimates: warm, WSS^max_avg 256 MiB, packed
    # on 256 + max(32 MiB, 5 %) = 288 MiB.
    assert vm.mem_history[-1] == pytest.approx(256.0)
    assert vm.ram == pytest.approx(288.0)


def test_build_input_reserves_the_vms_in_flight_on_their_destination(
        db, clock):
    conf = round_conf(cpu_core_mhz=1000.0)
    populate(db, clock, {
        'h1': (4, 8 * GIB_KB, [VMSpec('a', cores=0.5),
                               VMSpec('m', cores=1.0)]),
        'h2': (4, 8 * GIB_KB, []),
        'h3': (4, 8 * GIB_KB, [])})
    data = rounds.build_input(conf, db, clock(),
                              in_flight={'m': ('h1', 'h2'),
                                         'gone': ('h1', 'h3')})
    hosts = {h.name: h for h in data.hosts}
    # m is not planned; on h2 its last CPU (1 core) and its packed
    # memory (256 MiB WSS^max_avg + 32 MiB) are set aside, and h2 is on
    assert [v.uuid for v in data.vms] == ['a']
    assert data.in_flight == {'m': ('h1', 'h2')}
    assert hosts['h2'].cpu_mhz == pytest.approx(3000.0)
    assert hosts['h2'].ram == pytest.approx(8192 - 288.0)
    assert hosts['h2'].active and hosts['h1'].active
    # a VM no longer reported reserves nothing
    assert hosts['h3'].ram == pytest.approx(8192.0)
    assert not hosts['h3'].active
    assert hosts['h1'].cpu_mhz == pytest.approx(4000.0)


def test_build_input_booked_basis_and_down_hosts(db, clock):
    conf = round_conf(memory_basis='booked')
    populate(db, clock, {'h1': (4, 8 * GIB_KB, [VMSpec('a')])})
    clock.advance(30.0)
    data = rounds.build_input(conf, db, clock())
    (vm,) = data.vms
    assert vm.ram == 1024.0 and set(vm.mem_history) == {1024.0}
    # The agent of h1 stops reporting: h1 and its VMs leave the plan.
    later = clock() + conf.controller.host_down_after + 1
    data = rounds.build_input(conf, db, later)
    assert data.hosts == [] and data.vms == []
    assert 'agent down' in data.excluded_hosts['h1']


def test_a_young_vm_counts_at_its_booking(db, clock):
    populate(db, clock, {'h1': (4, 8 * GIB_KB, [VMSpec('a')])},
             duration=1200.0)
    (vm,) = rounds.build_input(round_conf(), db, clock()).vms
    assert vm.ram == 1024.0 and vm.mem_history[-1] == 1024.0


def test_build_input_prewarm_history_option(db, clock):
    # 2 h of reports, time slice 1 h: the first hour's intervals hold the
    # booking, or (prewarm_history = first_estimate) the first estimate.
    populate(db, clock, {'h1': (4, 8 * GIB_KB, [VMSpec('a')])})
    clock.advance(30.0)
    by = {}
    for mode in ('booked', 'first_estimate'):
        conf = round_conf(prewarm_history=mode, history_length=24)
        (vm,) = rounds.build_input(conf, db, clock()).vms
        by[mode] = vm
    assert 1024.0 in by['booked'].mem_history
    assert by['first_estimate'].mem_history == pytest.approx(
        [256.0] * len(by['first_estimate'].mem_history))
    # what the VM is packed on now does not change
    assert by['booked'].ram == by['first_estimate'].ram


def test_young_vm_policies(db, clock):
    # Two VMs of 4 GiB, 2.5 h old (past the 1 h time slice, younger than
    # a day): 'a' steady at 256 MiB; 'b' at 100 MiB with a spike to 900
    # MiB between 1.5 h and 2 h (within the last hour of history).
    def spiky(t):
        return (900 if 5400 <= t < 7200 else 100) << 10
    populate(db, clock, {'h1': (4, 8 * GIB_KB, [
        VMSpec('a', booked_kb=4 * GIB_KB),
        VMSpec('b', booked_kb=4 * GIB_KB, wss_kb=spiky)])},
        duration=9000.0)

    def rams(policy, **params):
        import json
        conf = round_conf(young_vm_policy=policy,
                          young_vm_policy_parameters=json.dumps(params))
        return {v.uuid: v.ram for v in rounds.build_input(
            conf, db, clock()).vms}

    # WSS^max_avg plus max(32 MiB, 5 %).
    assert rams('time_slice') == {'a': 288.0, 'b': 132.0}
    assert rams('booked') == {'a': 4096.0, 'b': 4096.0}
    assert rams('booked', min_age=3600) == {'a': 288.0, 'b': 132.0}
    # No VM a day old: the level prior is the booking.
    assert rams('prior') == {'a': 4096.0, 'b': 4096.0}
    # b rose by 800 MiB of 4096 within its history: with quantile 1 the
    # prior rise is 800/4096 of the booking, added to each VM's own
    # WSS^max_avg, then the headroom.
    got = rams('spike_prior', quantile=1.0)
    assert got['a'] == pytest.approx((256 + 800) * 1.05)
    assert got['b'] == pytest.approx((100 + 800) * 1.05)


def test_build_input_counts_rounds_since_a_vm_arrived(db, clock):
    populate(db, clock, {'h1': (4, 8 * GIB_KB, [VMSpec('a'), VMSpec('b')])},
             duration=1200.0)
    rnd = db.create_round(started_at=clock() - 1000.0)
    mig = db.add_migration(rnd.id, 'a', 'h0', 'h1', 'cpu', 'overload')
    db.update_migration(mig.id, 'completed', finished_at=clock() - 700.0)
    vms = {v.uuid: v for v in rounds.build_input(
        round_conf(min_dwell_rounds=12), db, clock()).vms}
    # 700 s ago at 300 s rounds: 2 rounds
    assert vms['a'].rounds_since_migration == 2
    assert vms['b'].rounds_since_migration is None
    # without a dwell time the migrations are not read
    vms = rounds.build_input(round_conf(), db, clock()).vms
    assert all(v.rounds_since_migration is None for v in vms)


# -- rounds ------------------------------------------------------------------


def underloaded_pair(db, clock):
    """Two hosts idle on CPU and memory: one is emptied into the other."""
    return populate(db, clock, {
        'h1': (4, 8 * GIB_KB, [VMSpec('a', cores=0.2)]),
        'h2': (4, 8 * GIB_KB, [VMSpec('b', cores=0.1)])})


def test_dry_run_round_stores_the_plan_and_executes_nothing(db, clock):
    underloaded_pair(db, clock)
    fake = FakeExecutor(db)
    runner = rounds.RoundRunner(round_conf(dry_run=True), db,
                                executor_factory=fake.factory, clock=clock)
    result = runner.run()
    assert result.status == 'completed' and result.dry_run
    assert 'dry run: 1 migration(s) planned' in result.reason
    assert fake.calls == []
    (mig,) = db.list_migrations(round_id=result.round_id)
    # h2 is the lighter: its VM goes to h1.
    assert (mig.vm_uuid, mig.source_host, mig.dest_host, mig.kind,
            mig.resource, mig.status) == ('b', 'h2', 'h1', 'underload',
                                          'cpu', 'planned')
    rnd = db.get_round(result.round_id)
    assert rnd.dry_run and rnd.status == 'completed'
    assert rnd.parameters['memory_basis'] == 'wss'
    assert rnd.parameters['algorithms']['placement'] == \
        'peak_best_fit_decreasing'
    assert rnd.summary['underloaded'] == {'h1': 'cpu', 'h2': 'cpu'}
    assert rnd.summary['deactivate'] == ['h2']
    assert set(rnd.summary['states']) == {'h1', 'h2'}


def test_round_executes_and_powers_off_the_emptied_host(db, clock):
    underloaded_pair(db, clock)
    fake = FakeExecutor(db)
    powered = []
    runner = rounds.RoundRunner(
        round_conf(), db, executor_factory=fake.factory, clock=clock,
        power_off=lambda host: (powered.append(host), (True, 'ok'))[1])
    result = runner.run(dry_run=False)
    assert fake.calls == [['b']]
    assert result.status == 'completed', result.reason
    assert powered == ['h2'] and result.powered_off == ['h2']
    (mig,) = db.list_migrations(round_id=result.round_id)
    assert (mig.status, mig.attempts) == ('completed', 1)
    rnd = db.get_round(result.round_id)
    assert rnd.summary['outcomes'] == {'completed': 1}
    assert rnd.summary['power_off'] == {'h2': 'ok'}
    assert 'powered off h2' in rnd.reason
    assert db.get_host('h2').power_state == 'off'     # a later round wakes it


def test_an_emptied_host_a_later_round_sends_a_vm_to_stays_on(db, clock):
    underloaded_pair(db, clock)
    powered = []

    class Later(FakeExecutor):
        def execute(self, migrations):
            # while this round executes, the next one plans a VM onto the
            # host it empties
            rid = db.create_round(dry_run=False, parameters={}).id
            db.add_migration(rid, 'a', 'h1', 'h2', 'cpu', 'overload')
            return super().execute(migrations)
    fake = Later(db)
    runner = rounds.RoundRunner(
        round_conf(), db, executor_factory=fake.factory, clock=clock,
        power_off=lambda host: (powered.append(host), (True, 'ok'))[1])
    result = runner.run(dry_run=False)
    assert fake.calls == [['b']] and result.status == 'completed'
    assert powered == []
    rnd = db.get_round(result.round_id)
    assert rnd.summary['power_off'] == {
        'h2': 'kept on: a later round sends 1 VM(s) to it'}
    assert rounds.later_arrivals(db, 'h2', result.round_id) == 1
    assert rounds.later_arrivals(db, 'h1', result.round_id) == 0


def test_migration_budget_is_counted_from_the_database(db, clock):
    underloaded_pair(db, clock)
    # 2 VMs at 0.1 per VM-day, no burst: 0.2 migrations a day, less
    # than either host's one VM: nothing is emptied.
    conf = round_conf(migration_budget=0.1, migration_budget_burst=0)
    fake = FakeExecutor(db)
    result = rounds.RoundRunner(conf, db, executor_factory=fake.factory,
                                clock=clock).run(dry_run=False)
    assert fake.calls == [] and result.migrations == []
    summary = db.get_round(result.round_id).summary
    assert summary['over_budget'] == ['h2', 'h1']
    assert summary['budget_spent'] == 0
    # At 0.5 per VM-day the day holds one migration. A dry run plans it
    # but does not count; the round that makes it does.
    conf = round_conf(migration_budget=0.5, migration_budget_burst=0)
    rounds.RoundRunner(round_conf(dry_run=True, migration_budget=0.5,
                                  migration_budget_burst=0), db,
                       clock=clock).run()
    assert rounds.recent_migrations(db, clock(), 86400.0) == 0
    result = rounds.RoundRunner(conf, db, executor_factory=fake.factory,
                                clock=clock).run(dry_run=False)
    assert fake.calls == [['b']]
    assert rounds.recent_migrations(db, clock(), 86400.0) == 1
    assert rounds.recent_migrations(db, clock() + 86401.0, 86400.0) == 0


def test_failed_migration_fails_the_round_and_keeps_the_host_on(db, clock):
    underloaded_pair(db, clock)
    fake = FakeExecutor(db, statuses={'b': 'failed'})
    powered = []
    runner = rounds.RoundRunner(
        round_conf(), db, executor_factory=fake.factory, clock=clock,
        power_off=lambda host: (powered.append(host), (True, 'ok'))[1])
    result = runner.run(dry_run=False)
    assert result.status == 'failed'
    assert 'first error: boom' in result.reason
    assert powered == []
    assert db.get_round(result.round_id).summary['power_off'] == {
        'h2': 'kept on: not every VM left it'}


def test_some_failed_migrations_make_a_partial_round(db, clock):
    # h1 overloaded on memory (WSS): 4 x 700 MiB on 2 GiB, two must go;
    # h2 and h3 empty.
    populate(db, clock, {
        'h1': (8, 2 * GIB_KB, [VMSpec(u, booked_kb=GIB_KB,
                                      wss_kb=700 << 10)
                               for u in 'abcd']),
        'h2': (8, 2 * GIB_KB, []),
        'h3': (8, 2 * GIB_KB, [])})
    fake = FakeExecutor(db)
    result = rounds.RoundRunner(round_conf(), db,
                                executor_factory=fake.factory,
                                clock=clock).run(dry_run=True)
    moved = [m.vm_uuid for m in result.migrations]
    assert len(moved) == 2
    assert {(m.kind, m.resource) for m in result.migrations} == {
        ('overload', 'memory')}
    fake.statuses = {moved[0]: 'failed'}
    result = rounds.RoundRunner(round_conf(), db,
                                executor_factory=fake.factory,
                                clock=clock).run(dry_run=False)
    assert result.status == 'partial'
    assert db.get_round(result.round_id).summary['outcomes'] == {
        'completed': 1, 'failed': 1}


def test_packing_on_wss_sees_no_overload_where_booked_does(db, clock):
    # 3 VMs booked 1.5 GiB (4.5 GiB) using 400 MiB each on a 4 GiB host.
    populate(db, clock, {
        'h1': (8, 4 * GIB_KB, [VMSpec(u, booked_kb=3 * GIB_KB // 2,
                                      wss_kb=400 << 10, cores=2.0)
                               for u in 'abc']),
        'h2': (8, 4 * GIB_KB, [])})
    booked = rounds.RoundRunner(round_conf(memory_basis='booked'), db,
                                clock=clock).run(dry_run=True)
    assert booked.plan.overloaded == {'h1': 'memory'}
    assert booked.migrations
    wss = rounds.RoundRunner(round_conf(memory_basis='wss'), db,
                             clock=clock).run(dry_run=True)
    assert wss.plan.overloaded == {} and wss.migrations == []
    assert wss.status == 'completed'


def _daily_spike(db, clock, peak_mib):
    """h1 (4 GiB) holds 3 VMs of 1000 MiB that grow together to
    ``peak_mib`` from minute 80 to 100 of every 2-hour "day"; h2 (8 GiB)
    is empty. Reports until minute 72 of the second day."""
    def wss(t):
        return (peak_mib if 80 * 60 <= t % 7200 < 100 * 60 else 1000) << 10
    populate(db, clock, {
        'h1': (8, 4 * GIB_KB, [VMSpec(u, booked_kb=3 * GIB_KB // 2,
                                      wss_kb=wss) for u in 'abc']),
        'h2': (8, 8 * GIB_KB, [])}, duration=7200 + 72 * 60)


@pytest.mark.parametrize('period, lead', [(24, 3), ('2h', '15min')])
def test_a_recurring_memory_spike_is_relieved_before_it_comes_back(
        db, clock, period, lead):
    # A "day" of 2 hours (24 rounds of 300 s; the default's 288 scaled),
    # in samples or as durations the round converts with its interval:
    # the 3 VMs grow together from 1000 to 1400 MiB at minute 80 of each
    # day (after their first time slice). At minute 72 of the second day
    # the host is at 0.73 of its memory; yesterday's rise within the lead
    # would take it above 0.95.
    _daily_spike(db, clock, 1400)
    seasonal = rounds.RoundRunner(round_conf(
        history_length=24,
        memory_overload_detection_parameters=json.dumps(
            dict(loader.SEASONAL_MEMORY_OVERLOAD, period=period,
                 lead=lead))),
        db, clock=clock).run(dry_run=True)
    assert seasonal.plan.overloaded == {'h1': 'memory'}
    assert [m.dest_host for m in seasonal.migrations] == ['h2']
    plain = rounds.RoundRunner(round_conf(
        history_length=24, memory_overload_detection='threshold',
        memory_overload_detection_parameters='{"threshold": 0.95}'),
        db, clock=clock).run(dry_run=True)
    assert plain.plan.overloaded == {} and plain.migrations == []


def test_the_seasonal_forecast_is_held_to_the_whole_host(db, clock):
    # As above, but the VMs grow from 1000 to 1325 MiB: yesterday's rise
    # takes the host from 0.73 to 0.97 of its memory, over the 0.95 the
    # current load is held to and under the whole host, which memmut's
    # default compares the seasonal forecast with (stop 79).
    _daily_spike(db, clock, 1325)

    def run(**extra):
        return rounds.RoundRunner(round_conf(
            history_length=24,
            memory_overload_detection_parameters=json.dumps(
                dict(loader.SEASONAL_MEMORY_OVERLOAD, period=24, lead=3,
                     **extra))),
            db, clock=clock).run(dry_run=True)
    held = run()
    assert held.plan.overloaded == {} and held.migrations == []
    margin = run(seasonal_threshold=0.95)
    assert margin.plan.overloaded == {'h1': 'memory'}
    assert margin.migrations


def test_remote_memory_holds_an_overload_the_reservoirs_cover(db, clock):
    # h1's 3 VMs use 1300 MiB each: 3900 MiB, 0.95 of its 4 GiB is 3891.
    # With remote_memory_fraction 0.1 the host may stay where it is if
    # the other hosts' reported reservoirs cover what it needs (a few
    # MiB): h2 reports none at first, then 1 GiB.
    populate(db, clock, {
        'h1': (8, 4 * GIB_KB, [VMSpec(u, booked_kb=3 * GIB_KB // 2,
                                      wss_kb=1300 << 10) for u in 'abc']),
        'h2': (8, 8 * GIB_KB, [VMSpec('d', wss_kb=100 << 10)])})
    conf = round_conf(memory_overload_detection='threshold',
                      memory_overload_detection_parameters=(
                          '{"threshold": 0.95}'),
                      remote_memory_fraction=0.1)
    no_lender = rounds.RoundRunner(conf, db, clock=clock).run(dry_run=True)
    assert no_lender.plan.overloaded == {'h1': 'memory'}
    assert no_lender.plan.absorbed == {} and no_lender.migrations
    db.store_reservoir(objects.ReservoirInform(
        host='h2', reservoir_kb=GIB_KB, timestamp=clock.t))
    lent = rounds.RoundRunner(conf, db, clock=clock).run(dry_run=True)
    assert lent.plan.overloaded == {} and lent.migrations == []
    assert set(lent.plan.absorbed) == {'h1'}
    assert 0 < lent.plan.absorbed['h1'] <= 0.1 * 4096
    assert 'left to remote memory' in lent.reason
    assert lent.summary['absorbed'] == lent.plan.absorbed


def test_both_resources_are_stored_as_cpu_plus_memory(db, clock):
    # CPU and memory overloaded together: the reason is 'cpu+memory',
    # which the migrations table accepts.
    populate(db, clock, {
        'h1': (1, 2 * GIB_KB, [VMSpec(u, booked_kb=GIB_KB,
                                      wss_kb=900 << 10, cores=0.5)
                               for u in 'abc']),
        'h2': (8, 8 * GIB_KB, [])})
    result = rounds.RoundRunner(round_conf(), db,
                                clock=clock).run(dry_run=True)
    assert result.plan.overloaded == {'h1': planner.BOTH}
    rows = db.list_migrations(round_id=result.round_id)
    assert rows and {r.resource for r in rows} == {'cpu+memory'}


def test_states_carry_over_to_the_next_round(db, clock):
    underloaded_pair(db, clock)
    runner = rounds.RoundRunner(round_conf(), db, clock=clock)
    first = runner.run(dry_run=True)
    seen = []
    real = rounds.build_input

    def spy(conf, db_, now, states=None, wake=False, in_flight=None):
        seen.append(states)
        return real(conf, db_, now, states, wake, in_flight)
    rounds.build_input = spy
    try:
        runner.run(dry_run=True)
    finally:
        rounds.build_input = real
    assert seen == [db.get_round(first.round_id).summary['states']]
    assert seen[0]['h1']['cpu_underload_rounds'] == 1


def test_a_planner_error_is_recorded_not_raised(db, clock):
    underloaded_pair(db, clock)
    conf = round_conf(vm_placement='no_such_algorithm')
    result = rounds.RoundRunner(conf, db, clock=clock).run()
    assert result.status == 'failed'
    rnd = db.get_round(result.round_id)
    assert rnd.status == 'failed' and 'no_such_algorithm' in rnd.reason


def test_bad_parameters_are_recorded_not_raised(db, clock):
    conf = round_conf(vm_placement_parameters='{not json')
    result = rounds.RoundRunner(conf, db, clock=clock).run()
    rnd = db.get_round(result.round_id)
    assert rnd.status == 'failed' and 'vm_placement_parameters' in rnd.reason


def test_an_executor_crash_is_recorded_not_raised(db, clock):
    underloaded_pair(db, clock)
    fake = FakeExecutor(db, error=RuntimeError('nova exploded'))
    result = rounds.RoundRunner(round_conf(), db,
                                executor_factory=fake.factory,
                                clock=clock).run(dry_run=False)
    assert result.status == 'failed'
    assert db.get_round(result.round_id).reason == \
        'round failed: RuntimeError: nova exploded'


def test_an_unreachable_database_is_logged_not_raised(tmp_path):
    db = db_api.Database('sqlite:///%s' % (tmp_path / 'missing' / 'x.db'))
    result = rounds.RoundRunner(round_conf(), db).run()
    assert result.round_id is None and result.status == 'failed'
    assert result.reason.startswith('cannot record the round')
    db.close()


class Slow(FakeExecutor):
    """Executes once ``release`` is set; ``entered`` once it is asked."""

    def __init__(self, db, **kw):
        super().__init__(db, **kw)
        self.entered, self.release = threading.Event(), threading.Event()

    def execute(self, migrations):
        self.entered.set()
        self.release.wait(10)
        return super().execute(migrations)


def test_after_execution_pacing_runs_one_round_at_a_time(db, clock):
    underloaded_pair(db, clock)
    slow = Slow(db)
    runner = rounds.RoundRunner(round_conf(round_pacing='after_execution'),
                                db, executor_factory=slow.factory,
                                clock=clock)
    thread = threading.Thread(target=runner.run, kwargs={'dry_run': False})
    thread.start()
    assert slow.entered.wait(10)
    assert runner.executing == 1
    busy = runner.run()
    slow.release.set()
    thread.join(10)
    assert (busy.status, busy.round_id) == ('busy', None)
    assert len(db.list_rounds()) == 1
    assert runner.executing == 0


def test_clock_pacing_plans_a_round_while_another_executes(db, clock):
    underloaded_pair(db, clock)
    slow = Slow(db)
    runner = rounds.RoundRunner(round_conf(), db,
                                executor_factory=slow.factory, clock=clock)
    assert runner.pacing == 'clock'       # the default
    first = {}
    thread = threading.Thread(
        target=lambda: first.update(r=runner.run(dry_run=False)))
    thread.start()
    assert slow.entered.wait(10)
    (moving,) = db.list_migrations(round_id=db.list_rounds()[0].id)
    assert rounds.in_flight_migrations(db) == {
        moving.vm_uuid: (moving.source_host, moving.dest_host)}
    second = runner.run(dry_run=True)
    assert second.status == 'completed', second.reason
    rnd = db.get_round(second.round_id)
    # the VM in flight was neither planned again nor counted twice
    assert rnd.summary['in_flight'] == 1
    assert rnd.summary['vms'] == 1
    assert moving.vm_uuid not in [
        m.vm_uuid for m in db.list_migrations(round_id=second.round_id)]
    # a third round asked while one plans is turned away
    with runner._lock:
        assert runner.run().status == 'busy'
    slow.release.set()
    thread.join(10)
    assert first['r'].status == 'completed'
    assert rounds.in_flight_migrations(db) == {}


# -- the controller service --------------------------------------------------


@pytest.mark.parametrize('pacing', ['clock', 'after_execution'])
def test_controller_runs_rounds_on_demand_and_on_schedule(db, clock,
                                                          pacing):
    underloaded_pair(db, clock)
    conf = common.private_conf(
        DEFAULT={'host': 'node1'},
        consolidation={'scheduled_rounds': True, 'interval': 1,
                       'dry_run': True, 'history_length': 12,
                       'round_pacing': pacing})
    transport = rpc.get_transport(conf)
    service = controller_service.ControllerService(conf, transport, db)
    service.rounds._clock = clock
    try:
        result = service.run_round()
        assert result.dry_run and result.status == 'completed'
        # A scheduled round runs only when the last one is half an
        # interval old (RoundRunner.due).
        clock.advance(1.0)
        service.start()
        end = time.monotonic() + 20
        while len(db.list_rounds()) < 2 and time.monotonic() < end:
            time.sleep(0.05)
        assert len(db.list_rounds()) >= 2, 'no scheduled round ran'
    finally:
        service.stop()
        transport.cleanup()
        conf.reset()
    assert all(r.status == 'completed' and r.dry_run
               for r in db.list_rounds())


def test_scheduled_rounds_on_the_clock_go_on_while_one_executes(db, clock):
    underloaded_pair(db, clock)
    conf = common.private_conf(
        DEFAULT={'host': 'node1'},
        consolidation={'scheduled_rounds': True, 'interval': 1,
                       'history_length': 12})
    transport = rpc.get_transport(conf)
    service = controller_service.ControllerService(conf, transport, db)
    service.rounds._clock = clock
    slow = Slow(db)
    service.rounds._executor_factory = slow.factory
    service.rounds._power_off = lambda host: (True, 'ok')

    def wait_for(cond):
        end = time.monotonic() + 20
        while not cond() and time.monotonic() < end:
            clock.advance(0.5)       # RoundRunner.due: half an interval
            time.sleep(0.1)
        return cond()
    try:
        service.start()
        assert wait_for(slow.entered.is_set)
        assert wait_for(lambda: len(db.list_rounds()) >= 3)
        first, *later = sorted(db.list_rounds(), key=lambda r: r.id)
        # the first still executes; later rounds planned around its move
        assert db.get_round(first.id).status == 'running'
        done = [r for r in later if r.status == 'completed']
        assert done and all(r.summary['in_flight'] == 1 for r in done)
    finally:
        slow.release.set()
        service.stop()
        transport.cleanup()
        conf.reset()
    assert db.get_round(first.id).status == 'completed'


def test_the_schema_accepts_exactly_the_planners_resources(db):
    import sqlalchemy as sa
    from memmut.db import models
    rnd = db.create_round()
    for resource in (planner.CPU, planner.MEMORY, planner.BOTH):
        db.add_migration(rnd.id, 'a', 'h1', 'h2', resource, 'overload')
    # The CHECK constraint itself, past add_migration's validation.
    with pytest.raises(sa.exc.IntegrityError):
        with db.engine.begin() as conn:
            conn.execute(sa.insert(models.Migration).values(
                round_id=rnd.id, vm_uuid='a', source_host='h1',
                dest_host='h2', resource='gpu', kind='overload',
                status='planned', attempts=0))


# -- faults: a round never stays running ---------------------------------


def test_rounds_left_running_by_a_dead_controller_are_closed_at_start(
        db, clock):
    clock.t = 1000.0
    dead = db.create_round(parameters={})
    db.add_migration(dead.id, 'a', 'h1', 'h2', 'cpu', 'underload')
    running = db.add_migration(dead.id, 'b', 'h1', 'h2', 'cpu', 'underload')
    db.update_migration(running.id, 'running')
    done = db.create_round(parameters={})
    db.finish_round(done.id, 'completed', reason='ok')
    runner = rounds.RoundRunner(round_conf(), db, clock=clock)
    assert runner.recover() == [dead.id]
    rnd = db.get_round(dead.id)
    assert rnd.status == 'failed' and 'abandoned' in rnd.reason
    assert rnd.finished_at is not None
    migs = {m.vm_uuid: m for m in db.list_migrations(round_id=dead.id)}
    assert migs['a'].status == 'cancelled'
    assert migs['b'].status == 'failed' and 'nova' in migs['b'].error
    assert db.get_round(done.id).status == 'completed'
    assert runner.recover() == []


def test_the_end_of_a_round_is_recorded_once_the_database_returns(
        db, clock, monkeypatch):
    underloaded_pair(db, clock)
    fake = FakeExecutor(db)
    stop = threading.Event()
    runner = rounds.RoundRunner(round_conf(dry_run=True), db,
                                executor_factory=fake.factory, clock=clock,
                                stop=stop)
    real = db.finish_round
    outage = {'left': 2}

    def finish(*args, **kw):
        if outage['left']:
            outage['left'] -= 1
            raise db_api.DBError('connection refused')
        return real(*args, **kw)
    monkeypatch.setattr(db, 'finish_round', finish)
    monkeypatch.setattr(stop, 'wait', lambda s: False)   # no real sleeping
    result = runner.run()
    assert outage['left'] == 0
    assert db.get_round(result.round_id).status == 'completed'


def test_a_stopping_controller_gives_up_and_the_next_start_closes_it(
        db, clock, monkeypatch):
    underloaded_pair(db, clock)
    stop = threading.Event()
    stop.set()
    runner = rounds.RoundRunner(round_conf(dry_run=True), db,
                                executor_factory=FakeExecutor(db).factory,
                                clock=clock, stop=stop)
    monkeypatch.setattr(db, 'finish_round', lambda *a, **k: (_ for _ in ())
                        .throw(db_api.DBError('down')))
    result = runner.run()
    assert db.get_round(result.round_id).status == 'running'
    monkeypatch.undo()
    assert runner.recover() == [result.round_id]


# -- power-on of hosts memmut powered off -----------------------------------


def sleeping_and_overloaded(db, clock):
    """h2 reported, then memmut powered it off (agent down since); h1 is
    overloaded on memory now."""
    populate(db, clock, {'h2': (4, 8 * GIB_KB, [])}, duration=600.0,
             start=50000.0)
    db.set_power_state('h2', 'off', 'powered off by round 1')
    populate(db, clock, {'h1': (4, 2 * GIB_KB, [
        VMSpec('a', booked_kb=2 * GIB_KB, wss_kb=2000 << 10)])})


def test_a_sleeping_host_is_powered_on_before_vms_go_to_it(db, clock):
    sleeping_and_overloaded(db, clock)
    fake = FakeExecutor(db)
    woken = []
    runner = rounds.RoundRunner(
        round_conf(), db, executor_factory=fake.factory, clock=clock,
        power_on=lambda host: (woken.append(host), (True, 'bmc ok'))[1])
    result = runner.run()
    assert woken == ['h2'] and result.powered_on == ['h2']
    assert result.plan.activate == ['h2']
    assert fake.calls == [['a']]
    (mig,) = db.list_migrations(round_id=result.round_id)
    assert (mig.dest_host, mig.status) == ('h2', 'completed')
    assert db.get_host('h2').power_state == 'on'
    assert 'powered on h2' in result.reason
    assert db.get_round(result.round_id).summary['power_on'] == {
        'h2': 'bmc ok'}


def test_a_host_that_does_not_come_up_gets_no_migration(db, clock):
    sleeping_and_overloaded(db, clock)
    fake = FakeExecutor(db)

    class SlowCompute(FakeExecutor):
        def wait_for_compute(self, host, timeout):
            return False, 'nova-compute on %s not up within %d s' % (
                host, timeout)
    slow = SlowCompute(db)
    for ex, hook in ((fake, lambda h: (False, 'bmc unreachable')),
                     (slow, lambda h: (True, 'bmc ok'))):
        runner = rounds.RoundRunner(round_conf(), db,
                                    executor_factory=ex.factory,
                                    clock=clock, power_on=hook)
        result = runner.run()
        assert ex.calls == [[]] or ex.calls == []
        (mig,) = db.list_migrations(round_id=result.round_id)
        assert mig.status == 'cancelled'
        assert 'destination h2 was not powered on' in mig.error
        assert result.status == 'failed'
        assert db.get_host('h2').power_state == 'off'
    assert 'not up within 600 s' in mig.error


def test_without_a_power_on_command_sleeping_hosts_are_left_out(db, clock):
    sleeping_and_overloaded(db, clock)
    runner = rounds.RoundRunner(round_conf(dry_run=True), db, clock=clock)
    result = runner.run()
    assert result.plan.activate == []
    assert 'powered off by memmut' in db.get_round(
        result.round_id).summary['excluded_hosts']['h2']


def _order_rows(db):
    rnd = db.create_round()
    return [db.add_migration(rnd.id, vm, src, dst, 'cpu', kind)
            for vm, src, dst, kind in (
                ('a', 'h1', 'h2', 'underload'),
                ('b', 'h3', 'h2', 'overload'),
                ('c', 'h1', 'h6', 'underload'),
                ('d', 'h4', 'h5', 'overload'),
                ('e', 'h7', 'h8', 'underload'))]


@pytest.mark.parametrize('how,expected', [
    ('plan', 'abcde'), ('priority', 'dbace'), ('priority_drop', 'dbe')])
def test_round_hands_moves_to_the_executor_in_move_order(db, how,
                                                         expected):
    conf = round_conf(move_order=how)
    runner = rounds.RoundRunner(conf, db)
    rows = _order_rows(db)
    plan = planner.Plan(load={'h3': 1.05, 'h4': 1.3})
    skipped = {}
    out = runner._order_moves(rows, plan, skipped)
    assert ''.join(r.vm_uuid for r in out) == expected
    if how == 'priority_drop':
        # h1's whole evacuation (a shares h2 with b) is left for the
        # next round and recorded as skipped.
        dropped = {r.vm_uuid: r for r in db.list_migrations()
                   if r.status == 'skipped'}
        assert sorted(dropped) == ['a', 'c']
        assert 'priority_drop' in dropped['c'].error
        assert {o.status for o in skipped.values()} == {'skipped'}
    else:
        assert skipped == {}
