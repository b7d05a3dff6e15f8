"""Rolled-up VM samples keep the shrink floor of the interval's newest
sample, beside its WSS^max_avg: the planner packs on both
(``[consolidation] pack_on_shrink_floor``, issue 13).

Rollups written before this revision keep NULL there: no floor, as for
an estimator without one.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03
"""

from alembic import op
import sqlalchemy as sa

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('vm_sample_rollups') as batch:
        batch.add_column(sa.Column('shrink_floor_kb', sa.BigInteger(),
                                   nullable=True))


def downgrade():
    with op.batch_alter_table('vm_sample_rollups') as batch:
        batch.drop_column('shrink_floor_kb')
