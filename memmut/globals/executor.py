"""Executes a consolidation plan: live migrations through the nova API.

:class:`NovaExecutor` takes the migration rows a round stored
(:class:`memmut.db.models.Migration`) and live-migrates each VM to its
planned host through openstacksdk on a keystoneauth session loaded from
``[nova]`` (the client nova itself uses to call other services), one at
a time or up to ``[nova] max_parallel`` at once (across the rounds
executing, at most ``max_per_source`` leaving one host:
:mod:`memmut.globals.migration_slots`). For every migration:

1. The server is looked up. A server that is gone, not on the planned
   source host any more, already on the destination or not ACTIVE/PAUSED
   is *skipped* (the plan is stale: the next round plans again).
2. ``os-migrateLive`` to the planned host (nova's scheduler still checks
   it: no ``force``). Nova rejecting the request as invalid (HTTP 400,
   403, 404) fails the migration at once; a conflict (409), a server
   error or an unreachable API is retried.
3. The server is polled every ``poll_interval`` seconds until it has no
   task state any more: on the destination host it is *completed*,
   anywhere else the attempt failed (the error names the status of nova's
   migration record and the server's fault). After ``migration_timeout``
   seconds the attempt fails and is not retried (nova may still be
   copying memory); with ``abort_on_timeout`` nova is asked to abort it.
4. A failed attempt is retried up to ``migration_retries`` times,
   ``retry_interval`` seconds apart.

Each row records its outcome with :meth:`Database.update_migration`:
``running`` with ``started_at`` when the first attempt starts, then
``completed``/``failed``/``skipped``/``cancelled`` with ``attempts``,
``error`` (why it failed or was skipped, every failed attempt named),
``finished_at``, and for a completed one ``dest_host`` as nova reports
it (a failed row keeps the planned destination). ``cancelled`` means the
controller stopped first.

The migrations start in the order given (the round orders them by
``[consolidation] move_order``). With ``max_parallel`` above 1 and a
``move_order`` other than ``plan``, an underload move does not start
while an overload move sharing one of its hosts has not finished
(:func:`memmut.consolidation.move_order.held_back`), as in the
simulator.

:class:`PowerCommand` is the optional hook run for hosts a round
emptied (``[consolidation] power_off_command``).
"""

import concurrent.futures
import dataclasses
import shlex
import subprocess
import threading
import time
import typing

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg
from oslo_log import log as logging

from memmut.consolidation import move_order
from memmut.conf import nova as nova_conf
from memmut.globals import migration_slots

LOG = logging.getLogger(__name__)
# Threads of one round's executor at most (each waits for its slot).
MAX_WORKERS = 256


COMPLETED = 'completed'
FAILED = 'failed'
SKIPPED = 'skipped'
CANCELLED = 'cancelled'
RUNNING = 'running'

# Server states a live migration can start from (nova's API check).
_MIGRATABLE = ('ACTIVE', 'PAUSED')
# Client errors: retrying the same request cannot help.
_PERMANENT_HTTP = (400, 401, 403, 404)


def load_session(conf, group=nova_conf.GROUP):
    """A keystoneauth session from ``[nova]``'s auth and session options.

    The auth plugin named by ``auth_type`` registers and reads its own
    options (``auth_url``, ``username``...); no ``auth_type`` gives a
    session without authentication.
    """
    auth = ks_loading.load_auth_from_conf_options(conf, group)
    return ks_loading.load_session_from_conf_options(conf, group, auth=auth)


def connect(conf, session=None):
    """An openstacksdk connection to the compute API.

    The adapter options (endpoint, region, interfaces, retries) come from
    ``[nova]``: openstacksdk's oslo.config support reads a service's
    options from the group named after its project, ``nova`` for compute.
    """
    from openstack import connection
    session = session or load_session(conf)
    return connection.Connection(
        session=session, oslo_conf=conf,
        service_types={nova_conf.SERVICE_TYPE},
        app_name='memmut')


@dataclasses.dataclass
class Outcome:
    """How one migration ended (what its row records)."""
    status: str
    attempts: int = 0
    error: typing.Optional[str] = None
    dest_host: typing.Optional[str] = None


@dataclasses.dataclass
class _Attempt:
    status: str
    error: typing.Optional[str] = None
    host: typing.Optional[str] = None
    retry: bool = False


def _http_status(exc):
    return getattr(exc, 'status_code', None)


def _describe(exc):
    text = str(exc).strip().splitlines()
    first = text[0] if text else ''
    name = type(exc).__name__
    # openstacksdk's messages already start with the exception's name.
    return first if first.startswith(name) else '%s: %s' % (name, first)


