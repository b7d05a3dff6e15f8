"""Remote allocations get their state machine and TLS-PSK credentials;
hosts say which allocations their newest report lists.

Existing rows: ``reclaimed`` (the only state of the old code that the
new machine does not have) becomes ``released``; ``active`` and
``requested`` keep their names and are reconciled by the controller at its
next start like any other open allocation.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24
"""

from alembic import op
import sqlalchemy as sa

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None

STATES = ('requested', 'granted', 'active', 'releasing', 'reclaiming',
          'released', 'refused', 'failed')


def upgrade():
    op.execute("UPDATE remote_allocations SET state = 'released' "
               "WHERE state = 'reclaimed'")
    # Anything else written by hand or by a foreign tool: closed, so the
    # constraint below holds and nothing unknown is counted as lent.
    op.execute("UPDATE remote_allocations SET state = 'failed' WHERE "
               "state NOT IN (%s)" % ', '.join("'%s'" % s for s in STATES))
    with op.batch_alter_table('remote_allocations') as batch:
        batch.add_column(sa.Column('psk_identity', sa.String(128),
                                   nullable=True))
        batch.add_column(sa.Column('psk_key', sa.String(64), nullable=True))
        batch.create_check_constraint(
            'state', 'state IN (%s)' % ', '.join("'%s'" % s for s in STATES))
    with op.batch_alter_table('hosts') as batch:
        batch.add_column(sa.Column('remote_exports', sa.JSON(),
                                   nullable=True))
        batch.add_column(sa.Column('remote_attachments', sa.JSON(),
                                   nullable=True))


def downgrade():
    with op.batch_alter_table('hosts') as batch:
        batch.drop_column('remote_attachments')
        batch.drop_column('remote_exports')
    with op.batch_alter_table('remote_allocations') as batch:
        batch.drop_constraint(op.f('ck_remote_allocations_state'),
                              type_='check')
        batch.drop_column('psk_key')
        batch.drop_column('psk_identity')
