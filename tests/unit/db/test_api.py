import contextlib

import pytest
import sqlalchemy as sa

from memmut.db import api as db_api
from memmut.db import migration
from memmut.db import models
from memmut import objects


def _vm(uuid, t, balloon=512 * 1024, **kw):
    fields = dict(uuid=uuid, name='vm-' + uuid, timestamp=t, state='running',
                  booked_kb=1024 * 1024, balloon_kb=balloon,
                  memory_stats={'unused': 100, 'available': 900},
                  cpu_time_ns=5, wss_kb=300 * 1024, wss_estimator='badis')
    fields.update(kw)
    return objects.VMReport(**fields)


def _report(seq, t, host='h1', boot='b1', vms=(), reservoir=0):
    return objects.HostReport(
        host=host, boot_id=boot, seq=seq, timestamp=t, hypervisor='sim',
        memory_total_kb=8 << 20, memory_free_kb=4 << 20, cpu_count=4,
        cpu_util=0.25, reservoir_kb=reservoir, vms=list(vms))


def test_report_is_stored_once_per_boot_and_seq(db):
    assert db.store_report(_report(1, 10.0, vms=[_vm('a', 10.0)]))
    assert not db.store_report(_report(1, 10.0, vms=[_vm('a', 10.0)]))
    # a restarted agent starts again at seq 1 with a new boot id
    assert db.store_report(_report(1, 20.0, boot='b2',
                                   vms=[_vm('a', 20.0)]))
    assert db.count_reports('h1') == 2
    assert len(db.vm_samples('a')) == 2
    assert [(s.boot_id, s.seq) for s in db.host_samples('h1')] == \
        [('b1', 1), ('b2', 1)]


def test_samples_keep_what_the_agent_measured(db):
    db.store_report(_report(1, 10.0, vms=[_vm('a', 10.0)]))
    (s,) = db.vm_samples('a')
    assert s.memory_stats == {'unused': 100, 'available': 900}
    assert (s.balloon_kb, s.wss_kb, s.wss_estimator) == \
        (512 * 1024, 300 * 1024, 'badis')
    vm = db.get_vm('a')
    assert vm.host.name == 'h1' and vm.booked_kb == 1024 * 1024
    host = db.get_host('h1')
    assert (host.hypervisor, host.cpu_count, host.last_report_at) == \
        ('sim', 4, 10.0)


def test_samples_keep_the_mutualization_role_and_lending(db):
    db.store_report(_report(1, 10.0, vms=[
        _vm('a', 10.0, mut_role='server', mem_init_kb=1 << 20,
            lent_kb=256 << 10),
        _vm('b', 10.0)]))
    (a,) = db.vm_samples('a')
    (b,) = db.vm_samples('b')
    assert (a.mut_role, a.mem_init_kb, a.lent_kb, a.borrowed_kb) == \
        ('server', 1 << 20, 256 << 10, 0)
    assert (b.mut_role, b.mem_init_kb, b.lent_kb) == (None, None, 0)


def test_vm_samples_limit_gives_newest_oldest_first(db):
    for seq in range(1, 6):
        db.store_report(_report(seq, 10.0 * seq,
                                vms=[_vm('a', 10.0 * seq, balloon=seq)]))
    assert [s.balloon_kb for s in db.vm_samples('a', limit=2)] == [4, 5]
    assert [s.balloon_kb for s in db.vm_samples('a', since=30.0)] == \
        [3, 4, 5]
    assert db.vm_samples('unknown') == []


def test_vm_series_gives_every_vm_oldest_first_in_one_call(db):
    for seq in range(1, 4):
        db.store_report(_report(seq, 10.0 * seq, vms=[
            _vm('a', 10.0 * seq, cpu_time_ns=seq * 100),
            _vm('b', 10.0 * seq, wss_kb=None)]))
    series = db.vm_series(since=15.0)
    assert sorted(series) == ['a', 'b']
    assert [(r.timestamp, r.cpu_time_ns) for r in series['a']] == \
        [(20.0, 200), (30.0, 300)]
    assert [r.wss_kb for r in series['b']] == [None, None]
    host_id = series['a'][0].host_id
    assert all(r.host_id == host_id for r in series['a'] + series['b'])


