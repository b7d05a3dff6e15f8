"""VM samples carry Badis's pinned-page correction, why and when it last
changed (issue 13: what the agent learned is shown per VM).

Rows written before this revision keep NULL in the new columns: the API
shows null there, as it does for other estimators.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

from alembic import op
import sqlalchemy as sa

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('vm_samples') as batch:
        batch.add_column(sa.Column('pinned_kb', sa.BigInteger(),
                                   nullable=True))
        batch.add_column(sa.Column('pinned_note', sa.Text(),
                                   nullable=True))
        batch.add_column(sa.Column('pinned_at', sa.Double(),
                                   nullable=True))


def downgrade():
    with op.batch_alter_table('vm_samples') as batch:
        batch.drop_column('pinned_at')
        batch.drop_column('pinned_note')
        batch.drop_column('pinned_kb')
