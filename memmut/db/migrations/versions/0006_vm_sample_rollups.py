"""Per-interval rollups of old VM samples (issue 19): raw samples are kept
for [controller] raw_sample_retention, then rolled up.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24
"""

from alembic import op
import sqlalchemy as sa

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None

BigID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade():
    op.create_table(
        'vm_sample_rollups',
        sa.Column('id', BigID, nullable=False),
        sa.Column('vm_id', sa.Integer(), nullable=False),
        sa.Column('bin_end', sa.Double(), nullable=False),
        sa.Column('interval_s', sa.Double(), nullable=False),
        sa.Column('samples', sa.Integer(), nullable=False),
        sa.Column('cpu_used_s', sa.Double(), nullable=False),
        sa.Column('cpu_spent_s', sa.Double(), nullable=False),
        sa.Column('cpu_peak_cores', sa.Double(), nullable=True),
        sa.Column('wss_max_kb', sa.BigInteger(), nullable=True),
        sa.Column('wss_max_avg_kb', sa.BigInteger(), nullable=True),
        sa.Column('booked_kb', sa.BigInteger(), nullable=False),
        sa.Column('last_timestamp', sa.Double(), nullable=False),
        sa.Column('last_host_id', sa.Integer(), nullable=False),
        sa.Column('last_cpu_time_ns', sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ['vm_id'], ['vms.id'],
            name=op.f('fk_vm_sample_rollups_vm_id_vms')),
        sa.ForeignKeyConstraint(
            ['last_host_id'], ['hosts.id'],
            name=op.f('fk_vm_sample_rollups_last_host_id_hosts')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_vm_sample_rollups')))
    op.create_index(op.f('ix_vm_sample_rollups_vm_id_bin_end'),
                    'vm_sample_rollups', ['vm_id', 'bin_end'])
    op.create_index(op.f('ix_vm_sample_rollups_bin_end'),
                    'vm_sample_rollups', ['bin_end'])


def downgrade():
    op.drop_index(op.f('ix_vm_sample_rollups_bin_end'),
                  table_name='vm_sample_rollups')
    op.drop_index(op.f('ix_vm_sample_rollups_vm_id_bin_end'),
                  table_name='vm_sample_rollups')
    op.drop_table('vm_sample_rollups')
