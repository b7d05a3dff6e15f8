"""SQLAlchemy models of the controller database.

Conventions, chosen to behave the same on SQLite, PostgreSQL and MySQL:

- Every point in time is a float of seconds since the epoch (UTC), stored
  as ``Double`` (8-byte: MySQL's ``FLOAT`` would be 4 bytes and round an
  epoch to ~2 minutes). This is the unit of the RPC messages
  (:mod:`memmut.objects`), so nothing is converted on the way in or out.
- Sizes are KiB (libvirt's unit) in ``BigInteger``; CPU time is ns in
  ``BigInteger``.
- Hosts and VMs are referenced by foreign key where the controller owns the
  row (samples); protocol and consolidation records name hosts and VMs by
  their names/UUIDs instead, so that they stay readable after a VM is gone
  and never depend on the order in which agents first reported.
- Constraints and indexes are named by :data:`NAMING_CONVENTION`, so that
  later migrations can address them on every backend.

The schema itself is created by the alembic migrations in
``memmut/db/migrations``; ``tests/unit/db`` checks that both agree.
"""

import typing

import sqlalchemy as sa
from sqlalchemy import orm

NAMING_CONVENTION = {
    'ix': 'ix_%(table_name)s_%(column_0_N_name)s',
    'uq': 'uq_%(table_name)s_%(column_0_N_name)s',
    'ck': 'ck_%(table_name)s_%(constraint_name)s',
    'fk': 'fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s',
    'pk': 'pk_%(table_name)s',
}

# Sample tables grow without bound between purges: 64-bit ids, except on
# SQLite where only INTEGER PRIMARY KEY auto-increments (and is 64-bit).
BigID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')

# Python None is SQL NULL, not the JSON text 'null'.
JSONOrNull = sa.JSON(none_as_null=True)

# What triggered a migration: one resource, or both at once (the planner's
# 'cpu+memory', memmut.consolidation.planner.BOTH).
MIGRATION_RESOURCES = ('cpu', 'memory', 'cpu+memory')
MIGRATION_KINDS = ('underload', 'overload')

# Consolidation round and migration life cycles (free strings in the
# database; these are the values memmut itself writes).
ROUND_RUNNING = 'running'
POWER_OFF = 'off'
POWER_ON = 'on'
MIGRATION_PLANNED = 'planned'
MIGRATION_RUNNING = 'running'
MIGRATION_FINISHED_STATES = ('completed', 'failed', 'skipped', 'cancelled')

# Remote allocation life cycle (memmut.globals.allocations, which owns the
# transitions; repeated here so the schema does not import the controller).
ALLOCATION_STATES = ('requested', 'granted', 'active', 'releasing',
                     'reclaiming', 'released', 'refused', 'failed')


class Base(orm.DeclarativeBase):
    metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {
        float: sa.Double(),
        int: sa.BigInteger(),
        dict: sa.JSON(),
    }

    def __repr__(self):
        cols = ', '.join('%s=%r' % (c.key, getattr(self, c.key, None))
                         for c in self.__table__.columns)
        return '<%s %s>' % (type(self).__name__, cols)


class Host(Base):
    """A compute node, as its agent last described it."""
    __tablename__ = 'hosts'

    id: orm.Mapped[int] = orm.mapped_column(sa.Integer, primary_key=True)
    name: orm.Mapped[str] = orm.mapped_column(sa.String(255), unique=True)
    # Unknown until the first report (a GMC_inform may come first).
    hypervisor: orm.Mapped[typing.Optional[str]] = orm.mapped_column(
        sa.String(64))
    memory_total_kb: orm.Mapped[typing.Optional[int]]
    cpu_count: orm.Mapped[typing.Optional[int]] = orm.mapped_column(
        sa.Integer)
    # Timestamp (agent clock) of the newest report stored for this host.
    last_report_at: orm.Mapped[typing.Optional[float]]
    # Agent run (boot_id of HostReport) of that newest report.
    boot_id: orm.Mapped[typing.Optional[str]] = orm.mapped_column(
        sa.String(64))
    reservoir_kb: orm.Mapped[int] = orm.mapped_column(default=0)
    # Timestamp of the report or GMC_inform that set reservoir_kb: an older
    # message arriving late never overwrites a newer figure.
    reservoir_at: orm.Mapped[typing.Optional[float]]
    # The remote allocations the newest report lists: slabs this host
    # lends (exports) and remote devices its VMs use (attachments); NULL
    # when its agent does not list them (before RPC 1.3). Reconciliation
    # (memmut.globals.allocations.reconcile) reads them (migration 0003).
    remote_exports: orm.Mapped[typing.Optional[typing.Any]] = \
        orm.mapped_column(JSONOrNull)
    remote_attachments: orm.Mapped[typing.Optional[typing.Any]] = \
        orm.mapped_column(JSONOrNull)
    created_at: orm.Mapped[float]
    # Controller clock: when the controller last heard from the host (a
    # stored report or GMC_inform). Liveness is judged on this, never on
    # the agent's timestamps.
    updated_at: orm.Mapped[float]
    # 'off' once a round powered the host off, 'on' once one powered it
    # back on; NULL for a host memmut never switched (migration 0004).
    power_state: orm.Mapped[typing.Optional[str]] = orm.mapped_column(
        sa.String(16))
    power_changed_at: orm.Mapped[typing.Optional[float]]
    power_reason: orm.Mapped[typing.Optional[str]] = orm.mapped_column(
        sa.Text)