def new_slots(conf):
    """The migration slots ``[nova] max_parallel`` and
    ``max_per_source`` give."""
    return migration_slots.MigrationSlots(conf.nova.max_parallel,
                                          conf.nova.max_per_source)


class NovaExecutor:
    """Live-migrates planned migrations through nova; see the module doc.

    ``session``: a keystoneauth session to use instead of loading one from
    ``[nova]``; ``connection``: a ready openstacksdk connection (tests).
    ``stop``: an Event; once set, no new attempt starts and the waits end
    (the rows not finished become ``cancelled``).
    """

    def __init__(self, conf, db, session=None, connection=None, stop=None,
                 clock=time.time):
        self.conf = conf
        self.db = db
        self._session = session
        self._conn = connection
        self._stop = stop or threading.Event()
        self._clock = clock
        # The migration slots (memmut.globals.migration_slots), shared
        # by the executors of overlapping rounds (share_slots), so that
        # [nova] max_parallel and max_per_source bound them together.
        self._slots = None

    @property
    def options(self):
        return self.conf.nova

    def _connection(self):
        if self._conn is None:
            self._conn = connect(self.conf, self._session)
        return self._conn

    # -- the plan ---------------------------------------------------------

    def execute(self, migrations):
        """Run the migrations; returns ``{migration id: Outcome}``."""
        migrations = list(migrations)
        if not migrations:
            return {}
        try:
            conn = self._connection()
            # Credentials and the catalog (or endpoint_override) now,
            # rather than as many times as there are migrations.
            conn.compute.get_endpoint()
        except Exception as e:
            error = 'cannot connect to nova: %s' % _describe(e)
            LOG.error('Consolidation: %s', error)
            return {m.id: self._record(m, Outcome(FAILED, 0, error), None)
                    for m in migrations}
        if self._slots is None:
            self._slots = new_slots(self.conf)
        # A thread per migration (up to MAX_WORKERS): the slots decide
        # which may go, so that one waiting for its source host does not
        # hold back one from a free host.
        workers = 1 if self.options.max_parallel == 1 else min(
            MAX_WORKERS, len(migrations))
        if workers == 1:
            return {m.id: self._migrate(conn, m) for m in migrations}
        if self._move_order() != move_order.PLAN:
            return self._execute_gated(conn, migrations, workers)
        with concurrent.futures.ThreadPoolExecutor(
                workers, thread_name_prefix='memmut-migrate') as pool:
            futures = {m.id: pool.submit(self._migrate, conn, m)
                       for m in migrations}
            return {mid: f.result() for mid, f in futures.items()}

    def _move_order(self):
        try:
            return self.conf.consolidation.move_order
        except (AttributeError, cfg.NoSuchGroupError):
            # a configuration without the [consolidation] group
            return move_order.PLAN

    def _execute_gated(self, conn, migrations, workers):
        """Up to ``workers`` at once, in the given order, holding back an
        underload move while an overload move sharing one of its hosts
        is not finished (an overload move is never held back, so this
        always makes progress)."""
        entries = [move_order.Entry(m.kind, m.source_host, m.dest_host)
                   for m in migrations]
        pending = list(range(len(migrations)))
        running = {}
        out = {}
        with concurrent.futures.ThreadPoolExecutor(
                workers, thread_name_prefix='memmut-migrate') as pool:
            while pending or running:
                busy = move_order.overload_hosts(
                    [entries[i] for i in pending + list(running.values())])
                for i in list(pending):
                    if len(running) >= workers:
                        break
                    if move_order.held_back(entries[i], busy):
                        continue
                    pending.remove(i)
                    running[pool.submit(self._migrate, conn,
                                        migrations[i])] = i
                done, _ = concurrent.futures.wait(
                    running, return_when=concurrent.futures.FIRST_COMPLETED)
                for f in done:
                    out[migrations[running.pop(f)].id] = f.result()
        return {m.id: out[m.id] for m in migrations}

    def wait_for_compute(self, host, timeout, poll=None):
        """Wait until nova says ``host``'s nova-compute is up and enabled
        (a host just powered on). Returns ``(ok, message)``."""
        poll = self.options.poll_interval if poll is None else poll
        deadline = self._clock() + timeout
        last = 'not in nova\'s service list'
        while True:
            try:
                services = list(self._connection().compute.services(
                    binary='nova-compute', host=host))
            except Exception as e:
                services, last = [], 'service list failed: %s' % (
                    _describe(e))
            for svc in services:
                if svc.state == 'up' and svc.status == 'enabled' and \
                        not getattr(svc, 'is_forced_down', False):
                    return True, 'nova-compute on %s is up' % host
                last = 'nova-compute %s, %s%s' % (
                    svc.state, svc.status, ', forced down'
                    if getattr(svc, 'is_forced_down', False) else '')
            if self._clock() >= deadline or self._stop.wait(poll):
                return False, ('nova-compute on %s not up within %d s (%s)'
                               % (host, timeout, last))

    def _record(self, mig, outcome, started_at):
        fields = dict(attempts=outcome.attempts, error=outcome.error,
                      finished_at=self._clock())
        if started_at is not None:
            fields['started_at'] = started_at
        if outcome.status == COMPLETED and outcome.dest_host:
            # Where nova put the server; a failed row keeps the planned
            # destination, its error says where the server stayed.
            fields['dest_host'] = outcome.dest_host
        try:
            self.db.update_migration(mig.id, outcome.status, **fields)
        except Exception:
            LOG.exception('Cannot record the outcome of migration %s (%s)',
                          mig.id, outcome.status)
        return outcome

    def share_slots(self, slots):
        """Take each migration's slot from ``slots`` (a
        :class:`~memmut.globals.migration_slots.MigrationSlots` shared
        with other rounds' executors)."""
        self._slots = slots

    def _migrate(self, conn, mig):
        """One migration with its retries, once it has a slot; never
        raises."""
        slots = self._slots
        if slots is None or not slots.acquire(mig.source_host, self._stop):
            # no slots (a direct call), or stopping: recorded cancelled
            return self._migrate_once(conn, mig)
        try:
            return self._migrate_once(conn, mig)
        finally:
            slots.release(mig.source_host)

    def _migrate_once(self, conn, mig):
        try:
            return self._migrate_with_retries(conn, mig)
        except Exception as e:     # a bug or the database: keep going
            LOG.exception('Migration %s of VM %s failed unexpectedly',
                          mig.id, mig.vm_uuid)
            return self._record(mig, Outcome(FAILED, 0, _describe(e)), None)

    def _migrate_with_retries(self, conn, mig):
        if self._stop.is_set():
            return self._record(mig, Outcome(
                CANCELLED, 0, 'controller stopping before it started'),
                None)
        started = self._clock()
        self.db.update_migration(mig.id, RUNNING, started_at=started)
        LOG.info('Live-migrating VM %s from %s to %s (%s %s)', mig.vm_uuid,
                 mig.source_host, mig.dest_host, mig.resource, mig.kind)
        attempts = 0
        errors = []
        while True:
            attempts += 1
            try:
                result = self._attempt(conn, mig, attempts)
            except Exception as e:
                # The API went away mid-attempt, or an SDK surprise.
                result = _Attempt(FAILED, _describe(e), retry=True)
            if result.status == SKIPPED and errors:
                # A retry found the server unfit (in ERROR after the
                # failed attempt, moved elsewhere...): the migration failed.
                result = _Attempt(FAILED, 'cannot retry: %s' % result.error,
                                  result.host)
            if result.status != FAILED:
                break
            errors.append('attempt %d: %s' % (attempts, result.error))
            LOG.warning('Live migration of VM %s to %s, attempt %d/%d: %s',
                        mig.vm_uuid, mig.dest_host, attempts,
                        self.options.migration_retries + 1, result.error)
            if (not result.retry or
                    attempts > self.options.migration_retries):
                break
            self.db.update_migration(mig.id, RUNNING, attempts=attempts,
                                     error='; '.join(errors))
            if self._stop.wait(self.options.retry_interval):
                result = _Attempt(CANCELLED,
                                  'controller stopping between attempts')
                break
        error = result.error
        if result.status == FAILED:
            error = '; '.join(errors)
        elif errors:
            error = '; '.join(errors + [result.error or result.status])
        outcome = Outcome(result.status, attempts, error, result.host)
        (LOG.info if result.status in (COMPLETED, SKIPPED) else LOG.error)(
            'Live migration of VM %s to %s: %s after %d attempt(s)%s',
            mig.vm_uuid, mig.dest_host, result.status, attempts,
            ': %s' % error if error else '')
        return self._record(mig, outcome, started)

    # -- one attempt --------------------------------------------------------

    def _block_migration(self):
        return {'auto': 'auto', 'true': True,
                'false': False}[self.options.block_migration]

    def _nova_migrations(self, conn, uuid):
        return sorted(conn.compute.migrations(server_id=uuid),
                      key=lambda m: int(m.id))

    def _attempt(self, conn, mig, attempt):
        from openstack import exceptions as sdk_exc
        try:
            server = conn.compute.get_server(mig.vm_uuid)
        except sdk_exc.NotFoundException:
            return _Attempt(SKIPPED, 'server %s not found in nova'
                            % mig.vm_uuid)
        host = server.compute_host
        if host == mig.dest_host:
            if attempt == 1:
                return _Attempt(SKIPPED, 'server already on %s' % host, host)
            return _Attempt(COMPLETED, None, host)
        if host != mig.source_host:
            return _Attempt(SKIPPED, 'server is on %s, not on %s as '
                            'planned' % (host, mig.source_host), host)
        if server.task_state:
            return _Attempt(FAILED, 'server busy (task state %s)'
                            % server.task_state, host, retry=True)
        if server.status not in _MIGRATABLE:
            return _Attempt(SKIPPED, 'server is %s: only ACTIVE or PAUSED '
                            'servers live-migrate' % server.status, host)
        known = {m.id for m in self._nova_migrations(conn, mig.vm_uuid)}
        try:
            conn.compute.live_migrate_server(
                server, host=mig.dest_host,
                block_migration=self._block_migration())
        except sdk_exc.HttpException as e:
            status = _http_status(e)
            return _Attempt(FAILED, 'nova refused the live migration: %s'
                            % _describe(e), host,
                            retry=status not in _PERMANENT_HTTP)
        return self._wait(conn, mig, server, known)

    def _wait(self, conn, mig, server, known):
        from openstack import exceptions as sdk_exc
        deadline = self._clock() + self.options.migration_timeout
        current = None      # nova's migration record of this attempt
        while True:
            if self._stop.wait(self.options.poll_interval):
                return _Attempt(CANCELLED, 'controller stopping while nova '
                                'migrates the server (it may complete)',
                                server.compute_host)
            try:
                polled = conn.compute.get_server(mig.vm_uuid)
                ours = [m for m in self._nova_migrations(conn, mig.vm_uuid)
                        if m.id not in known]
            except sdk_exc.NotFoundException:
                return _Attempt(FAILED, 'server %s deleted while migrating'
                                % mig.vm_uuid)
            except sdk_exc.SDKException as e:
                # The API may come back before the deadline.
                LOG.warning('Polling VM %s: %s', mig.vm_uuid, _describe(e))
            else:
                server = polled
                current = ours[-1] if ours else current
                if not server.task_state and server.status != 'MIGRATING':
                    if server.compute_host == mig.dest_host:
                        return _Attempt(COMPLETED, None, server.compute_host)
                    return _Attempt(FAILED, self._failure(server, current),
                                    server.compute_host, retry=True)
            if self._clock() >= deadline:
                return self._timed_out(conn, mig, server, current)

    @staticmethod
    def _failure(server, migration):
        parts = ['server still on %s (%s)' % (server.compute_host,
                                              server.status)]
        if migration is not None:
            parts.append('nova migration %s %s' % (migration.id,
                                                   migration.status))
        fault = server.fault or {}
        if fault.get('message'):
            parts.append('fault: %s' % fault['message'])
        return ', '.join(parts)

    def _timed_out(self, conn, mig, server, migration):
        error = 'no result after %d s' % self.options.migration_timeout
        if self.options.abort_on_timeout and migration is not None:
            try:
                conn.compute.abort_server_migration(
                    migration.id, mig.vm_uuid)
                error += '; abort of nova migration %s requested' % (
                    migration.id)
            except Exception as e:
                error += '; abort of nova migration %s failed: %s' % (
                    migration.id, _describe(e))
        return _Attempt(FAILED, error, server.compute_host, retry=False)


