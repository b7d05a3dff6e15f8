"""The controller's database API: every query memmut runs, in one place.

Callers get detached model objects (``expire_on_commit=False``) and never see
a session: each method is one short transaction. Reports are idempotent on
(host, boot_id, seq), the identity the agent gives every report, so a report
resent after a lost reply, or by an agent that kept its backlog across a
controller restart, is stored once.

Failures to reach or use the database become :class:`DBError` with the URL's
password masked, so services can print one clear line instead of a traceback.
"""

import collections
import math
import time

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy import orm

from memmut.db import models
from memmut.globals import allocations


class DBError(Exception):
    """The database cannot be reached or used; the message says why."""


class RecordNotFound(DBError):
    """A row that the caller named does not exist."""


def masked(url):
    """``url`` as text with its password hidden."""
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except Exception:           # not a URL at all: show nothing of it
        return '<unparsable database URL>'


def create_engine(url, debug=False):
    try:
        parsed = sa.engine.make_url(url)
    except sa_exc.ArgumentError:
        raise DBError('invalid database URL %r' % masked(url))
    kwargs = {'echo': debug, 'future': True}
    if parsed.get_backend_name() == 'sqlite':
        # The agent-side demo runs controller threads against one file.
        kwargs['connect_args'] = {'check_same_thread': False, 'timeout': 30}
    else:
        kwargs['pool_pre_ping'] = True   # survive a database restart
    try:
        return sa.create_engine(parsed, **kwargs)
    except (ImportError, sa_exc.ArgumentError) as e:
        raise DBError('cannot use database %s: %s' % (masked(url), e))