class VM(Base):
    """A VM seen in reports; ``host`` is where it was seen last."""
    __tablename__ = 'vms'

    id: orm.Mapped[int] = orm.mapped_column(sa.Integer, primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36), unique=True)
    name: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    host_id: orm.Mapped[int] = orm.mapped_column(
        sa.Integer, sa.ForeignKey('hosts.id'), index=True)
    booked_kb: orm.Mapped[int]
    nova_instance: orm.Mapped[bool] = orm.mapped_column(default=False)
    state: orm.Mapped[str] = orm.mapped_column(sa.String(32))
    first_seen: orm.Mapped[float]
    last_seen: orm.Mapped[float]

    # Always loaded with the VM, so that a detached row still knows its
    # host's name (``vm.host.name``).
    host: orm.Mapped[Host] = orm.relationship(lazy='joined',
                                              innerjoin=True)


class VMSample(Base):
    """One VM at one agent poll (objects.VMSample)."""
    __tablename__ = 'vm_samples'
    __table_args__ = (
        sa.Index(None, 'vm_id', 'timestamp'),
        sa.Index(None, 'timestamp'),
    )

    id: orm.Mapped[int] = orm.mapped_column(BigID, primary_key=True)
    vm_id: orm.Mapped[int] = orm.mapped_column(
        sa.Integer, sa.ForeignKey('vms.id'))
    # The host that reported the sample (a VM changes host when it
    # migrates; its samples keep where they were taken).
    host_id: orm.Mapped[int] = orm.mapped_column(
        sa.Integer, sa.ForeignKey('hosts.id'), index=True)
    timestamp: orm.Mapped[float]
    state: orm.Mapped[str] = orm.mapped_column(sa.String(32))
    booked_kb: orm.Mapped[int]
    balloon_kb: orm.Mapped[int]
    # libvirt memoryStats() exactly as the agent read it.
    memory_stats: orm.Mapped[dict] = orm.mapped_column(default=dict)
    cpu_time_ns: orm.Mapped[int] = orm.mapped_column(default=0)
    wss_kb: orm.Mapped[typing.Optional[int]]
    # Which estimator produced wss_kb (e.g. "badis", "balloon_stats").
    wss_estimator: orm.Mapped[typing.Optional[str]] = orm.mapped_column(
        sa.String(64))
    # WSS^max_avg as the agent reported it, with its inputs (migration
    # 0002; NULL in rows of agents before RPC 1.1).
    wss_max_avg_kb: orm.Mapped[typing.Optional[int]]
    max_avg_window: orm.Mapped[typing.Optional[int]] = orm.mapped_column(
        sa.Integer)
    max_avg_slice_s: orm.Mapped[typing.Optional[float]]
    badis_mode: orm.Mapped[typing.Optional[str]] = orm.mapped_column(
        sa.String(8))
    # Badis's pinned-page correction, why and when it last changed
    # (migration 0007; NULL from other estimators and older agents).
    pinned_kb: orm.Mapped[typing.Optional[int]]
    pinned_note: orm.Mapped[typing.Optional[str]] = orm.mapped_column(
        sa.Text)
    pinned_at: orm.Mapped[typing.Optional[float]]
    # Badis's shrink floor (0: none), why and when it last changed
    # (migration 0008; NULL from other estimators and older agents).
    shrink_floor_kb: orm.Mapped[typing.Optional[int]]
    shrink_floor_note: orm.Mapped[typing.Optional[str]] = (
        orm.mapped_column(sa.Text))
    shrink_floor_at: orm.Mapped[typing.Optional[float]]
    # Local mutualization (seed 004 ch.3); NULL/0 when it is off.
    mut_role: orm.Mapped[typing.Optional[str]] = orm.mapped_column(
        sa.String(16))
    mem_init_kb: orm.Mapped[typing.Optional[int]]
    lent_kb: orm.Mapped[int] = orm.mapped_column(default=0)
    borrowed_kb: orm.Mapped[int] = orm.mapped_column(default=0)


