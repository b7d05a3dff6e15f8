"""The nova executor's logic against a scripted compute API (the real
nova API is exercised in tests/functional/nova)."""

import threading
import time

from openstack import exceptions as sdk_exc
import pytest
import requests

from memmut.globals import executor
from tests import common


def http_error(cls, status, message):
    response = requests.Response()
    response.status_code = status
    return cls(message, response=response)


class Server:
    def __init__(self, uuid, host, status='ACTIVE'):
        self.id = uuid
        self.compute_host = host
        self.status = status
        self.task_state = None
        self.fault = None


class NovaMigration:
    def __init__(self, mid, status='running'):
        self.id = mid
        self.status = status


class FakeCompute:
    """Live migrations follow a script: one entry per os-migrateLive call,
    'ok' (lands after ``polls`` polls), 'error' (nova's migration errors
    out, the server stays), 'hang' (never ends) or an exception to raise.
    """

    def __init__(self, servers, script=(), polls=2):
        self.servers = {s.id: s for s in servers}
        self.script = list(script)
        self.polls = polls
        self.nova_migrations = {}
        self.calls = []
        self.aborted = []
        self._pending = {}
        self._next_id = 1
        self.lock = threading.Lock()

    def get_server(self, uuid):
        with self.lock:
            if uuid not in self.servers:
                raise http_error(sdk_exc.NotFoundException, 404,
                                 'No server with a name or ID of %s' % uuid)
            server = self.servers[uuid]
            pending = self._pending.get(uuid)
            if pending is not None:
                pending['left'] -= 1
                if pending['left'] <= 0 and pending['action'] != 'hang':
                    del self._pending[uuid]
                    server.task_state = None
                    server.status = 'ACTIVE'
                    if pending['action'] == 'ok':
                        server.compute_host = pending['host']
                        pending['migration'].status = 'completed'
                    else:
                        pending['migration'].status = 'error'
            copy = Server(server.id, server.compute_host, server.status)
            copy.task_state = server.task_state
            return copy

    def migrations(self, server_id):
        return list(self.nova_migrations.get(server_id, []))

    def live_migrate_server(self, server, host, block_migration):
        self.calls.append((server.id, host, block_migration))
        action = self.script.pop(0) if self.script else 'ok'
        if isinstance(action, Exception):
            raise action
        with self.lock:
            mig = NovaMigration(self._next_id)
            self._next_id += 1
            self.nova_migrations.setdefault(server.id, []).append(mig)
            real = self.servers[server.id]
            real.task_state = 'migrating'
            real.status = 'MIGRATING'
            self._pending[server.id] = {'action': action, 'host': host,
                                        'left': self.polls,
                                        'migration': mig}

    def get_endpoint(self):
        return 'http://nova.example:8774/v2.1'

    def abort_server_migration(self, migration_id, server):
        self.aborted.append((migration_id, server))


class Conn:
    def __init__(self, compute):
        self.compute = compute


@pytest.fixture
def nconf():
    conf = common.private_conf(nova={'poll_interval': 0.01,
                                     'retry_interval': 0.0,
                                     'migration_timeout': 5,
                                     'migration_retries': 2})
    yield conf
    conf.reset()


def planned(db, *moves):
    rnd = db.create_round()
    return [db.add_migration(rnd.id, vm, src, dst, 'memory', 'overload')
            for vm, src, dst in moves]


def run(nconf, db, compute, rows, **kw):
    ex = executor.NovaExecutor(nconf, db, connection=Conn(compute), **kw)
    return ex.execute(rows)


def row(db, mig):
    (r,) = db.list_migrations(vm_uuid=mig.vm_uuid)
    return r


def test_live_migration_completes_and_is_recorded(nconf, db, clock):
    compute = FakeCompute([Server('a', 'h1')])
    (mig,) = planned(db, ('a', 'h1', 'h2'))
    out = run(nconf, db, compute, [mig], clock=clock)
    assert out[mig.id] == executor.Outcome('completed', 1, None, 'h2')
    assert compute.calls == [('a', 'h2', 'auto')]
    r = row(db, mig)
    assert (r.status, r.attempts, r.error, r.dest_host) == \
        ('completed', 1, None, 'h2')
    assert r.started_at == r.finished_at == clock()