def test_late_backlog_report_does_not_roll_host_or_vm_back(db):
    db.store_report(_report(2, 20.0, reservoir=2048,
                            vms=[_vm('a', 20.0, state='paused')]))
    db.store_report(_report(1, 10.0, reservoir=1024,
                            vms=[_vm('a', 10.0, state='running')]))
    assert db.get_host('h1').reservoir_kb == 2048
    assert db.get_host('h1').last_report_at == 20.0
    assert db.get_vm('a').state == 'paused'
    assert db.count_reports() == 2


def test_vm_moves_with_its_newest_report(db):
    db.store_report(_report(1, 10.0, host='h1', vms=[_vm('a', 10.0)]))
    db.store_report(_report(1, 20.0, host='h2', vms=[_vm('a', 20.0)]))
    assert db.get_vm('a').host.name == 'h2'
    assert [v.uuid for v in db.list_vms('h2')] == ['a']
    assert db.list_vms('h1') == []
    # each sample keeps the host that took it
    assert [s.host_id for s in db.vm_samples('a')] == \
        [db.get_host('h1').id, db.get_host('h2').id]


def test_reservoir_inform_and_report_keep_the_newest(db):
    db.store_report(_report(1, 10.0, reservoir=100))
    assert db.store_reservoir(objects.ReservoirInform(
        host='h1', reservoir_kb=500, timestamp=15.0))
    assert not db.store_reservoir(objects.ReservoirInform(
        host='h1', reservoir_kb=1, timestamp=12.0))
    assert db.get_host('h1').reservoir_kb == 500
    db.store_report(_report(2, 11.0, reservoir=7))     # older than inform
    assert db.get_host('h1').reservoir_kb == 500
    # an inform may come before the host's first report
    db.store_reservoir(objects.ReservoirInform(host='new', reservoir_kb=9,
                                               timestamp=1.0))
    assert db.get_host('new').reservoir_kb == 9


def test_purge_drops_old_samples_only(db):
    for seq in range(1, 4):
        db.store_report(_report(seq, 10.0 * seq, vms=[_vm('a', 10.0 * seq)]))
    assert db.purge_samples(25.0) == 4          # 2 host + 2 VM samples
    assert [s.timestamp for s in db.vm_samples('a')] == [30.0]
    assert db.count_reports('h1') == 1
    assert db.get_vm('a').uuid == 'a'


def test_not_found_errors_name_what_is_missing(db):
    with pytest.raises(db_api.RecordNotFound, match='no-host'):
        db.get_host('no-host')
    with pytest.raises(db_api.RecordNotFound, match='1234'):
        db.get_vm('1234')
    with pytest.raises(db_api.RecordNotFound):
        db.update_remote_allocation('x', 'active')
    with pytest.raises(db_api.RecordNotFound):
        db.finish_round(99, 'completed')


def test_remote_allocations(db):
    db.create_remote_allocation(allocation_id='x', client_host='c',
                                server_host='s', vm_uuid='a', size_kb=64)
    db.create_remote_allocation(allocation_id='y', client_host='s',
                                server_host='t', vm_uuid='b', size_kb=32)
    db.update_remote_allocation('x', 'active', uri='nbd+unix:///x')
    assert db.get_remote_allocation('x').uri == 'nbd+unix:///x'
    assert [a.allocation_id for a in db.list_remote_allocations(host='s')] \
        == ['x', 'y']
    assert [a.allocation_id for a in
            db.list_remote_allocations(state='requested')] == ['y']
    with pytest.raises(db_api.DBError):         # ids are unique
        db.create_remote_allocation(allocation_id='x', client_host='c',
                                    server_host='s', vm_uuid='a', size_kb=1)