class VMSampleRollup(Base):
    """One VM's raw samples of one interval, rolled up (migration 0006).

    Raw samples older than ``[controller] raw_sample_retention`` become
    one row per VM and interval ``(bin_end - interval_s, bin_end]``
    (``bin_end`` a multiple of ``interval_s``, the ``[consolidation]
    interval`` when it was written), with what the planner's histories
    read (:func:`memmut.globals.rounds.cpu_history`, ``memory_history``):
    the CPU seconds used and the seconds they were measured over (the
    deltas between consecutive samples of the same host whose newer
    sample falls in the interval), the newest sample's WSS^max_avg, time,
    host and CPU counter (the next interval's first delta starts there).
    A late sample of an interval already rolled up adds a second row for
    it: readers take the rows of an interval together.
    """
    __tablename__ = 'vm_sample_rollups'
    __table_args__ = (
        sa.Index(None, 'vm_id', 'bin_end'),
        sa.Index(None, 'bin_end'),
    )

    id: orm.Mapped[int] = orm.mapped_column(BigID, primary_key=True)
    vm_id: orm.Mapped[int] = orm.mapped_column(
        sa.Integer, sa.ForeignKey('vms.id'))
    bin_end: orm.Mapped[float]
    interval_s: orm.Mapped[float]
    samples: orm.Mapped[int] = orm.mapped_column(sa.Integer)
    # CPU: seconds of CPU time used over cpu_spent_s seconds (mean use
    # in cores = used / spent), and the highest use between two samples.
    cpu_used_s: orm.Mapped[float]
    cpu_spent_s: orm.Mapped[float]
    cpu_peak_cores: orm.Mapped[typing.Optional[float]]
    # Memory: the largest estimate of the interval, and WSS^max_avg as
    # the agent reported it in the newest sample (NULL: not reported).
    wss_max_kb: orm.Mapped[typing.Optional[int]]
    wss_max_avg_kb: orm.Mapped[typing.Optional[int]]
    # and the shrink floor it reported (migration 0009; NULL: none)
    shrink_floor_kb: orm.Mapped[typing.Optional[int]] = orm.mapped_column(
        sa.BigInteger)
    booked_kb: orm.Mapped[int]
    # The newest sample of the interval.
    last_timestamp: orm.Mapped[float]
    last_host_id: orm.Mapped[int] = orm.mapped_column(
        sa.Integer, sa.ForeignKey('hosts.id'))
    last_cpu_time_ns: orm.Mapped[int]


class HostSample(Base):
    """One report of one host (objects.HostReport without its VMs).

    (host_id, boot_id, seq) is unique: that is how a resent report is
    recognized and stored only once.
    """
    __tablename__ = 'host_samples'
    __table_args__ = (
        sa.UniqueConstraint('host_id', 'boot_id', 'seq'),
        sa.Index(None, 'host_id', 'timestamp'),
        sa.Index(None, 'timestamp'),
    )

    id: orm.Mapped[int] = orm.mapped_column(BigID, primary_key=True)
    host_id: orm.Mapped[int] = orm.mapped_column(
        sa.Integer, sa.ForeignKey('hosts.id'))
    boot_id: orm.Mapped[str] = orm.mapped_column(sa.String(64))
    seq: orm.Mapped[int]
    timestamp: orm.Mapped[float]
    memory_free_kb: orm.Mapped[int]
    cpu_util: orm.Mapped[float]
    reservoir_kb: orm.Mapped[int] = orm.mapped_column(default=0)