def test_failed_attempts_are_retried_then_recorded(nconf, db):
    compute = FakeCompute([Server('a', 'h1')], script=['error', 'ok'])
    (mig,) = planned(db, ('a', 'h1', 'h2'))
    out = run(nconf, db, compute, [mig])
    assert out[mig.id].status == 'completed'
    r = row(db, mig)
    assert (r.status, r.attempts) == ('completed', 2)
    assert 'attempt 1: server still on h1 (ACTIVE), nova migration 1 ' \
        'error' in r.error


def test_retries_are_bounded(nconf, db):
    compute = FakeCompute([Server('a', 'h1')], script=['error'] * 5)
    (mig,) = planned(db, ('a', 'h1', 'h2'))
    run(nconf, db, compute, [mig])
    r = row(db, mig)
    assert (r.status, r.attempts) == ('failed', 3)     # 1 + 2 retries
    assert len(compute.calls) == 3
    assert r.error.count('nova migration') == 3
    assert r.dest_host == 'h2'      # the plan's; the server stayed on h1


def test_a_rejected_request_is_not_retried(nconf, db):
    compute = FakeCompute([Server('a', 'h1')], script=[http_error(
        sdk_exc.BadRequestException, 400,
        'Compute host h9 could not be found.')])
    (mig,) = planned(db, ('a', 'h1', 'h9'))
    run(nconf, db, compute, [mig])
    r = row(db, mig)
    assert (r.status, r.attempts) == ('failed', 1)
    assert 'nova refused the live migration' in r.error
    assert 'h9 could not be found' in r.error


def test_a_conflict_is_retried(nconf, db):
    compute = FakeCompute([Server('a', 'h1')], script=[
        http_error(sdk_exc.ConflictException, 409, 'busy'), 'ok'])
    (mig,) = planned(db, ('a', 'h1', 'h2'))
    run(nconf, db, compute, [mig])
    assert (row(db, mig).status, row(db, mig).attempts) == ('completed', 2)


def test_a_timeout_aborts_and_is_not_retried(nconf, db):
    nconf.set_override('migration_timeout', 1, group='nova')
    nconf.set_override('poll_interval', 0.05, group='nova')
    compute = FakeCompute([Server('a', 'h1')], script=['hang'])
    (mig,) = planned(db, ('a', 'h1', 'h2'))
    run(nconf, db, compute, [mig])
    r = row(db, mig)
    assert (r.status, r.attempts) == ('failed', 1)
    assert 'no result after 1 s' in r.error
    assert compute.aborted == [(1, 'a')]


@pytest.mark.parametrize('server,why', [
    (None, 'server a not found in nova'),
    (Server('a', 'h3'), 'server is on h3, not on h1 as planned'),
    (Server('a', 'h2'), 'server already on h2'),
    (Server('a', 'h1', status='SHUTOFF'), 'server is SHUTOFF'),
])
def test_stale_plans_are_skipped(nconf, db, server, why):
    compute = FakeCompute([server] if server else [])
    (mig,) = planned(db, ('a', 'h1', 'h2'))
    run(nconf, db, compute, [mig])
    r = row(db, mig)
    assert r.status == 'skipped' and r.error.startswith(why)
    assert compute.calls == []


def test_bounded_parallel_migrations(nconf, db):
    nconf.set_override('max_parallel', 3, group='nova')
    servers = [Server(u, 'src-' + u) for u in 'abcde']
    compute = FakeCompute(servers, polls=5)
    active, peak = [0], [0]
    real = compute.live_migrate_server

    def counting(server, host, block_migration):
        with compute.lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        real(server, host, block_migration)
    compute.live_migrate_server = counting
    real_get = compute.get_server

    def get(uuid):
        s = real_get(uuid)
        if s.compute_host == 'h2' and s.task_state is None:
            with compute.lock:
                active[0] -= 1 if active[0] else 0
        return s
    compute.get_server = get
    rows = planned(db, *[(u, 'src-' + u, 'h2') for u in 'abcde'])
    out = run(nconf, db, compute, rows)
    assert {o.status for o in out.values()} == {'completed'}
    assert 1 < peak[0] <= 3


