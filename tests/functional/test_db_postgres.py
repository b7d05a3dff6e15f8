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
