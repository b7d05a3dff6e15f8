"""Initial schema: hosts, VMs, their samples, remote allocations,
consolidation rounds and their migrations.

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

from alembic import op
import sqlalchemy as sa

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None

# Sample ids are 64-bit, except on SQLite where only INTEGER PRIMARY KEY
# auto-increments (see models.BigID).
BIG_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def _timestamps():
    return [sa.Column('created_at', sa.Double(), nullable=False),
            sa.Column('updated_at', sa.Double(), nullable=False)]


def upgrade():
    op.create_table(
        'hosts',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('hypervisor', sa.String(64), nullable=True),
        sa.Column('memory_total_kb', sa.BigInteger(), nullable=True),
        sa.Column('cpu_count', sa.Integer(), nullable=True),
        sa.Column('last_report_at', sa.Double(), nullable=True),
        sa.Column('boot_id', sa.String(64), nullable=True),
        sa.Column('reservoir_kb', sa.BigInteger(), nullable=False),
        sa.Column('reservoir_at', sa.Double(), nullable=True),
        *_timestamps(),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_hosts')),
        sa.UniqueConstraint('name', name=op.f('uq_hosts_name')))

    op.create_table(
        'vms',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('host_id', sa.Integer(), nullable=False),
        sa.Column('booked_kb', sa.BigInteger(), nullable=False),
        sa.Column('nova_instance', sa.Boolean(), nullable=False),
        sa.Column('state', sa.String(32), nullable=False),
        sa.Column('first_seen', sa.Double(), nullable=False),
        sa.Column('last_seen', sa.Double(), nullable=False),
        sa.ForeignKeyConstraint(['host_id'], ['hosts.id'],
                                name=op.f('fk_vms_host_id_hosts')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_vms')),
        sa.UniqueConstraint('uuid', name=op.f('uq_vms_uuid')))
    op.create_index(op.f('ix_vms_host_id'), 'vms', ['host_id'])

    op.create_table(
        'vm_samples',
        sa.Column('id', BIG_ID, nullable=False),
        sa.Column('vm_id', sa.Integer(), nullable=False),
        sa.Column('host_id', sa.Integer(), nullable=False),
        sa.Column('timestamp', sa.Double(), nullable=False),
        sa.Column('state', sa.String(32), nullable=False),
        sa.Column('booked_kb', sa.BigInteger(), nullable=False),
        sa.Column('balloon_kb', sa.BigInteger(), nullable=False),
        sa.Column('memory_stats', sa.JSON(), nullable=False),
        sa.Column('cpu_time_ns', sa.BigInteger(), nullable=False),
        sa.Column('wss_kb', sa.BigInteger(), nullable=True),
        sa.Column('wss_estimator', sa.String(64), nullable=True),
        sa.Column('mut_role', sa.String(16), nullable=True),
        sa.Column('mem_init_kb', sa.BigInteger(), nullable=True),
        sa.Column('lent_kb', sa.BigInteger(), nullable=False),
        sa.Column('borrowed_kb', sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(['host_id'], ['hosts.id'],
                                name=op.f('fk_vm_samples_host_id_hosts')),
        sa.ForeignKeyConstraint(['vm_id'], ['vms.id'],
                                name=op.f('fk_vm_samples_vm_id_vms')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_vm_samples')))
    op.create_index(op.f('ix_vm_samples_host_id'), 'vm_samples',
                    ['host_id'])
    op.create_index(op.f('ix_vm_samples_timestamp'), 'vm_samples',
                    ['timestamp'])
    op.create_index(op.f('ix_vm_samples_vm_id_timestamp'), 'vm_samples',
                    ['vm_id', 'timestamp'])

    op.create_table(
        'host_samples',
        sa.Column('id', BIG_ID, nullable=False),
        sa.Column('host_id', sa.Integer(), nullable=False),
        sa.Column('boot_id', sa.String(64), nullable=False),
        sa.Column('seq', sa.BigInteger(), nullable=False),
        sa.Column('timestamp', sa.Double(), nullable=False),
        sa.Column('memory_free_kb', sa.BigInteger(), nullable=False),
        sa.Column('cpu_util', sa.Double(), nullable=False),
        sa.Column('reservoir_kb', sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(['host_id'], ['hosts.id'],
                                name=op.f('fk_host_samples_host_id_hosts')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_host_samples')),
        sa.UniqueConstraint('host_id', 'boot_id', 'seq',
                            name=op.f('uq_host_samples_host_id_boot_id_seq')))
    op.create_index(op.f('ix_host_samples_host_id_timestamp'),
                    'host_samples', ['host_id', 'timestamp'])
    op.create_index(op.f('ix_host_samples_timestamp'), 'host_samples',
                    ['timestamp'])

    op.create_table(
        'remote_allocations',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('allocation_id', sa.String(64), nullable=False),
        sa.Column('client_host', sa.String(255), nullable=False),
        sa.Column('server_host', sa.String(255), nullable=False),
        sa.Column('vm_uuid', sa.String(36), nullable=False),
        sa.Column('size_kb', sa.BigInteger(), nullable=False),
        sa.Column('state', sa.String(32), nullable=False),
        sa.Column('uri', sa.Text(), nullable=True),
        sa.Column('reason', sa.Text(), nullable=True),
        *_timestamps(),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_remote_allocations')),
        sa.UniqueConstraint(
            'allocation_id',
            name=op.f('uq_remote_allocations_allocation_id')))
    for column in ('client_host', 'server_host', 'state'):
        op.create_index(op.f('ix_remote_allocations_%s' % column),
                        'remote_allocations', [column])

    op.create_table(
        'consolidation_rounds',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('started_at', sa.Double(), nullable=False),
        sa.Column('finished_at', sa.Double(), nullable=True),
        sa.Column('dry_run', sa.Boolean(), nullable=False),
        sa.Column('status', sa.String(32), nullable=False),
        sa.Column('reason', sa.Text(), nullable=True),
        sa.Column('summary', sa.JSON(none_as_null=True), nullable=True),
        sa.Column('parameters', sa.JSON(none_as_null=True), nullable=True),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_consolidation_rounds')))
    op.create_index(op.f('ix_consolidation_rounds_started_at'),
                    'consolidation_rounds', ['started_at'])

    op.create_table(
        'migrations',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('round_id', sa.Integer(), nullable=False),
        sa.Column('vm_uuid', sa.String(36), nullable=False),
        sa.Column('source_host', sa.String(255), nullable=False),
        sa.Column('dest_host', sa.String(255), nullable=False),
        sa.Column('resource', sa.String(16), nullable=False),
        sa.Column('kind', sa.String(16), nullable=False),
        sa.Column('status', sa.String(32), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('error', sa.Text(), nullable=True),
        sa.Column('started_at', sa.Double(), nullable=True),
        sa.Column('finished_at', sa.Double(), nullable=True),
        sa.CheckConstraint("kind IN ('underload', 'overload')",
                           name=op.f('ck_migrations_kind')),
        sa.CheckConstraint("resource IN ('cpu', 'memory', 'cpu+memory')",
                           name=op.f('ck_migrations_resource')),
        sa.ForeignKeyConstraint(
            ['round_id'], ['consolidation_rounds.id'],
            name=op.f('fk_migrations_round_id_consolidation_rounds')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_migrations')))
    op.create_index(op.f('ix_migrations_round_id'), 'migrations',
                    ['round_id'])
    op.create_index(op.f('ix_migrations_vm_uuid'), 'migrations',
                    ['vm_uuid'])


def downgrade():
    # Children before parents; indexes go with their tables.
    for table in ('migrations', 'consolidation_rounds',
                  'remote_allocations', 'host_samples', 'vm_samples', 'vms',
                  'hosts'):
        op.drop_table(table)
