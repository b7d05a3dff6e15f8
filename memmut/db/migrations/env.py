"""Alembic environment of the memmut controller database.

memmut runs migrations through :mod:`memmut.db.migration`, which builds the
alembic ``Config`` in code and hands over an open connection in
``config.attributes['connection']``; no alembic.ini is needed. For
developers, ``alembic`` on the command line also works when
``sqlalchemy.url`` is set in the config it is given, e.g.::

    alembic -x url=sqlite:////tmp/x.sqlite -c /dev/null \\
        revision --autogenerate -m "..."  # with script_location set
"""

from alembic import context
import sqlalchemy as sa

from memmut.db import models

config = context.config
target_metadata = models.Base.metadata


def _configure(connection):
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things: later migrations use batch mode.
        render_as_batch=connection.dialect.name == 'sqlite',
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline():
    url = (context.get_x_argument(as_dictionary=True).get('url') or
           config.get_main_option('sqlalchemy.url'))
    context.configure(url=url, target_metadata=target_metadata,
                      literal_binds=True,
                      dialect_opts={'paramstyle': 'named'})
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online():
    connection = config.attributes.get('connection')
    if connection is not None:
        _configure(connection)
        return
    url = (context.get_x_argument(as_dictionary=True).get('url') or
           config.get_main_option('sqlalchemy.url'))
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as connection:
            _configure(connection)
            connection.commit()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
