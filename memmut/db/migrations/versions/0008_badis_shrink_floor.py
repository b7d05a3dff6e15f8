"""VM samples carry Badis's shrink floor, why and when it last changed
(issue 13: what the agent learned is shown per VM).

Rows written before this revision keep NULL in the new columns: the API
shows null there, as it does for other estimators.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from alembic import op
import sqlalchemy as sa

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('vm_samples') as batch:
        batch.add_column(sa.Column('shrink_floor_kb', sa.BigInteger(),
                                   nullable=True))
        batch.add_column(sa.Column('shrink_floor_note', sa.Text(),
                                   nullable=True))
        batch.add_column(sa.Column('shrink_floor_at', sa.Double(),
                                   nullable=True))


def downgrade():
    with op.batch_alter_table('vm_samples') as batch:
        batch.drop_column('shrink_floor_at')
        batch.drop_column('shrink_floor_note')
        batch.drop_column('shrink_floor_kb')
