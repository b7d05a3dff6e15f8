"""The alembic migrations and the models describe the same schema."""

from alembic import autogenerate
from alembic.runtime import migration as alembic_migration
import sqlalchemy as sa

from memmut.db import api as db_api
from memmut.db import migration
from memmut.db import models


def test_migrations_match_models(tmp_path):
    url = 'sqlite:///%s' % (tmp_path / 'm.sqlite')
    migration.upgrade(url)
    engine = db_api.create_engine(url)
    with engine.connect() as conn:
        ctx = alembic_migration.MigrationContext.configure(
            conn, opts={'compare_type': True})
        diff = autogenerate.compare_metadata(ctx, models.Base.metadata)
    engine.dispose()
    assert diff == []


def test_upgrade_downgrade_round_trip(tmp_path):
    url = 'sqlite:///%s' % (tmp_path / 'm.sqlite')
    assert migration.current(url) is None
    migration.upgrade(url)
    assert migration.current(url) == migration.head()
    migration.downgrade(url, 'base')
    assert migration.current(url) is None
    engine = db_api.create_engine(url)
    assert sa.inspect(engine).get_table_names() == ['alembic_version']
    engine.dispose()
    migration.upgrade(url)          # and back up again
    assert migration.current(url) == migration.head()


def test_history_lists_every_revision_once():
    revs = [r for r, _, _ in migration.history()]
    assert revs[-1] == migration.head() and len(revs) == len(set(revs))


def test_0003_closes_reclaimed_and_unknown_states(tmp_path):
    url = 'sqlite:///%s' % (tmp_path / 'm.sqlite')
    migration.upgrade(url, '0002')
    engine = db_api.create_engine(url)
    with engine.begin() as conn:
        for aid, state in (('a', 'active'), ('r', 'reclaimed'),
                           ('q', 'requested'), ('w', 'weird')):
            conn.execute(sa.text(
                "INSERT INTO remote_allocations (allocation_id, "
                "client_host, server_host, vm_uuid, size_kb, state, "
                "created_at, updated_at) VALUES (:a, 'c', 's', 'v', 1, :s, "
                "0, 0)"), {'a': aid, 's': state})
    engine.dispose()
    migration.upgrade(url)
    engine = db_api.create_engine(url)
    with engine.connect() as conn:
        states = dict(conn.execute(sa.text(
            'SELECT allocation_id, state FROM remote_allocations')).all())
    engine.dispose()
    assert states == {'a': 'active', 'r': 'released', 'q': 'requested',
                      'w': 'failed'}
    migration.downgrade(url, '0002')


def _old_sample_upgraded(tmp_path, revision, columns, extra=None):
    """A database at ``revision`` with one VM sample (``extra``: more of
    its columns, name -> SQL literal), upgraded to the head: the sample's
    ``columns`` there, and the database's URL."""
    url = 'sqlite:///%s' % (tmp_path / 'm.sqlite')
    migration.upgrade(url, revision)
    extra = extra or {}
    engine = db_api.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text(
            "INSERT INTO hosts (name, reservoir_kb, created_at, updated_at) "
            "VALUES ('h', 0, 0, 0)"))
        conn.execute(sa.text(
            "INSERT INTO vms (uuid, name, host_id, booked_kb, "
            "nova_instance, state, first_seen, last_seen) VALUES "
            "('u', 'n', 1, 1, 0, 'running', 0, 0)"))
        conn.execute(sa.text(
            "INSERT INTO vm_samples (vm_id, host_id, timestamp, state, "
            "booked_kb, balloon_kb, memory_stats, cpu_time_ns, lent_kb, "
            "borrowed_kb%s) VALUES (1, 1, 0, 'running', 1, 1, '{}', 0, 0, "
            "0%s)" % (''.join(', ' + k for k in extra),
                      ''.join(', ' + v for v in extra.values()))))
    engine.dispose()
    migration.upgrade(url)
    engine = db_api.create_engine(url)
    with engine.connect() as conn:
        row = conn.execute(sa.text(
            'SELECT %s FROM vm_samples' % ', '.join(columns))).one()
    engine.dispose()
    return tuple(row), url


def _sample_columns(url):
    engine = db_api.create_engine(url)
    cols = {c['name'] for c in sa.inspect(engine).get_columns('vm_samples')}
    engine.dispose()
    return cols


def test_0007_keeps_old_samples_with_null_pinned_fields(tmp_path):
    row, url = _old_sample_upgraded(
        tmp_path, '0006', ('pinned_kb', 'pinned_note', 'pinned_at'))
    assert row == (None, None, None)
    migration.downgrade(url, '0006')
    cols = _sample_columns(url)
    assert 'pinned_kb' not in cols and 'balloon_kb' in cols


def test_0008_keeps_old_samples_with_null_shrink_floor_fields(tmp_path):
    row, url = _old_sample_upgraded(
        tmp_path, '0007', ('pinned_kb', 'shrink_floor_kb',
                           'shrink_floor_note', 'shrink_floor_at'),
        extra={'pinned_kb': '7'})
    assert row == (7, None, None, None)
    migration.downgrade(url, '0007')
    cols = _sample_columns(url)
    assert 'shrink_floor_kb' not in cols and 'pinned_kb' in cols


def test_0009_keeps_old_rollups_with_no_shrink_floor(tmp_path):
    _, url = _old_sample_upgraded(tmp_path, '0008', ('vm_id',))
    migration.downgrade(url, '0008')
    engine = db_api.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text(
            "INSERT INTO vm_sample_rollups (vm_id, bin_end, interval_s, "
            "samples, cpu_used_s, cpu_spent_s, wss_max_avg_kb, booked_kb, "
            "last_timestamp, last_host_id, last_cpu_time_ns) VALUES "
            "(1, 300, 300, 5, 1.5, 300, 2048, 4096, 290, 1, 7)"))
    engine.dispose()
    migration.upgrade(url)
    engine = db_api.create_engine(url)
    with engine.connect() as conn:
        row = conn.execute(sa.text(
            'SELECT wss_max_avg_kb, shrink_floor_kb FROM '
            'vm_sample_rollups')).one()
    engine.dispose()
    assert tuple(row) == (2048, None)
    migration.downgrade(url, '0008')
    engine = db_api.create_engine(url)
    cols = {c['name'] for c in
            sa.inspect(engine).get_columns('vm_sample_rollups')}
    engine.dispose()
    assert 'shrink_floor_kb' not in cols and 'wss_max_avg_kb' in cols