def test_rounds_and_migrations(db, clock):
    rnd = db.create_round(dry_run=True, parameters={'overload': 'mad'})
    assert rnd.status == models.ROUND_RUNNING and rnd.started_at == clock.t
    mig = db.add_migration(rnd.id, 'a', 'h1', 'h2', 'memory', 'overload')
    assert mig.status == models.MIGRATION_PLANNED and mig.attempts == 0
    with pytest.raises(ValueError, match='resource'):
        db.add_migration(rnd.id, 'a', 'h1', 'h2', 'disk', 'overload')
    with pytest.raises(ValueError, match='kind'):
        db.add_migration(rnd.id, 'a', 'h1', 'h2', 'cpu', 'sideways')
    with pytest.raises(ValueError, match='colour'):
        db.update_migration(mig.id, 'running', colour='red')
    clock.advance(5)
    db.update_migration(mig.id, 'completed', attempts=1, finished_at=clock.t)
    db.finish_round(rnd.id, 'completed', reason='1 VM moved',
                    summary={'migrations': 1})
    (got,) = db.list_migrations(round_id=rnd.id)
    assert (got.status, got.attempts, got.finished_at) == \
        ('completed', 1, clock.t)
    rnd = db.get_round(rnd.id)
    assert (rnd.status, rnd.summary, rnd.parameters, rnd.dry_run) == \
        ('completed', {'migrations': 1}, {'overload': 'mad'}, True)
    assert rnd.finished_at == clock.t
    db.create_round()
    assert [r.id for r in db.list_rounds(limit=1)] == [rnd.id + 1]
    assert db.list_migrations(status='planned') == []


def test_errors_mask_the_password(tmp_path):
    with pytest.raises(db_api.DBError) as e:
        db_api.Database('postgresql+psycopg://u:sekrit@127.0.0.1:1/x'
                        ).list_hosts()
    assert 'sekrit' not in str(e.value) and '***' in str(e.value)
    with pytest.raises(db_api.DBError, match='invalid database URL'):
        db_api.Database('not a url')
    # a database without the schema: a clear error, not a traceback
    with pytest.raises(db_api.DBError, match='no such table'):
        db_api.Database('sqlite:///%s' % (tmp_path / 'empty.sqlite')
                        ).list_hosts()


def test_allocation_transitions_follow_the_state_machine(db, clock):
    from memmut.globals import allocations as al
    db.create_remote_allocation('x', 'c', 's', 'a', 64,
                                psk_identity='memmut-alloc-x',
                                psk_key='ab' * 32)
    clock.advance(5)
    old, row = db.transition_remote_allocation('x', al.E_GRANTED,
                                               uri='nbd://s/x')
    assert (old, row.state, row.uri, row.updated_at) == (
        'requested', 'granted', 'nbd://s/x', clock.t)
    with pytest.raises(al.IllegalTransition):
        db.transition_remote_allocation('x', al.E_FREED)
    with pytest.raises(al.IllegalTransition):      # it moved meanwhile
        db.transition_remote_allocation('x', al.E_RELEASE,
                                        expect=('requested',))
    assert db.get_remote_allocation('x').state == 'granted'
    db.transition_remote_allocation('x', al.E_RELEASE)
    assert db.get_remote_allocation('x').psk_key == 'ab' * 32
    db.transition_remote_allocation('x', al.E_FREED, reason='done')
    row = db.get_remote_allocation('x')
    assert (row.state, row.reason, row.psk_key) == ('released', 'done', None)
    with pytest.raises(db_api.RecordNotFound):
        db.transition_remote_allocation('nope', al.E_GRANTED)
    assert [a.allocation_id for a in db.list_remote_allocations(
        state=al.CLOSED_STATES)] == ['x']


def test_the_schema_refuses_unknown_allocation_states(db):
    with pytest.raises(db_api.DBError):
        db.create_remote_allocation('x', 'c', 's', 'a', 64, state='lent')


def test_report_lists_of_remote_allocations(db):
    def report(seq, ts, **kw):
        return objects.HostReport(
            host='h', boot_id='b', seq=seq, timestamp=ts, hypervisor='sim',
            memory_total_kb=1 << 20, memory_free_kb=1 << 19, cpu_count=1,
            cpu_util=0.0, **kw)
    db.store_report(report(1, 10.0))
    host = db.get_host('h')
    assert (host.remote_exports, host.remote_attachments) == (None, None)
    db.store_report(report(3, 30.0, remote_exports=['b', 'a', 'a'],
                           remote_attachments=[]))
    db.store_report(report(2, 20.0, remote_exports=['old']))  # late
    host = db.get_host('h')
    assert (host.remote_exports, host.remote_attachments) == (['a', 'b'], [])


