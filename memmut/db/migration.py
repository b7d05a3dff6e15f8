"""Schema migrations: alembic, driven from code (no alembic.ini needed).

The migration scripts live in ``memmut/db/migrations/versions`` and are
installed with the package; ``memmut-db-manage`` and the services call the
functions below.
"""

import os

from alembic import command
from alembic import config as alembic_config
from alembic import script as alembic_script
from alembic.runtime import migration as alembic_migration
from sqlalchemy import exc as sa_exc

from memmut.db import api

MIGRATIONS = os.path.join(os.path.dirname(__file__), 'migrations')


def _config(connection=None):
    cfg = alembic_config.Config()
    cfg.set_main_option('script_location', MIGRATIONS)
    if connection is not None:
        cfg.attributes['connection'] = connection
    return cfg


def head():
    """The revision this code needs."""
    return alembic_script.ScriptDirectory.from_config(
        _config()).get_current_head()


def _run(url, action):
    engine = api.create_engine(url)
    try:
        with engine.begin() as connection:
            return action(connection)
    except sa_exc.SQLAlchemyError as e:
        raise api._wrap(e, url) from e
    finally:
        engine.dispose()


def current(url):
    """The revision the database is at (None for an empty database)."""
    return _run(url, lambda c: alembic_migration.MigrationContext.configure(
        c).get_current_revision())


def upgrade(url, revision='head'):
    _run(url, lambda c: command.upgrade(_config(c), revision))


def downgrade(url, revision):
    _run(url, lambda c: command.downgrade(_config(c), revision))


def history():
    """(revision, down_revision, message) from oldest to newest."""
    scripts = alembic_script.ScriptDirectory.from_config(_config())
    revs = list(scripts.walk_revisions())
    revs.reverse()
    return [(r.revision, r.down_revision, r.doc) for r in revs]
