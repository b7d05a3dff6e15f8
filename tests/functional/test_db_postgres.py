"""The alembic migrations and the Database API on a real PostgreSQL.

The SQLite unit tests of memmut.db run again here, unchanged, on a fresh
PostgreSQL database each: the schema, the constraints and the idempotent
report storage must behave the same on both.
"""

from alembic import autogenerate
from alembic.runtime import migration as alembic_migration
import pytest
import sqlalchemy as sa

from memmut.db import api as db_api
from memmut.db import migration
from memmut.db import models
from tests.unit.conftest import FakeClock
from tests.unit.db import test_api

# Re-collect the API tests here, where ``db`` is a PostgreSQL database.
for _name in dir(test_api):
    if _name.startswith('test_') and _name != 'test_errors_mask_the_password':
        globals()[_name] = getattr(test_api, _name)


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def db(postgres_url, clock):
    migration.upgrade(postgres_url)
    database = db_api.Database(postgres_url, clock=clock)
    yield database
    database.close()


def test_migrations_match_models_on_postgresql(postgres_url):
    migration.upgrade(postgres_url)
    engine = db_api.create_engine(postgres_url)
    try:
        assert engine.dialect.name == 'postgresql'
        with engine.connect() as conn:
            ctx = alembic_migration.MigrationContext.configure(
                conn, opts={'compare_type': True})
            assert autogenerate.compare_metadata(
                ctx, models.Base.metadata) == []
    finally:
        engine.dispose()


def test_downgrade_to_base_and_up_again(postgres_url):
    migration.upgrade(postgres_url)
    assert migration.current(postgres_url) == migration.head()
    migration.downgrade(postgres_url, 'base')
    engine = db_api.create_engine(postgres_url)
    try:
        assert sa.inspect(engine).get_table_names() == ['alembic_version']
    finally:
        engine.dispose()
    migration.upgrade(postgres_url)
    assert migration.current(postgres_url) == migration.head()


def test_wrong_password_is_one_clear_error(postgres_url):
    bad = postgres_url.replace(':memmut-functional@', ':wrong@')
    with pytest.raises(db_api.DBError) as e:
        migration.upgrade(bad)
    assert 'wrong' not in str(e.value) and '***' in str(e.value)


def test_group_commit_stores_every_report_once_on_postgresql(db):
    """32 RPC-like threads store 4 polls of 32 hosts through the report
    writer while its first batch is held: later reports share
    transactions, each is stored once, a resend of all stores nothing."""
    import threading

    from memmut.globals import report_writer

    held = threading.Event()
    entered = threading.Event()
    sizes = []

    def many(reports):
        entered.set()
        held.wait(30)
        sizes.append(len(reports))
        return db.store_reports(reports)

    writer = report_writer.ReportWriter(many, db.store_report, 64)
    reports = [test_api._report(
        poll, 10.0 * poll + h, host='h%02d' % h,
        vms=[test_api._vm('vm-%02d-%d' % (h, j), 10.0 * poll + h)
             for j in range(3)])
        for poll in range(1, 5) for h in range(32)]
    results = []

    def agent(mine):
        for r in mine:
            results.append(writer.store(r))
    writer.start()
    try:
        threads = [threading.Thread(target=agent, args=(reports[h::32],))
                   for h in range(32)]
        threads[0].start()
        assert entered.wait(30)
        for t in threads[1:]:
            t.start()
        for _ in range(3000):
            if len(writer._queue) == 31:
                break
            threading.Event().wait(0.01)
        held.set()
        for t in threads:
            t.join(60)
        again = [writer.store(r) for r in reports[:40]]
    finally:
        writer.stop()
    assert results == [True] * len(reports) and not any(again)
    # (thread 0 may queue its next report before the writer takes them)
    assert 31 <= sizes[1] <= 32 and sum(sizes) == len(reports) + 40
    assert db.count_reports() == len(reports)
    assert len(db.vm_samples('vm-07-2')) == 4
    assert db.get_vm('vm-31-0').last_seen == 10.0 * 4 + 31


def test_two_writers_store_concurrent_batches_of_shared_rows(db):
    """Two report writers, and two agents' calls out at once for each of
    16 hosts (a backlog flushed beside the current poll): batches that
    update the same host and VM rows run concurrently on PostgreSQL;
    every report is stored once, none refused, none lost."""
    import threading

    from memmut.globals import report_writer

    writer = report_writer.ReportWriter(db.store_reports, db.store_report,
                                        64, writers=2)
    reports = [test_api._report(
        poll, 10.0 * poll + h, host='h%02d' % h,
        vms=[test_api._vm('vm-%02d-%d' % (h, j), 10.0 * poll + h)
             for j in range(5)])
        for poll in range(1, 9) for h in range(16)]
    results, errors = [], []

    def agent(mine):
        for r in mine:
            try:
                results.append(writer.store(r))
            except Exception as e:          # a failed call: the test fails
                errors.append(e)
    writer.start()
    try:
        # thread k sends host k % 16's odd or even polls
        threads = [threading.Thread(target=agent, args=(
            [r for r in reports if r.host == 'h%02d' % (k % 16) and
             r.seq % 2 == k // 16],)) for k in range(32)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        writer.stop()
    assert errors == []
    assert results == [True] * len(reports)
    assert db.count_reports() == len(reports)
    assert len(db.vm_samples('vm-03-4')) == 8
    assert len(db.list_vms()) == 16 * 5
