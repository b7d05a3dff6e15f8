"""VM samples carry the agent's WSS^max_avg, its inputs and the Badis mode.

Rows written before this revision keep NULL in the new columns and stay
readable: the controller counts such a sample at the VM's booked memory.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-24
"""

from alembic import op
import sqlalchemy as sa

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('vm_samples') as batch:
        batch.add_column(sa.Column('wss_max_avg_kb', sa.BigInteger(),
                                   nullable=True))
        batch.add_column(sa.Column('max_avg_window', sa.Integer(),
                                   nullable=True))
        batch.add_column(sa.Column('max_avg_slice_s', sa.Double(),
                                   nullable=True))
        batch.add_column(sa.Column('badis_mode', sa.String(8),
                                   nullable=True))


def downgrade():
    with op.batch_alter_table('vm_samples') as batch:
        batch.drop_column('badis_mode')
        batch.drop_column('max_avg_slice_s')
        batch.drop_column('max_avg_window')
        batch.drop_column('wss_max_avg_kb')