class Database:
    """Short transactions over the memmut schema (see :mod:`models`)."""

    def __init__(self, url, debug=False, clock=time.time):
        self.url = url
        self.engine = create_engine(url, debug)
        self._clock = clock
        self._sessions = orm.sessionmaker(self.engine,
                                          expire_on_commit=False)

    def close(self):
        self.engine.dispose()

    def _session(self):
        return _Transaction(self._sessions, self.url)

    # -- reports ----------------------------------------------------------

    def store_report(self, report):
        """Store a HostReport; False if this (host, boot_id, seq) is known."""
        return self.store_reports([report])[0]

    def store_reports(self, reports):
        """Store HostReports in one transaction, as if one by one in
        order: a list of booleans, False for a report whose (host,
        boot_id, seq) is known (stored before, or earlier in the list).

        One transaction and one executemany per table for the whole list
        (group commit): a controller under load stores the reports its
        RPC threads received meanwhile together (:mod:`memmut.globals.
        report_writer`), which costs it and the database less per report
        than one transaction each."""
        if not reports:
            return []
        try:
            return self._store_reports(reports)
        except DBError as e:
            # A unique constraint refused a row another transaction wrote
            # meanwhile: the same report (a resend another controller
            # took), or the host or a VM it creates (first seen by two
            # at once). In a batch it rolled back the others: each goes
            # again in its own transaction. Alone, it goes again once:
            # the retry finds the report known (False) or the row now
            # there (stored). Answering False without the retry would
            # make the agent drop a report that is not stored.
            if not isinstance(e.__cause__, sa_exc.IntegrityError):
                raise
            if len(reports) > 1:
                return [self.store_report(r) for r in reports]
            return self._store_reports(reports)

    def _store_reports(self, reports):
        now = self._clock()
        with self._session() as session:
            hosts = self._hosts(session, {r.host for r in reports}, now)
            known = self._known_reports(session, hosts, reports)
            fresh = []
            for r in reports:
                key = (hosts[r.host].id, r.boot_id, r.seq)
                fresh.append(key not in known)
                known.add(key)
            stored = [r for r, new in zip(reports, fresh) if new]
            if not stored:
                return fresh
            # Core statements, not ORM objects, for the rows of a report:
            # per-row ORM bookkeeping was most of a report's cost. The
            # first write is these rows, so two controllers storing the
            # same report collide here (IntegrityError) before writing
            # more.
            session.execute(sa.insert(models.HostSample), [dict(
                host_id=hosts[r.host].id, boot_id=r.boot_id, seq=r.seq,
                timestamp=r.timestamp, memory_free_kb=r.memory_free_kb,
                cpu_util=r.cpu_util, reservoir_kb=r.reservoir_kb)
                for r in stored])
            for r in stored:
                _apply_report(hosts[r.host], r, now)
            samples = [(hosts[r.host].id, s) for r in stored for s in r.vms]
            if samples:
                # executemany: psycopg pipelines the rows of one prepared
                # statement (cheaper here than one multi-row INSERT).
                ids = _store_vms(session, samples)
                session.execute(sa.insert(models.VMSample), [
                    _sample_row(ids[s.uuid], host_id, s)
                    for host_id, s in samples])
        return fresh

    @staticmethod
    def _hosts(session, names, now):
        """{name: Host} of ``names``, created where missing."""
        hosts = {h.name: h for h in session.scalars(
            sa.select(models.Host).where(models.Host.name.in_(
                sorted(names))))}
        missing = sorted(set(names) - set(hosts))
        for name in missing:
            hosts[name] = models.Host(name=name, created_at=now,
                                      updated_at=now, reservoir_kb=0)
            session.add(hosts[name])
        if missing:
            session.flush()
        return hosts

    @staticmethod
    def _known_reports(session, hosts, reports):
        """The (host_id, boot_id, seq) of ``reports`` already stored."""
        hs = models.HostSample
        wanted = {(hosts[r.host].id, r.boot_id, r.seq) for r in reports}
        rows = session.execute(
            sa.select(hs.host_id, hs.boot_id, hs.seq).where(
                hs.host_id.in_(sorted({k[0] for k in wanted})),
                hs.seq.in_(sorted({k[2] for k in wanted}))))
        return {tuple(row) for row in rows} & wanted

    def store_reservoir(self, inform):
        """Apply a GMC_inform unless a newer figure is already stored."""
        now = self._clock()
        with self._session() as session:
            host = self._hosts(session, {inform.host}, now)[inform.host]
            if host.reservoir_at is None or \
                    inform.timestamp >= host.reservoir_at:
                host.reservoir_kb = inform.reservoir_kb
                host.reservoir_at = inform.timestamp
                host.updated_at = now
                return True
        return False

    # -- hosts, VMs and their samples ---------------------------------------

    def list_hosts(self):
        with self._session() as session:
            return list(session.scalars(
                sa.select(models.Host).order_by(models.Host.name)))

    def set_power_state(self, name, state, reason=None, now=None):
        """Record that memmut powered host ``name`` on or off."""
        with self._session() as session:
            host = session.scalar(
                sa.select(models.Host).filter_by(name=name))
            if host is None:
                raise RecordNotFound('no host named %r' % name)
            host.power_state = state
            host.power_reason = reason
            host.power_changed_at = self._clock() if now is None else now

    def get_host(self, name):
        with self._session() as session:
            host = session.scalar(
                sa.select(models.Host).filter_by(name=name))
        if host is None:
            raise RecordNotFound('no host named %r' % name)
        return host

    def list_vms(self, host=None):
        """VMs, each with the host it was last seen on (``vm.host``)."""
        query = sa.select(models.VM).order_by(models.VM.uuid)
        if host is not None:
            query = query.join(models.VM.host).where(models.Host.name == host)
        with self._session() as session:
            return list(session.scalars(query))

    def get_vm(self, uuid):
        with self._session() as session:
            vm = session.scalar(sa.select(models.VM).filter_by(uuid=uuid))
        if vm is None:
            raise RecordNotFound('no VM with UUID %s' % uuid)
        return vm

    def _recent(self, query, model, since, limit):
        """Rows of ``query`` oldest first; with ``limit``, the newest."""
        if since is not None:
            query = query.where(model.timestamp >= since)
        query = query.order_by(model.timestamp.desc(), model.id.desc())
        if limit is not None:
            query = query.limit(limit)
        with self._session() as session:
            rows = list(session.scalars(query))
        rows.reverse()
        return rows

    def vm_samples(self, uuid, since=None, limit=None):
        """Samples of one VM oldest first; with ``limit``, the newest ones."""
        return self._recent(
            sa.select(models.VMSample)
            .join(models.VM, models.VMSample.vm_id == models.VM.id)
            .where(models.VM.uuid == uuid), models.VMSample, since, limit)

    def vm_series(self, since):
        """Every VM's history since ``since`` in two queries, only the
        columns the consolidation rounds need: ``{uuid: [row, ...]}``
        oldest first, each row with ``timestamp``, ``host_id``,
        ``cpu_time_ns``, ``wss_kb``, ``wss_max_avg_kb`` and
        ``shrink_floor_kb`` (loading whole samples, libvirt statistics
        included, VM by VM is what made rounds slow). Intervals already
        rolled up (:meth:`rollup_samples`) come as :class:`RollupRow` (the
        interval's newest sample, with its CPU seconds ``cpu_used_s`` over
        ``cpu_spent_s``), dated by their newest sample."""
        s = models.VMSample
        r = models.VMSampleRollup
        query = (sa.select(models.VM.uuid, s.timestamp, s.host_id,
                           s.cpu_time_ns, s.wss_kb, s.wss_max_avg_kb,
                           s.shrink_floor_kb)
                 .join(models.VM, s.vm_id == models.VM.id)
                 .where(s.timestamp >= since)
                 .order_by(s.vm_id, s.timestamp, s.id))
        rollups = (sa.select(models.VM.uuid, r.last_timestamp,
                             r.last_host_id, r.last_cpu_time_ns,
                             r.wss_max_kb, r.wss_max_avg_kb, r.cpu_used_s,
                             r.cpu_spent_s, r.shrink_floor_kb)
                   .join(models.VM, r.vm_id == models.VM.id)
                   .where(r.last_timestamp >= since)
                   .order_by(r.vm_id, r.last_timestamp, r.id))
        series = {}
        with self._session() as session:
            for row in session.execute(rollups):
                series.setdefault(row.uuid, []).append(RollupRow(*row[1:]))
            mixed = set(series)
            for row in session.execute(query):
                series.setdefault(row.uuid, []).append(row)
        for uuid in mixed:
            # Stable: a rollup and a raw sample at the same time keep
            # rollup first (the raw one is the later poll).
            series[uuid].sort(key=lambda row: row.timestamp)
        return series

    # -- rollups ------------------------------------------------------------

    def rollup_samples(self, before, interval, batch=500):
        """Roll the raw VM samples of every whole interval ending at or
        before ``before`` up into :class:`models.VMSampleRollup` rows
        (intervals ``(k interval, (k+1) interval]``) and delete them; the
        number of raw samples rolled up. VMs are taken ``batch`` at a
        time, each batch in one transaction (no sample is both raw and
        rolled up). The first CPU delta of a VM starts at its newest
        rollup, as it would have at the raw sample it replaced."""
        interval = float(interval)
        bound = math.floor(before / interval) * interval
        s = models.VMSample
        r = models.VMSampleRollup
        with self._session() as session:
            vm_ids = sorted(session.scalars(
                sa.select(s.vm_id).where(s.timestamp <= bound).distinct()))
        done = 0
        for i in range(0, len(vm_ids), batch):
            ids = vm_ids[i:i + batch]
            with self._session() as session:
                newest = (sa.select(r.vm_id, sa.func.max(r.last_timestamp)
                                    .label('t'))
                          .where(r.vm_id.in_(ids)).group_by(r.vm_id)
                          .subquery())
                prev = {row.vm_id: row for row in session.execute(
                    sa.select(r.vm_id, r.last_timestamp.label('timestamp'),
                              r.last_host_id.label('host_id'),
                              r.last_cpu_time_ns.label('cpu_time_ns'))
                    .join(newest, sa.and_(r.vm_id == newest.c.vm_id,
                                          r.last_timestamp == newest.c.t)))}
                rows = list(session.execute(
                    sa.select(s.id, s.vm_id, s.timestamp, s.host_id,
                              s.cpu_time_ns, s.wss_kb, s.wss_max_avg_kb,
                              s.booked_kb, s.shrink_floor_kb)
                    .where(s.vm_id.in_(ids), s.timestamp <= bound)
                    .order_by(s.vm_id, s.timestamp, s.id)))
                out = []
                start = 0
                for j in range(1, len(rows) + 1):
                    if j == len(rows) or rows[j].vm_id != rows[start].vm_id:
                        vm_id = rows[start].vm_id
                        out.extend(rollup(rows[start:j], prev.get(vm_id),
                                          interval, vm_id))
                        start = j
                if out:
                    session.execute(sa.insert(r), out)
                row_ids = [row.id for row in rows]
                for k in range(0, len(row_ids), 1000):
                    session.execute(sa.delete(s).where(
                        s.id.in_(row_ids[k:k + 1000])).execution_options(
                            synchronize_session=False))
                done += len(rows)
        return done

    def purge_rollups(self, before):
        """Delete the rollups of intervals ending before ``before``."""
        with self._session() as session:
            return session.execute(sa.delete(models.VMSampleRollup).where(
                models.VMSampleRollup.bin_end < before)).rowcount

    def count_samples(self):
        """(raw VM samples, rollup rows) stored."""
        with self._session() as session:
            return (session.scalar(sa.select(sa.func.count(
                        models.VMSample.id))),
                    session.scalar(sa.select(sa.func.count(
                        models.VMSampleRollup.id))))

    def host_samples(self, host, since=None, limit=None):
        """Reports of one host oldest first; with ``limit``, the newest."""
        return self._recent(
            sa.select(models.HostSample)
            .join(models.Host, models.HostSample.host_id == models.Host.id)
            .where(models.Host.name == host), models.HostSample, since, limit)

    def count_reports(self, host=None):
        query = sa.select(sa.func.count(models.HostSample.id))
        if host is not None:
            query = query.join(
                models.Host,
                models.HostSample.host_id == models.Host.id).where(
                models.Host.name == host)
        with self._session() as session:
            return session.scalar(query)

    def purge_samples(self, before):
        """Delete host and VM samples older than ``before``; the count."""
        with self._session() as session:
            n = session.execute(sa.delete(models.VMSample).where(
                models.VMSample.timestamp < before)).rowcount
            n += session.execute(sa.delete(models.HostSample).where(
                models.HostSample.timestamp < before)).rowcount
        return n

    # -- remote allocations (global protocol) -------------------------------

    def create_remote_allocation(self, allocation_id, client_host,
                                 server_host, vm_uuid, size_kb,
                                 state='requested', uri=None, reason=None,
                                 psk_identity=None, psk_key=None):
        now = self._clock()
        alloc = models.RemoteAllocation(
            allocation_id=allocation_id, client_host=client_host,
            server_host=server_host, vm_uuid=vm_uuid, size_kb=size_kb,
            state=state, uri=uri, reason=reason, psk_identity=psk_identity,
            psk_key=psk_key, created_at=now, updated_at=now)
        with self._session() as session:
            session.add(alloc)
        return alloc

    def get_remote_allocation(self, allocation_id):
        with self._session() as session:
            alloc = session.scalar(sa.select(models.RemoteAllocation)
                                   .filter_by(allocation_id=allocation_id))
        if alloc is None:
            raise RecordNotFound('no remote allocation %s' % allocation_id)
        return alloc

    def update_remote_allocation(self, allocation_id, state, uri=None,
                                 reason=None):
        """Set a state without the state machine (tools and tests); the
        controller uses :meth:`transition_remote_allocation`."""
        with self._session() as session:
            alloc = session.scalar(sa.select(models.RemoteAllocation)
                                   .filter_by(allocation_id=allocation_id))
            if alloc is None:
                raise RecordNotFound('no remote allocation %s' % allocation_id)
            alloc.state = state
            if uri is not None:
                alloc.uri = uri
            if reason is not None:
                alloc.reason = reason
            alloc.updated_at = self._clock()
        return alloc

    def transition_remote_allocation(self, allocation_id, event,
                                     reason=None, uri=None, expect=None):
        """Apply ``event`` (memmut.globals.allocations) to one allocation.

        The row is locked (SELECT ... FOR UPDATE where the database has
        it) so two controllers cannot both move it; the new state comes
        from the pure transition table, which raises IllegalTransition.
        ``expect``: states the caller saw; any other raises it too (the
        row moved meanwhile). Returns (old state, the row).
        """
        with self._session() as session:
            alloc = session.scalar(
                sa.select(models.RemoteAllocation)
                .filter_by(allocation_id=allocation_id).with_for_update())
            if alloc is None:
                raise RecordNotFound('no remote allocation %s' % allocation_id)
            old = alloc.state
            if expect is not None and old not in expect:
                raise allocations.IllegalTransition(old, event)
            alloc.state = allocations.next_state(old, event)
            if uri is not None:
                alloc.uri = uri
            if reason is not None:
                alloc.reason = reason
            if alloc.state in allocations.CLOSED_STATES:
                # A closed allocation's key opens nothing any more; not
                # keeping it limits what a copy of the database exposes.
                alloc.psk_key = None
            alloc.updated_at = self._clock()
        return old, alloc

    def list_remote_allocations(self, host=None, state=None):
        """Allocations where ``host`` is the client or the server."""
        query = sa.select(models.RemoteAllocation).order_by(
            models.RemoteAllocation.id)
        if host is not None:
            query = query.where(sa.or_(
                models.RemoteAllocation.client_host == host,
                models.RemoteAllocation.server_host == host))
        if isinstance(state, (tuple, list, set, frozenset)):
            query = query.where(models.RemoteAllocation.state.in_(state))
        elif state is not None:
            query = query.where(models.RemoteAllocation.state == state)
        with self._session() as session:
            return list(session.scalars(query))

    # -- consolidation rounds and their migrations --------------------------

    def create_round(self, dry_run=False, parameters=None, started_at=None):
        rnd = models.ConsolidationRound(
            started_at=self._clock() if started_at is None else started_at,
            dry_run=dry_run, status=models.ROUND_RUNNING,
            parameters=parameters)
        with self._session() as session:
            session.add(rnd)
        return rnd

    def finish_round(self, round_id, status, reason=None, summary=None,
                     finished_at=None):
        with self._session() as session:
            rnd = session.get(models.ConsolidationRound, round_id)
            if rnd is None:
                raise RecordNotFound('no consolidation round %s' % round_id)
            rnd.status = status
            rnd.reason = reason
            rnd.summary = summary
            rnd.finished_at = (self._clock() if finished_at is None
                               else finished_at)
        return rnd

    def abandon_running_rounds(self, reason, now=None):
        """Close every round still ``running`` (its controller died) as
        failed with ``reason``: its planned migrations are cancelled, those
        that were running are failed (nova has their outcome). Returns the
        ids closed. Only one controller runs rounds at a time."""
        now = self._clock() if now is None else now
        with self._session() as session:
            rounds = list(session.scalars(sa.select(
                models.ConsolidationRound).where(
                    models.ConsolidationRound.status ==
                    models.ROUND_RUNNING)))
            for rnd in rounds:
                rnd.status, rnd.reason, rnd.finished_at = (
                    'failed', reason, now)
                for m in session.scalars(sa.select(models.Migration).where(
                        models.Migration.round_id == rnd.id)):
                    if m.status == models.MIGRATION_PLANNED:
                        m.status, m.error = 'cancelled', reason
                        m.finished_at = now
                    elif m.status == models.MIGRATION_RUNNING:
                        m.status = 'failed'
                        m.error = ('%s; the live migration may have ended '
                                   'either way: nova has its outcome'
                                   % reason)
                        m.finished_at = now
            return [r.id for r in rounds]

    def get_round(self, round_id):
        with self._session() as session:
            rnd = session.get(models.ConsolidationRound, round_id)
        if rnd is None:
            raise RecordNotFound('no consolidation round %s' % round_id)
        return rnd

    def list_rounds(self, limit=None):
        """Rounds newest first."""
        query = sa.select(models.ConsolidationRound).order_by(
            models.ConsolidationRound.id.desc())
        if limit is not None:
            query = query.limit(limit)
        with self._session() as session:
            return list(session.scalars(query))

    def add_migration(self, round_id, vm_uuid, source_host, dest_host,
                      resource, kind, status=models.MIGRATION_PLANNED):
        if resource not in models.MIGRATION_RESOURCES:
            raise ValueError('resource must be one of %s, not %r'
                             % (models.MIGRATION_RESOURCES, resource))
        if kind not in models.MIGRATION_KINDS:
            raise ValueError('kind must be one of %s, not %r'
                             % (models.MIGRATION_KINDS, kind))
        mig = models.Migration(
            round_id=round_id, vm_uuid=vm_uuid, source_host=source_host,
            dest_host=dest_host, resource=resource, kind=kind,
            status=status, attempts=0)
        with self._session() as session:
            session.add(mig)
        return mig

    _MIGRATION_FIELDS = ('attempts', 'error', 'started_at', 'finished_at',
                         'dest_host')

    def update_migration(self, migration_id, status, **fields):
        """Set a migration's status and any of :attr:`_MIGRATION_FIELDS`."""
        unknown = set(fields) - set(self._MIGRATION_FIELDS)
        if unknown:
            raise ValueError('unknown migration fields: %s'
                             % ', '.join(sorted(unknown)))
        with self._session() as session:
            mig = session.get(models.Migration, migration_id)
            if mig is None:
                raise RecordNotFound('no migration %s' % migration_id)
            mig.status = status
            for key, value in fields.items():
                setattr(mig, key, value)
        return mig

    def list_migrations(self, round_id=None, status=None, vm_uuid=None):
        query = sa.select(models.Migration).order_by(models.Migration.id)
        if round_id is not None:
            query = query.where(models.Migration.round_id == round_id)
        if status is not None:
            query = query.where(models.Migration.status == status)
        if vm_uuid is not None:
            query = query.where(models.Migration.vm_uuid == vm_uuid)
        with self._session() as session:
            return list(session.scalars(query))

    # -- leases (memmut.globals.leader) -------------------------------------

    def acquire_lease(self, name, holder, duration, now=None,
                      replace=None):
        """Take or renew lease ``name`` for ``holder`` until ``now +
        duration``; True if ``holder`` holds it now.

        One conditional UPDATE decides (the row is free, expired, or
        already ``holder``'s): on PostgreSQL a concurrent UPDATE of the
        same row waits for the first one and then re-checks the
        condition, on SQLite writers are serialized, so two controllers
        never both get it. A missing row is inserted; a controller losing
        that INSERT race to another does not hold the lease.

        ``replace``: a holder whose lease may be taken before it expires
        (the caller found its process dead, :mod:`memmut.globals.leader`).
        The row is taken only while it still names exactly that holder, so
        of several controllers replacing it only one succeeds.
        """
        now = self._clock() if now is None else now
        lease = models.Lease
        takeable = [lease.holder == holder, lease.expires_at <= now]
        if replace is not None:
            takeable.append(lease.holder == replace)
        update = (sa.update(lease)
                  .where(lease.name == name, sa.or_(*takeable))
                  .values(acquired_at=sa.case(
                              (lease.holder == holder, lease.acquired_at),
                              else_=now),
                          holder=holder, renewed_at=now,
                          expires_at=now + duration)
                  .execution_options(synchronize_session=False))
        with self._session() as session:
            if session.execute(update).rowcount == 1:
                return True
            if session.get(lease, name) is not None:
                return False
        try:
            with self._session() as session:
                session.add(lease(name=name, holder=holder, acquired_at=now,
                                  renewed_at=now, expires_at=now + duration))
        except DBError as e:
            if isinstance(e.__cause__, sa_exc.IntegrityError):
                return False        # another controller inserted it first
            raise
        return True

    def release_lease(self, name, holder, now=None):
        """Give lease ``name`` up if ``holder`` holds it (it expires now);
        True if it did."""
        now = self._clock() if now is None else now
        lease = models.Lease
        with self._session() as session:
            return session.execute(
                sa.update(lease)
                .where(lease.name == name, lease.holder == holder,
                       lease.expires_at > now)
                .values(expires_at=now, renewed_at=now)
                .execution_options(synchronize_session=False)
            ).rowcount == 1

    def get_lease(self, name):
        """The lease row, or None if nobody ever took it."""
        with self._session() as session:
            return session.get(models.Lease, name)

    # -- read-only statements of the REST API (memmut.api.data) ----------

    def read(self, query):
        """Run one SELECT of whole rows; the detached objects, in order."""
        with self._session() as session:
            return list(session.scalars(query))

    def read_rows(self, query):
        """Run one SELECT of columns; the rows, in order."""
        with self._session() as session:
            return list(session.execute(query))