class Counting(executor.NovaExecutor):
    """Migrations that take 50 ms; counts them running, per source."""
    lock = threading.Lock()

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.active, self.peak, self.by_host, self.order = {}, {}, {}, []

    def _migrate_with_retries(self, conn, mig):
        with self.lock:
            for key in ('all', mig.source_host):
                self.active[key] = self.active.get(key, 0) + 1
                self.peak[key] = max(self.peak.get(key, 0),
                                     self.active[key])
            self.order.append(mig.vm_uuid)
        time.sleep(0.05)
        with self.lock:
            for key in ('all', mig.source_host):
                self.active[key] -= 1
        return executor.Outcome('completed', 1, None, mig.dest_host)


def test_one_migration_leaves_a_host_at_a_time_others_overtake(nconf, db):
    # four moves off h1 then one off h3: the h3 one does not wait behind
    # h1's queue, and no two leave h1 at once (nova's default)
    nconf.set_override('max_parallel', 2, group='nova')
    rows = planned(db, *[(u, 'h1', 'h2') for u in 'abcd'],
                   ('e', 'h3', 'h2'))
    ex = Counting(nconf, db, connection=Conn(FakeCompute([])))
    out = ex.execute(rows)
    assert {o.status for o in out.values()} == {'completed'}
    assert ex.peak['h1'] == 1 and ex.peak['all'] == 2
    assert ex.order.index('e') < ex.order.index('b')
    nconf.set_override('max_per_source', 0, group='nova')
    ex = Counting(nconf, db, connection=Conn(FakeCompute([])))
    ex.execute(planned(db, *[(u, 'h1', 'h2') for u in 'fgh']))
    assert ex.peak['h1'] == 2


def test_executors_sharing_slots_run_max_parallel_in_all(nconf, db):
    # Two rounds executing at once (round_pacing clock): their executors
    # share the slots, so max_parallel bounds them together.
    nconf.set_override('max_parallel', 2, group='nova')
    nconf.set_override('max_per_source', 0, group='nova')
    slots = executor.new_slots(nconf)
    outs = []
    threads = []
    for vms in ('abc', 'def'):
        rows = planned(db, *[(u, 'h1', 'h2') for u in vms])
        ex = Counting(nconf, db, connection=Conn(FakeCompute([])))
        ex.share_slots(slots)
        threads.append(threading.Thread(
            target=lambda ex=ex, rows=rows: outs.append(ex.execute(rows))))
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert [len(o) for o in outs] == [3, 3]
    assert slots.peak == 2 and slots.running == 0


def test_a_migration_waiting_for_a_slot_is_cancelled_on_stop(nconf, db):
    stop = threading.Event()
    slots = executor.new_slots(nconf)
    assert slots.acquire('h1')      # another round's migration off h1
    (mig,) = planned(db, ('a', 'h1', 'h2'))
    compute = FakeCompute([Server('a', 'h1')])
    ex = executor.NovaExecutor(nconf, db, connection=Conn(compute),
                               stop=stop)
    ex.share_slots(slots)
    threading.Timer(0.2, stop.set).start()
    out = ex.execute([mig])
    assert out[mig.id].status == 'cancelled' and compute.calls == []


def test_stop_cancels_what_has_not_finished(nconf, db):
    stop = threading.Event()
    stop.set()
    compute = FakeCompute([Server('a', 'h1')])
    (mig,) = planned(db, ('a', 'h1', 'h2'))
    out = run(nconf, db, compute, [mig], stop=stop)
    assert out[mig.id].status == 'cancelled'
    assert row(db, mig).status == 'cancelled' and compute.calls == []


def test_no_nova_fails_every_migration(nconf, db):
    nconf.set_override('auth_type', 'no-such-plugin', group='nova')
    rows = planned(db, ('a', 'h1', 'h2'), ('b', 'h1', 'h2'))
    out = executor.NovaExecutor(nconf, db).execute(rows)
    assert {o.status for o in out.values()} == {'failed'}
    for mig in rows:
        r = row(db, mig)
        assert r.status == 'failed' and \
            r.error.startswith('cannot connect to nova')