class RemoteAllocation(Base):
    """Remote memory lent by ``server_host`` to a VM of ``client_host``
    (seed 004 §4.3.1: GMC_alloc ... GMC_release / GMC_reclaim)."""
    __tablename__ = 'remote_allocations'
    __table_args__ = (
        sa.CheckConstraint(
            'state IN (%s)' % ', '.join("'%s'" % s for s in
                                        ALLOCATION_STATES),
            name='state'),
    )

    id: orm.Mapped[int] = orm.mapped_column(sa.Integer, primary_key=True)
    allocation_id: orm.Mapped[str] = orm.mapped_column(sa.String(64),
                                                       unique=True)
    client_host: orm.Mapped[str] = orm.mapped_column(sa.String(255),
                                                     index=True)
    server_host: orm.Mapped[str] = orm.mapped_column(sa.String(255),
                                                     index=True)
    vm_uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36))
    size_kb: orm.Mapped[int]
    # memmut.globals.allocations: requested, granted, active, releasing,
    # reclaiming, released, refused, failed (migration 0003).
    state: orm.Mapped[str] = orm.mapped_column(sa.String(32), index=True)
    uri: orm.Mapped[typing.Optional[str]] = orm.mapped_column(sa.Text)
    reason: orm.Mapped[typing.Optional[str]] = orm.mapped_column(sa.Text)
    # TLS-PSK credentials of the slab (doc/source/remote-memory.rst): the
    # identity is not secret; the key is, and is kept only while the
    # allocation is open (set to NULL when it closes).
    psk_identity: orm.Mapped[typing.Optional[str]] = orm.mapped_column(
        sa.String(128))
    psk_key: orm.Mapped[typing.Optional[str]] = orm.mapped_column(
        sa.String(64))
    created_at: orm.Mapped[float]
    # Controller clock of the last state change.
    updated_at: orm.Mapped[float]


class ConsolidationRound(Base):
    """One run of the consolidation planner (and of its migrations)."""
    __tablename__ = 'consolidation_rounds'

    id: orm.Mapped[int] = orm.mapped_column(sa.Integer, primary_key=True)
    started_at: orm.Mapped[float] = orm.mapped_column(index=True)
    finished_at: orm.Mapped[typing.Optional[float]]
    dry_run: orm.Mapped[bool] = orm.mapped_column(default=False)
    # running, then whatever finish_round() was given (completed, failed...).
    status: orm.Mapped[str] = orm.mapped_column(sa.String(32))
    # Why the round ended as it did (one line), and its figures (JSON).
    reason: orm.Mapped[typing.Optional[str]] = orm.mapped_column(sa.Text)
    summary: orm.Mapped[typing.Optional[typing.Any]] = orm.mapped_column(
        JSONOrNull)
    # The algorithms and their parameters the round ran with.
    parameters: orm.Mapped[typing.Optional[typing.Any]] = orm.mapped_column(
        JSONOrNull)


class Migration(Base):
    """One live migration planned by a consolidation round."""
    __tablename__ = 'migrations'
    __table_args__ = (
        sa.CheckConstraint("resource IN ('cpu', 'memory', 'cpu+memory')",
                           name='resource'),
        sa.CheckConstraint("kind IN ('underload', 'overload')",
                           name='kind'),
    )

    id: orm.Mapped[int] = orm.mapped_column(sa.Integer, primary_key=True)
    round_id: orm.Mapped[int] = orm.mapped_column(
        sa.Integer, sa.ForeignKey('consolidation_rounds.id'), index=True)
    vm_uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36), index=True)
    source_host: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    dest_host: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    # The resource whose overload/underload caused the migration: cpu,
    # memory, or cpu+memory when both detectors fired.
    resource: orm.Mapped[str] = orm.mapped_column(sa.String(16))
    kind: orm.Mapped[str] = orm.mapped_column(sa.String(16))
    # planned, running, completed, failed, skipped, cancelled.
    status: orm.Mapped[str] = orm.mapped_column(sa.String(32))
    attempts: orm.Mapped[int] = orm.mapped_column(sa.Integer, default=0)
    error: orm.Mapped[typing.Optional[str]] = orm.mapped_column(sa.Text)
    started_at: orm.Mapped[typing.Optional[float]]
    finished_at: orm.Mapped[typing.Optional[float]]


class Lease(Base):
    """A named lease one controller holds until ``expires_at`` (its own
    clock): ``consolidation`` is the right to run consolidation rounds
    (:mod:`memmut.globals.leader`, migration 0005)."""
    __tablename__ = 'leases'

    name: orm.Mapped[str] = orm.mapped_column(sa.String(64),
                                              primary_key=True)
    # Who holds it: host name, process id and a per-start token.
    holder: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    # When the holder took it over, last renewed it, and until when it
    # holds it without renewing.
    acquired_at: orm.Mapped[float]
    renewed_at: orm.Mapped[float]
    expires_at: orm.Mapped[float]