# A rolled-up interval as the histories read it (see Database.vm_series).
RollupRow = collections.namedtuple('RollupRow', [
    'timestamp', 'host_id', 'cpu_time_ns', 'wss_kb', 'wss_max_avg_kb',
    'cpu_used_s', 'cpu_spent_s', 'shrink_floor_kb'])


def rollup(rows, prev, interval, vm_id):
    """One VM's raw samples (oldest first, with ``timestamp``,
    ``host_id``, ``cpu_time_ns``, ``wss_kb``, ``wss_max_avg_kb``,
    ``booked_kb``, ``shrink_floor_kb``) as rollup rows (dicts of
    VMSampleRollup columns), one per interval ``(bin_end - interval,
    bin_end]``. ``prev``: the sample before the first (its ``timestamp``,
    ``host_id``, ``cpu_time_ns``), or None. A CPU delta counts in the
    interval of its newer sample, and only between samples of the same
    host with time going forward and the counter not going back (as
    :func:`memmut.globals.rounds.cpu_history` reads raw samples)."""
    bins = {}
    for row in rows:
        end = math.ceil(row.timestamp / interval - 1e-9) * interval
        agg = bins.get(end)
        if agg is None:
            agg = bins[end] = dict(
                vm_id=vm_id, bin_end=end, interval_s=interval, samples=0,
                cpu_used_s=0.0, cpu_spent_s=0.0, cpu_peak_cores=None,
                wss_max_kb=None, wss_max_avg_kb=None,
                shrink_floor_kb=None, booked_kb=row.booked_kb,
                last_timestamp=row.timestamp, last_host_id=row.host_id,
                last_cpu_time_ns=row.cpu_time_ns)
        agg['samples'] += 1
        if prev is not None:
            dt = row.timestamp - prev.timestamp
            dcpu = row.cpu_time_ns - prev.cpu_time_ns
            if row.host_id == prev.host_id and dt > 0 and dcpu >= 0:
                agg['cpu_used_s'] += dcpu / 1e9
                agg['cpu_spent_s'] += dt
                cores = dcpu / 1e9 / dt
                if agg['cpu_peak_cores'] is None or \
                        cores > agg['cpu_peak_cores']:
                    agg['cpu_peak_cores'] = cores
        if row.wss_kb is not None and (agg['wss_max_kb'] is None or
                                       row.wss_kb > agg['wss_max_kb']):
            agg['wss_max_kb'] = row.wss_kb
        if row.timestamp >= agg['last_timestamp']:
            agg.update(last_timestamp=row.timestamp,
                       last_host_id=row.host_id,
                       last_cpu_time_ns=row.cpu_time_ns,
                       wss_max_avg_kb=row.wss_max_avg_kb,
                       shrink_floor_kb=row.shrink_floor_kb,
                       booked_kb=row.booked_kb)
        prev = row
    return [bins[k] for k in sorted(bins)]