class PowerCommand:
    """``[consolidation] power_off_command`` or ``power_on_command`` for
    one host.

    Calling it returns ``(ok, message)``; with no command configured it
    is falsy and does nothing.
    """

    def __init__(self, conf, action='off'):
        c = conf.consolidation
        self.action = action
        self.template = getattr(c, 'power_%s_command' % action).strip()
        self.timeout = getattr(c, 'power_%s_timeout' % action)

    def __bool__(self):
        return bool(self.template)

    def argv(self, host):
        return [arg.replace('{host}', host)
                for arg in shlex.split(self.template)]

    def __call__(self, host):
        if not self.template:
            return False, 'no power_%s_command' % self.action
        argv = self.argv(host)
        try:
            done = subprocess.run(argv, capture_output=True, text=True,
                                  timeout=self.timeout, check=False)
        except subprocess.TimeoutExpired:
            return False, '%s: killed after %d s' % (argv[0], self.timeout)
        except OSError as e:
            return False, '%s: %s' % (argv[0], e)
        if done.returncode != 0:
            err = (done.stderr or done.stdout or '').strip().splitlines()
            return False, '%s exited with %d%s' % (
                argv[0], done.returncode, ': %s' % err[-1] if err else '')
        return True, '%s succeeded' % argv[0]
