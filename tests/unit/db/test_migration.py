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