def test_a_lease_has_one_holder_until_it_expires(db):
    assert db.get_lease('consolidation') is None
    assert db.acquire_lease('consolidation', 'c1', 60.0, now=100.0)
    assert not db.acquire_lease('consolidation', 'c2', 60.0, now=130.0)
    # The holder renews it (acquired_at stays, expires_at moves).
    assert db.acquire_lease('consolidation', 'c1', 60.0, now=150.0)
    lease = db.get_lease('consolidation')
    assert (lease.holder, lease.acquired_at, lease.renewed_at,
            lease.expires_at) == ('c1', 100.0, 150.0, 210.0)
    assert not db.acquire_lease('consolidation', 'c2', 60.0, now=209.0)
    # Expired: another controller takes it over.
    assert db.acquire_lease('consolidation', 'c2', 60.0, now=210.0)
    lease = db.get_lease('consolidation')
    assert (lease.holder, lease.acquired_at) == ('c2', 210.0)
    assert not db.acquire_lease('consolidation', 'c1', 60.0, now=211.0)
    # Other names are other leases.
    assert db.acquire_lease('other', 'c1', 60.0, now=211.0)


def test_a_released_lease_is_free_at_once(db):
    assert db.acquire_lease('consolidation', 'c1', 600.0, now=100.0)
    assert not db.release_lease('consolidation', 'c2', now=101.0)
    assert db.release_lease('consolidation', 'c1', now=101.0)
    assert not db.release_lease('consolidation', 'c1', now=102.0)
    assert db.acquire_lease('consolidation', 'c2', 600.0, now=102.0)


def test_a_dead_holder_is_replaced_only_by_name(db):
    assert db.acquire_lease('consolidation', 'dead', 600.0, now=100.0)
    # replace names another holder: nothing
    assert not db.acquire_lease('consolidation', 'b', 600.0, now=101.0,
                                replace='someone-else')
    assert db.acquire_lease('consolidation', 'b', 600.0, now=101.0,
                            replace='dead')
    lease = db.get_lease('consolidation')
    assert (lease.holder, lease.acquired_at, lease.expires_at) == (
        'b', 101.0, 701.0)
    # a second controller that saw 'dead' too comes after: b holds it
    assert not db.acquire_lease('consolidation', 'c', 600.0, now=102.0,
                                replace='dead')
    assert db.get_lease('consolidation').holder == 'b'


def _history(series, end, interval=100.0, length=20):
    from memmut.globals import rounds
    return (rounds.cpu_history(series, end, interval, length, 1000.0),
            rounds.memory_history(series, end, interval, length, 1024.0,
                                  0.0, 0.0, carry_floor=True))


def test_rollups_keep_what_the_histories_read(db):
    # Two VMs polled every 30 s for 1000 s; 'a' moves to h2 at t=600 and
    # its counter resets at t=300; 'b' has no WSS^max_avg at first.
    for seq in range(1, 35):
        t = 30.0 * seq
        a = _vm('a', t, cpu_time_ns=int((t if t < 300 else t - 300) *
                                        (0.5e9 + 1e6 * (seq % 7))),
                wss_max_avg_kb=(100 + seq % 5) * 1024,
                # a shrink floor above WSS^max_avg now and then: the
                # packing figure carries it, rolled up or not
                shrink_floor_kb=(150 + seq) * 1024 if seq % 3 == 0
                else None)
        b = _vm('b', t, cpu_time_ns=int(t * 0.25e9),
                wss_max_avg_kb=None if t < 200 else 200 * 1024)
        db.store_report(_report(seq, t, host='h1' if t < 600 else 'h2',
                                boot='b', vms=[a] + ([b] if seq > 2 else [])))
    end = 1000.0        # the planner's intervals line up with the rollups
    raw = db.vm_series(0.0)
    before = {u: _history(raw[u], end) for u in raw}
    assert 180.0 in before['a'][1]      # the floor of seq 30 (t = 900)
    assert db.rollup_samples(before=710.0, interval=100.0) == 23 + 21
    raw_left, rolled = db.count_samples()
    assert (raw_left, rolled) == (11 + 11, 7 + 7)
    mixed = db.vm_series(0.0)
    assert type(mixed['a'][0]).__name__ == 'RollupRow'
    assert {u: _history(mixed[u], end) for u in mixed} == before
    # Again later (the first raw delta starts at the newest rollup).
    assert db.rollup_samples(before=1000.0, interval=100.0) == 20
    assert {u: _history(v, end) for u, v in db.vm_series(0.0).items()} \
        == before
    assert db.count_samples() == (2, 20)
    # Rollups past retention go; what is left still reads the same.
    assert db.purge_rollups(300.0) == 4
    assert db.count_samples() == (2, 16)