class _Transaction:
    """A session that commits on success and turns driver errors into
    :class:`DBError` naming the (masked) database."""

    def __init__(self, factory, url):
        self._factory = factory
        self._url = url
        self._session = None

    def __enter__(self):
        self._session = self._factory()
        return self._session

    def __exit__(self, exc_type, exc, tb):
        session, self._session = self._session, None
        try:
            if exc_type is None:
                session.commit()
            else:
                session.rollback()
        except sa_exc.SQLAlchemyError as e:
            session.close()
            raise _wrap(e, self._url) from e
        session.close()
        if isinstance(exc, sa_exc.SQLAlchemyError):
            raise _wrap(exc, self._url) from exc
        return False


def _apply_report(host, report, now):
    """What a stored report sets on its host's row."""
    host.updated_at = now
    if host.last_report_at is None or \
            report.timestamp >= host.last_report_at:
        # A backlog flushed after an outage arrives oldest first: only
        # the newest report describes the host now.
        host.hypervisor = report.hypervisor
        host.memory_total_kb = report.memory_total_kb
        host.cpu_count = report.cpu_count
        host.last_report_at = report.timestamp
        host.boot_id = report.boot_id
        # None (an agent that does not list them) is stored as NULL:
        # reconciliation then does not judge this host.
        host.remote_exports = _ids(report.remote_exports)
        host.remote_attachments = _ids(report.remote_attachments)
    if host.reservoir_at is None or report.timestamp >= host.reservoir_at:
        host.reservoir_kb = report.reservoir_kb
        host.reservoir_at = report.timestamp


