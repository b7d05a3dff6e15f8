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


def vm_rollups(db, vm_id, since=None, limit=None):
    """The VM's rolled-up intervals (``vm_sample_rollups``, migration
    0006), the newest ``limit`` whose newest sample is at or after
    ``since``, oldest first: one dict per interval, the rows of an interval
    merged (a late sample adds a second row to an interval already rolled
    up), with the name of the host of its newest sample."""
    r = models.VMSampleRollup
    ts = sa.func.max(r.last_timestamp)
    bins = sa.select(r.bin_end).where(r.vm_id == vm_id).group_by(r.bin_end)
    if since is not None:
        bins = bins.having(ts >= since)
    bins = bins.order_by(r.bin_end.desc())
    if limit is not None:
        bins = bins.limit(limit)
    # Two statements: MySQL takes no LIMIT in an IN subquery.
    wanted = {row[0] for row in db.read_rows(bins)}
    if not wanted:
        return []
    rows = db.read_rows(
        sa.select(r, models.Host.name)
        .join(models.Host, r.last_host_id == models.Host.id)
        .where(r.vm_id == vm_id, r.bin_end >= min(wanted))
        .order_by(r.bin_end, r.last_timestamp, r.id))
    merged = {}
    for row, host in rows:
        if row.bin_end not in wanted:
            continue
        m = merged.get(row.bin_end)
        if m is None:
            merged[row.bin_end] = dict(
                interval_end=row.bin_end,
                interval_start=row.bin_end - row.interval_s,
                samples=row.samples, cpu_used_s=row.cpu_used_s,
                cpu_spent_s=row.cpu_spent_s,
                cpu_peak_cores=row.cpu_peak_cores,
                wss_max_kb=row.wss_max_kb,
                wss_max_avg_kb=row.wss_max_avg_kb,
                shrink_floor_kb=row.shrink_floor_kb,
                booked_kb=row.booked_kb, timestamp=row.last_timestamp,
                host=host)
            continue
        m['samples'] += row.samples
        m['cpu_used_s'] += row.cpu_used_s
        m['cpu_spent_s'] += row.cpu_spent_s
        for key in ('cpu_peak_cores', 'wss_max_kb'):
            if _above(getattr(row, key), m[key]):
                m[key] = getattr(row, key)
        if row.last_timestamp >= m['timestamp']:    # the newest sample's
            m.update(timestamp=row.last_timestamp, host=host,
                     wss_max_avg_kb=row.wss_max_avg_kb,
                     shrink_floor_kb=row.shrink_floor_kb,
                     booked_kb=row.booked_kb)
    return [merged[k] for k in sorted(merged)]


def _above(value, current):
    """``value`` is known and above ``current`` (None: unknown)."""
    return value is not None and (current is None or value > current)