def test_a_late_sample_of_a_rolled_up_interval_adds_a_row(db):
    for seq in range(1, 11):
        db.store_report(_report(seq, 10.0 * seq, vms=[
            _vm('a', 10.0 * seq, cpu_time_ns=seq * 10 ** 9)]))
    assert db.rollup_samples(before=100.0, interval=50.0) == 10
    db.store_report(_report(99, 45.0, vms=[_vm('a', 45.0,
                                               cpu_time_ns=10 ** 9)]))
    assert db.rollup_samples(before=100.0, interval=50.0) == 1
    assert db.count_samples() == (0, 3)
    cpu, _ = _history(db.vm_series(0.0)['a'], 100.0, 50.0, 2)
    assert cpu == [100.0, 100.0]        # 0.1 core, the late one ignored


@contextlib.contextmanager
def _racing(db, prefix, action):
    """Run ``action(other)`` once, on a second Database of the same URL
    (another controller), just before ``db`` executes its first statement
    starting with ``prefix``; yields the list of what it returned."""
    other = db_api.Database(db.url)
    raced = []

    def before(conn, cursor, statement, params, context, executemany):
        if statement.startswith(prefix) and not raced:
            raced.append(action(other))

    sa.event.listen(db.engine, 'before_cursor_execute', before)
    try:
        yield raced
    finally:
        sa.event.remove(db.engine, 'before_cursor_execute', before)
        other.close()


def test_a_report_racing_another_controller_stores_nothing(db, tmp_path):
    """Two controllers take the same resent report: the one that finds
    it stored only when inserting (unique constraint) answers False and
    adds no sample."""
    db.store_report(_report(1, 10.0, vms=[_vm('a', 10.0)]))
    with _racing(db, 'INSERT INTO host_samples', lambda other:
                 other.store_report(_report(2, 20.0, vms=[_vm('a', 20.0)]))
                 ) as raced:
        assert not db.store_report(_report(2, 20.0, vms=[_vm('a', 20.0)]))
    assert raced == [True]
    assert db.count_reports('h1') == 2
    assert [s.timestamp for s in db.vm_samples('a')] == [10.0, 20.0]


def test_a_vm_listed_twice_in_a_report_is_applied_in_order(db):
    db.store_report(_report(1, 10.0, vms=[_vm('old', 10.0)]))
    db.store_report(_report(2, 20.0, vms=[
        _vm('old', 20.0, state='paused'), _vm('old', 19.0, state='late'),
        _vm('new', 20.0, state='first'), _vm('new', 21.0, state='second'),
        _vm('new', 20.5, state='older')]))
    assert db.get_vm('old').state == 'paused'
    new = db.get_vm('new')
    assert (new.state, new.first_seen, new.last_seen) == \
        ('second', 20.0, 21.0)
    assert [s.state for s in db.vm_samples('new')] == \
        ['first', 'older', 'second']
    assert len(db.vm_samples('old')) == 3


def test_a_report_of_many_vms_keeps_every_column(db):
    vms = [_vm('vm-%04d' % i, 10.0, pinned_kb=i, pinned_note='n',
               pinned_at=9.0, wss_max_avg_kb=i, max_avg_window=5,
               max_avg_slice_s=60.0, badis_mode='V', borrowed_kb=i,
               nova_instance=True) for i in range(1200)]
    assert db.store_report(_report(1, 10.0, vms=vms))
    assert db.store_report(_report(2, 20.0, vms=[
        _vm(v.uuid, 20.0, booked_kb=7) for v in vms]))
    assert len(db.list_vms('h1')) == 1200
    vm = db.get_vm('vm-0700')
    assert (vm.first_seen, vm.last_seen, vm.booked_kb, vm.nova_instance) \
        == (10.0, 20.0, 7, False)
    first = db.vm_samples('vm-0700')[0]
    columns = [c.key for c in models.VMSample.__table__.columns
               if c.key not in ('id', 'vm_id', 'host_id')]
    assert {k: getattr(first, k) for k in columns} == {
        k: getattr(vms[700], k) for k in columns}