def _store_vms(session, samples):
    """Create or update the VM rows of ``samples``, (host id, VMReport)
    pairs, as if they were applied one by one in order (a VM is created
    by its first sample and follows any later one that is not older than
    what it holds); their ids by UUID. One SELECT, then one INSERT of the
    new VMs (and a SELECT of their ids) and one UPDATE per VM that
    follows its sample, all executemany."""
    vm = models.VM.__table__
    rows = _vms_by_uuid(session, {s.uuid for _, s in samples})
    new, changed = {}, {}
    for host_id, s in samples:
        values = new.get(s.uuid)
        if values is None and s.uuid not in rows:
            new[s.uuid] = dict(uuid=s.uuid, name=s.name, host_id=host_id,
                               booked_kb=s.booked_kb,
                               nova_instance=s.nova_instance, state=s.state,
                               first_seen=s.timestamp, last_seen=s.timestamp)
            continue
        if values is None:
            values = changed.get(s.uuid)
        last_seen = (rows[s.uuid].last_seen if values is None
                     else values['last_seen'])
        if s.timestamp < last_seen:
            continue
        update = dict(name=s.name, host_id=host_id, booked_kb=s.booked_kb,
                      nova_instance=s.nova_instance, state=s.state,
                      last_seen=s.timestamp)
        if values is None:
            changed[s.uuid] = update
        else:
            values.update(update)
    ids = {uuid: row.id for uuid, row in rows.items()}
    if new:
        session.execute(sa.insert(vm), list(new.values()))
        ids.update((uuid, row.id) for uuid, row in
                   _vms_by_uuid(session, new).items())
    if changed:
        session.execute(
            sa.update(vm).where(vm.c.id == sa.bindparam('vm_id')).values(
                {k: sa.bindparam(k) for k in _VM_UPDATED}),
            [dict(values, vm_id=ids[uuid])
             for uuid, values in sorted(changed.items())])
    return ids


