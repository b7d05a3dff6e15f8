"""Hosts remember that memmut powered them off, so that a later round can
switch them on again (issue 19).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24
"""

from alembic import op
import sqlalchemy as sa

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('hosts') as batch:
        batch.add_column(sa.Column('power_state', sa.String(16),
                                   nullable=True))
        batch.add_column(sa.Column('power_changed_at', sa.Double(),
                                   nullable=True))
        batch.add_column(sa.Column('power_reason', sa.Text(),
                                   nullable=True))


def downgrade():
    with op.batch_alter_table('hosts') as batch:
        batch.drop_column('power_reason')
        batch.drop_column('power_changed_at')
        batch.drop_column('power_state')