def test_no_endpoint_fails_every_migration_without_retries(nconf, db):
    # No auth_type and no endpoint_override: nova cannot be found.
    rows = planned(db, ('a', 'h1', 'h2'))
    out = executor.NovaExecutor(nconf, db).execute(rows)
    (outcome,) = out.values()
    assert (outcome.status, outcome.attempts) == ('failed', 0)
    assert outcome.error.startswith('cannot connect to nova: ')
    assert row(db, rows[0]).error == outcome.error


def test_the_connection_reads_the_nova_group(nconf):
    nconf.set_override('auth_type', 'none', group='nova')
    nconf.set_override('endpoint_override', 'http://nova.example:8774/v2.1',
                       group='nova')
    nconf.set_override('region_name', 'RegionTwo', group='nova')
    conn = executor.connect(nconf)
    region = conn.config
    assert region.get_endpoint('compute') == 'http://nova.example:8774/v2.1'
    assert region.get_region_name('compute') == 'RegionTwo'
    assert region.get_interface('compute') == ['internal', 'public']


def test_power_off_command(tmp_path):
    conf = common.private_conf()
    hook = executor.PowerCommand(conf, 'off')
    assert not hook and hook('h1') == (False, 'no power_off_command')
    out = tmp_path / 'off'
    # The host name is one argument, never parsed by a shell.
    conf.set_override('power_off_command',
                      'sh -c \'printf "%%s\\n" "$1" > %s\' sh {host}' % out,
                      group='consolidation')
    hook = executor.PowerCommand(conf, 'off')
    assert hook.argv('h1') == ['sh', '-c', 'printf "%%s\\n" "$1" > %s'
                               % out, 'sh', 'h1']
    assert hook('h1;$(x) y') == (True, 'sh succeeded')
    assert out.read_text() == 'h1;$(x) y\n'
    conf.set_override('power_off_command', 'sh -c "echo no >&2; exit 3"',
                      group='consolidation')
    assert executor.PowerCommand(conf, 'off')('h1') == (
        False, 'sh exited with 3: no')
    conf.set_override('power_off_command', '/no/such/tool {host}',
                      group='consolidation')
    ok, message = executor.PowerCommand(conf, 'off')('h1')
    assert not ok and 'No such file' in message
    conf.reset()


def test_priority_order_holds_underload_moves_behind_overload_relief(
        nconf, db):
    # Three workers: the evacuation a (h1 -> h2) shares h2 with the
    # overload move b (h3 -> h2) and waits for it even though a worker
    # is free; c touches other hosts and starts at once.
    nconf.set_override('max_parallel', 3, group='nova')
    nconf.set_override('move_order', 'priority', group='consolidation')
    compute = FakeCompute([Server('a', 'h1'), Server('b', 'h3'),
                           Server('c', 'h4')], polls=3)
    rnd = db.create_round()
    rows = [db.add_migration(rnd.id, 'a', 'h1', 'h2', 'cpu', 'underload'),
            db.add_migration(rnd.id, 'b', 'h3', 'h2', 'cpu', 'overload'),
            db.add_migration(rnd.id, 'c', 'h4', 'h5', 'cpu', 'underload')]
    finished = []
    real_get = compute.get_server

    def get(uuid):
        s = real_get(uuid)
        if s.id == 'b' and s.compute_host == 'h2' and 'b' not in finished:
            finished.append('b')
        return s
    compute.get_server = get
    real_migrate = compute.live_migrate_server
    a_started_after = []

    def migrate(server, host, block_migration):
        if server.id == 'a':
            a_started_after.append(list(finished))
        real_migrate(server, host, block_migration)
    compute.live_migrate_server = migrate
    out = run(nconf, db, compute, rows)
    assert {o.status for o in out.values()} == {'completed'}
    assert a_started_after == [['b']]
    assert [c[0] for c in compute.calls][-1] == 'a'
    assert list(out) == [r.id for r in rows]