def _vms_by_uuid(session, uuids, chunk=500):
    """{uuid: row (id, uuid, last_seen)} of the VMs of ``uuids`` that
    exist, ``chunk`` UUIDs per SELECT."""
    vm = models.VM.__table__
    uuids = sorted(uuids)
    rows = {}
    for i in range(0, len(uuids), chunk):
        for row in session.execute(
                sa.select(vm.c.id, vm.c.uuid, vm.c.last_seen)
                .where(vm.c.uuid.in_(uuids[i:i + chunk]))):
            rows[row.uuid] = row
    return rows


# What a VM's newest sample sets on its row (first_seen stays).
_VM_UPDATED = ('name', 'host_id', 'booked_kb', 'nova_instance', 'state',
               'last_seen')


def _sample_row(vm_id, host_id, s):
    """The vm_samples row of one VMReport: every column."""
    return dict(
        vm_id=vm_id, host_id=host_id, timestamp=s.timestamp, state=s.state,
        booked_kb=s.booked_kb, balloon_kb=s.balloon_kb,
        memory_stats=dict(s.memory_stats), cpu_time_ns=s.cpu_time_ns,
        wss_kb=s.wss_kb, wss_estimator=s.wss_estimator,
        wss_max_avg_kb=s.wss_max_avg_kb, max_avg_window=s.max_avg_window,
        max_avg_slice_s=s.max_avg_slice_s, badis_mode=s.badis_mode,
        pinned_kb=s.pinned_kb, pinned_note=s.pinned_note,
        pinned_at=s.pinned_at, shrink_floor_kb=s.shrink_floor_kb,
        shrink_floor_note=s.shrink_floor_note,
        shrink_floor_at=s.shrink_floor_at, mut_role=s.mut_role,
        mem_init_kb=s.mem_init_kb, lent_kb=s.lent_kb,
        borrowed_kb=s.borrowed_kb)


def _ids(values):
    return None if values is None else sorted(set(values))


def _wrap(error, url):
    # The first line of the driver's message is the useful part.
    detail = str(getattr(error, 'orig', None) or error).strip().splitlines()
    return DBError('database %s: %s: %s' % (
        masked(url), type(error).__name__, detail[0] if detail else ''))
