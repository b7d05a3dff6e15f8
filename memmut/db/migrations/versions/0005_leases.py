"""Leases: the one controller that runs consolidation rounds holds the
``consolidation`` lease (issue 19).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""

from alembic import op
import sqlalchemy as sa

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'leases',
        sa.Column('name', sa.String(64), nullable=False),
        sa.Column('holder', sa.String(255), nullable=False),
        sa.Column('acquired_at', sa.Double(), nullable=False),
        sa.Column('renewed_at', sa.Double(), nullable=False),
        sa.Column('expires_at', sa.Double(), nullable=False),
        sa.PrimaryKeyConstraint('name', name=op.f('pk_leases')))


def downgrade():
    op.drop_table('leases')