def _tables(db):
    """Every row the reports wrote, without ids and times of writing."""
    def rows(model, skip):
        with db.engine.connect() as conn:
            out = [{k: v for k, v in r._mapping.items() if k not in skip}
                   for r in conn.execute(sa.select(model))]
        return sorted(out, key=repr)
    hosts = {h.id: h.name for h in db.list_hosts()}
    vms = {v.id: v.uuid for v in db.list_vms()}

    def named(r):
        r = dict(r)
        for k, names in (('host_id', hosts), ('vm_id', vms)):
            if k in r:
                r[k] = names.get(r[k])
        return r
    skip = {'id', 'created_at', 'updated_at'}
    return {name: sorted(map(named, rows(model, skip)), key=repr)
            for name, model in (('hosts', models.Host), ('vms', models.VM),
                                ('host_samples', models.HostSample),
                                ('vm_samples', models.VMSample))}


def _mixed_reports():
    return [
        _report(2, 20.0, host='h1', reservoir=20,
                vms=[_vm('a', 20.0), _vm('b', 20.0, state='paused')]),
        # the same host's older report, later in the list (a backlog)
        _report(1, 10.0, host='h1', reservoir=10,
                vms=[_vm('a', 10.0, state='old'), _vm('c', 10.0)]),
        # VM b moves to h2 within the list; h2 is new
        _report(1, 25.0, host='h2', vms=[_vm('b', 25.0, state='moved')]),
        # the first report again (a resend): known
        _report(2, 20.0, host='h1', reservoir=20,
                vms=[_vm('a', 20.0), _vm('b', 20.0, state='paused')]),
        _report(3, 30.0, host='h1', reservoir=30,
                vms=[_vm('a', 30.0, balloon=7)]),
    ]


def test_reports_stored_together_are_stored_as_one_by_one(db, tmp_path,
                                                          clock):
    db.store_report(_report(9, 5.0, host='h3', vms=[_vm('z', 5.0)]))
    url = 'sqlite:///%s' % (tmp_path / 'one.db')
    migration.upgrade(url)
    other = db_api.Database(url, clock=clock)
    try:
        other.store_report(_report(9, 5.0, host='h3', vms=[_vm('z', 5.0)]))
        reports = _mixed_reports() + [
            _report(9, 5.0, host='h3', vms=[_vm('z', 5.0)])]
        together = db.store_reports(reports)
        alone = [other.store_report(r) for r in reports]
        assert together == alone == [True, True, True, False, True, False]
        assert _tables(db) == _tables(other)
    finally:
        other.close()
    assert db.get_vm('b').host.name == 'h2'
    assert db.get_host('h1').reservoir_kb == 30
    assert db.vm_samples('a')[-1].balloon_kb == 7
    assert db.store_reports([]) == []


def test_reports_racing_another_controller_are_stored_one_by_one(
        db, tmp_path):
    """A batch that collides with another controller's insert is stored
    again report by report: the raced report is known, the others are
    stored."""
    # (both hosts known: SQLite would lock the other out of a batch that
    # created one before the race)
    db.store_report(_report(1, 5.0, host='h2', vms=[_vm('b', 5.0)]))
    db.store_report(_report(1, 5.0, host='h1', boot='b0'))
    with _racing(db, 'INSERT INTO host_samples', lambda other:
                 other.store_report(_report(2, 20.0, vms=[_vm('a', 20.0)]))
                 ) as raced:
        assert db.store_reports([
            _report(1, 10.0, vms=[_vm('a', 10.0)]),
            _report(2, 20.0, vms=[_vm('a', 20.0)]),
            _report(2, 10.0, host='h2', vms=[_vm('b', 10.0)])]) == \
            [True, False, True]
    assert raced == [True]
    assert db.count_reports() == 5
    assert [s.timestamp for s in db.vm_samples('a')] == [10.0, 20.0]


def test_a_first_report_racing_the_hosts_creation_is_stored(db):
    """The host's row is created by another transaction (its GMC_inform,
    another controller) between the report's look-up and its insert: the
    report is stored on the retry, not answered "known" (the agent would
    drop it)."""
    with _racing(db, 'INSERT INTO hosts', lambda other:
                 other.store_reservoir(objects.ReservoirInform(
                     host='h9', reservoir_kb=9, timestamp=1.0))) as raced:
        assert db.store_report(_report(1, 10.0, host='h9',
                                       vms=[_vm('a', 10.0)]))
    assert raced == [True]
    assert db.count_reports('h9') == 1
    assert len(db.vm_samples('a')) == 1
