"""The REST API's reads: pages of hosts, VMs, rounds and allocations with
the figures each resource shows, in as few statements as a page needs.

"""

import sqlalchemy as sa

from memmut.db import models


def _page(query, key, marker, limit, descending=False):
    if marker is not None:
        query = query.where(key < marker if descending else key > marker)
    return query.order_by(key.desc() if descending else key).limit(limit)


def latest_vm_samples(db, vm_ids):
    """{vm_id: newest VMSample} for the given VMs."""
    if not vm_ids:
        return {}
    s = models.VMSample
    newest = (sa.select(s.vm_id, sa.func.max(s.timestamp).label('ts'))
              .where(s.vm_id.in_(vm_ids)).group_by(s.vm_id).subquery())
    rows = db.read(sa.select(s).join(
        newest, sa.and_(s.vm_id == newest.c.vm_id,
                        s.timestamp == newest.c.ts)).order_by(s.id))
    return {row.vm_id: row for row in rows}   # the last id wins a tie


def latest_host_samples(db, host_ids):
    if not host_ids:
        return {}
    s = models.HostSample
    newest = (sa.select(s.host_id, sa.func.max(s.timestamp).label('ts'))
              .where(s.host_id.in_(host_ids)).group_by(s.host_id)
              .subquery())
    rows = db.read(sa.select(s).join(
        newest, sa.and_(s.host_id == newest.c.host_id,
                        s.timestamp == newest.c.ts)).order_by(s.id))
    return {row.host_id: row for row in rows}


def list_hosts(db, limit, marker=None, hypervisor=None, name=None):
    query = sa.select(models.Host)
    if hypervisor is not None:
        query = query.where(models.Host.hypervisor == hypervisor)
    if name is not None:
        query = query.where(models.Host.name == name)
    return db.read(_page(query, models.Host.name, marker, limit))


def vms_on_hosts(db, host_ids):
    if not host_ids:
        return []
    return db.read(sa.select(models.VM).where(
        models.VM.host_id.in_(host_ids)).order_by(models.VM.uuid))


def list_vms(db, limit, marker=None, host=None, state=None,
             nova_instance=None, uuid=None):
    query = sa.select(models.VM)
    if host is not None:
        query = query.join(models.VM.host).where(models.Host.name == host)
    if state is not None:
        query = query.where(models.VM.state == state)
    if nova_instance is not None:
        query = query.where(models.VM.nova_instance == nova_instance)
    if uuid is not None:
        query = query.where(models.VM.uuid == uuid)
    return db.read(_page(query, models.VM.uuid, marker, limit))


def list_rounds(db, limit, marker=None, status=None, dry_run=None):
    query = sa.select(models.ConsolidationRound)
    if status is not None:
        query = query.where(models.ConsolidationRound.status == status)
    if dry_run is not None:
        query = query.where(models.ConsolidationRound.dry_run == dry_run)
    return db.read(_page(query, models.ConsolidationRound.id, marker, limit,
                         descending=True))


def migration_counts(db, round_ids):
    if not round_ids:
        return {}
    m = models.Migration
    rows = db.read_rows(sa.select(m.round_id, sa.func.count(m.id))
                        .where(m.round_id.in_(round_ids))
                        .group_by(m.round_id))
    return {r[0]: r[1] for r in rows}


def list_allocations(db, limit, marker=None, host=None, state=None):
    a = models.RemoteAllocation
    query = sa.select(a)
    if host is not None:
        query = query.where(sa.or_(a.client_host == host,
                                   a.server_host == host))
    if state is not None:
        query = query.where(a.state == state)
    return db.read(_page(query, a.allocation_id, marker, limit))
