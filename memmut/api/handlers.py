"""Resource handlers: hosts, VMs, consolidation rounds, allocations.

Each handler takes the :class:`webob.Request` (with ``req.context``, the
oslo.context of the caller, ``req.microversion`` and ``req.app``) and the
URL's arguments, checks policy first, validates its query string and body
(:mod:`memmut.api.schemas`) and returns ``(status, body[, headers])``.
"""

import datetime
import time
import urllib.parse

from memmut.api import data
from memmut.api import errors
from memmut.api import policies
from memmut.api import policy
from memmut.api import schemas
from memmut.db import api as db_api
from memmut import sizing

WSS_MAX_AVG = '1.1'   # microversion that adds wss_max_avg_kb, badis_mode
PINNED = '1.2'        # microversion that adds pinned_kb, _note, _at
ROLLUPS = '1.3'       # microversion that adds rolled-up history entries
SHRINK_FLOOR = '1.4'  # microversion that adds shrink_floor_kb, _note, _at
PACKING = '1.5'       # microversion that adds packing_kb (+ rollups' floor)


def iso(t):
    if t is None:
        return None
    return datetime.datetime.fromtimestamp(
        t, datetime.timezone.utc).isoformat()


def _authorize_and_query(req, rule, schema):
    policy.authorize(req.context, rule)
    return schemas.validate_query(schema, req.GET)


def _limit(query):
    return query.pop('limit', schemas.DEFAULT_LIMIT)


def _links(req, path, items, limit, marker_of, query):
    if len(items) < limit:
        return []
    params = {k: str(v).lower() if isinstance(v, bool) else v
              for k, v in query.items()}
    params.update(limit=limit, marker=marker_of(items[-1]))
    return [{'rel': 'next', 'href': '%s%s?%s' % (
        req.application_url, path, urllib.parse.urlencode(params))}]


# -- hosts -----------------------------------------------------------------

def _host_views(req, hosts, with_vms=False):
    ids = [h.id for h in hosts]
    vms = data.vms_on_hosts(req.app.db, ids)
    latest = data.latest_vm_samples(req.app.db, [v.id for v in vms])
    host_latest = data.latest_host_samples(req.app.db, ids)
    down_after = req.app.conf.controller.host_down_after
    now = time.time()
    views = []
    for h in hosts:
        mine = [v for v in vms if v.host_id == h.id]
        samples = [latest[v.id] for v in mine if v.id in latest]
        hs = host_latest.get(h.id)
        # The controller's receive time, not the agent's clock.
        up = (h.last_report_at is not None and
              now - h.updated_at <= down_after)
        view = {
            'name': h.name,
            'status': 'up' if up else 'down',
            'hypervisor': h.hypervisor,
            'cpu_count': h.cpu_count,
            'memory_total_kb': h.memory_total_kb,
            'memory_free_kb': hs.memory_free_kb if hs else None,
            'cpu_util': hs.cpu_util if hs else None,
            'reservoir_kb': h.reservoir_kb,
            'lent_kb': sum(s.lent_kb or 0 for s in samples),
            'borrowed_kb': sum(s.borrowed_kb or 0 for s in samples),
            'vm_count': len(mine),
            'booked_kb': sum(v.booked_kb for v in mine),
            'sampling_backends': sorted({s.wss_estimator for s in samples
                                         if s.wss_estimator}),
            'last_report_at': iso(h.last_report_at),
        }
        if with_vms:
            view['vms'] = [{'uuid': v.uuid, 'name': v.name,
                            'state': v.state} for v in mine]
        views.append(view)
    return views


def host_list(req):
    query = _authorize_and_query(req, policies.HOST_LIST, schemas.HOST_LIST)
    limit = _limit(query)
    hosts = data.list_hosts(req.app.db, limit, **query)
    query.pop('marker', None)
    return 200, {'hosts': _host_views(req, hosts),
                 'links': _links(req, '/hosts', hosts, limit,
                                 lambda h: h.name, query)}


def host_show(req, name):
    _authorize_and_query(req, policies.HOST_SHOW, schemas.HOST_SHOW)
    hosts = data.list_hosts(req.app.db, 1, name=name)
    if not hosts:
        raise errors.NotFound('no host named %r' % name)
    return 200, {'host': _host_views(req, hosts, with_vms=True)[0]}


# -- VMs -------------------------------------------------------------------

def _swap(sample):
    stats = (sample.memory_stats or {}) if sample else {}
    return stats.get('swap_in'), stats.get('swap_out')


def _sample_fields(req, s):
    swap_in, swap_out = _swap(s)
    view = {
        'balloon_kb': s.balloon_kb if s else None,
        'wss_kb': s.wss_kb if s else None,
        'wss_estimator': s.wss_estimator if s else None,
        'role': s.mut_role if s else None,
        'mem_init_kb': s.mem_init_kb if s else None,
        'lent_kb': s.lent_kb if s else None,
        'borrowed_kb': s.borrowed_kb if s else None,
        'swap_in_kb': swap_in,
        'swap_out_kb': swap_out,
    }
    if req.microversion.matches(WSS_MAX_AVG):
        for key in ('wss_max_avg_kb', 'max_avg_window', 'max_avg_slice_s',
                    'badis_mode'):
            view[key] = getattr(s, key) if s else None
    # what Badis learned: a value, why it last changed and when
    for version, learned in ((PINNED, 'pinned'),
                             (SHRINK_FLOOR, 'shrink_floor')):
        if req.microversion.matches(version):
            for key in (learned + '_kb', learned + '_note'):
                view[key] = getattr(s, key) if s else None
            view[learned + '_at'] = (iso(getattr(s, learned + '_at'))
                                     if s else None)
    if req.microversion.matches(PACKING):
        view['packing_kb'] = (_packing_kb(req, s.booked_kb, s.wss_max_avg_kb,
                                          s.shrink_floor_kb) if s else None)
    return view


def _packing_kb(req, booked_kb, max_avg_kb, floor_kb):
    """The memory the controller packs the VM on before headroom: its
    booking with ``memory_basis = booked``, else WSS^max_avg or the
    shrink floor (``pack_on_shrink_floor``), capped at the booking; None
    without a WSS^max_avg. A VM younger than a time slice counts at its
    booking in a round whatever this says."""
    c = req.app.conf.consolidation
    if c.memory_basis == 'booked':
        return booked_kb
    return sizing.packing_kb(max_avg_kb, floor_kb, c.pack_on_shrink_floor,
                             booked_kb)


def _vm_views(req, vms):
    latest = data.latest_vm_samples(req.app.db, [v.id for v in vms])
    views = []
    for v in vms:
        s = latest.get(v.id)
        view = {'uuid': v.uuid, 'name': v.name, 'host': v.host.name,
                'state': v.state, 'nova_instance': v.nova_instance,
                'booked_kb': v.booked_kb}
        view.update(_sample_fields(req, s))
        view.update({'sampled_at': iso(s.timestamp) if s else None,
                     'first_seen': iso(v.first_seen),
                     'last_seen': iso(v.last_seen)})
        views.append(view)
    return views


def vm_list(req):
    query = _authorize_and_query(req, policies.VM_LIST, schemas.VM_LIST)
    limit = _limit(query)
    vms = data.list_vms(req.app.db, limit, **query)
    query.pop('marker', None)
    return 200, {'vms': _vm_views(req, vms),
                 'links': _links(req, '/vms', vms, limit,
                                 lambda v: v.uuid, query)}


def _get_vm(req, uuid):
    vms = data.list_vms(req.app.db, 1, uuid=uuid)
    if not vms:
        raise errors.NotFound('no VM with UUID %s' % uuid)
    return vms[0]


def vm_show(req, uuid):
    _authorize_and_query(req, policies.VM_SHOW, schemas.VM_SHOW)
    return 200, {'vm': _vm_views(req, [_get_vm(req, uuid)])[0]}


def _rollup_view(req, r):
    spent = r['cpu_spent_s']
    view = {'kind': 'rollup', 'timestamp': iso(r['timestamp']),
            'interval_start': iso(r['interval_start']),
            'interval_end': iso(r['interval_end']),
            'samples': r['samples'], 'host': r['host'],
            'booked_kb': r['booked_kb'], 'wss_max_kb': r['wss_max_kb'],
            'wss_max_avg_kb': r['wss_max_avg_kb'],
            'cpu_used_s': r['cpu_used_s'], 'cpu_spent_s': spent,
            'cpu_mean_cores': r['cpu_used_s'] / spent if spent > 0 else None,
            'cpu_peak_cores': r['cpu_peak_cores']}
    if req.microversion.matches(PACKING):
        view['shrink_floor_kb'] = r['shrink_floor_kb']
        view['packing_kb'] = _packing_kb(req, r['booked_kb'],
                                         r['wss_max_avg_kb'],
                                         r['shrink_floor_kb'])
    return view


def vm_history(req, uuid):
    query = _authorize_and_query(req, policies.VM_HISTORY,
                                 schemas.VM_HISTORY)
    rollups = req.microversion.matches(ROLLUPS)
    kind = query.get('kind')
    if kind is not None and not rollups:
        raise errors.BadRequest('the kind query parameter needs '
                                'microversion %s' % ROLLUPS)
    vm = _get_vm(req, uuid)
    since, limit = query.get('since'), _limit(query)
    samples = [] if kind == 'rollup' else req.app.db.vm_samples(
        vm.uuid, since=since, limit=limit)
    entries = []
    for s in samples:
        view = {'kind': 'sample'} if rollups else {}
        view.update(timestamp=iso(s.timestamp), state=s.state)
        view.update(_sample_fields(req, s))
        entries.append((s.timestamp, 1, view))
    if rollups and kind != 'sample':
        # Beyond the raw retention the history goes on as one entry per
        # rolled-up interval, dated by its newest sample (before a raw
        # sample of the same time, as the rounds read them).
        entries += [(r['timestamp'], 0, _rollup_view(req, r)) for r in
                    data.vm_rollups(req.app.db, vm.id, since, limit)]
        entries.sort(key=lambda e: e[:2])
        entries = entries[-limit:]
    return 200, {'uuid': vm.uuid, 'history': [e[2] for e in entries]}


# -- consolidation rounds --------------------------------------------------

def _round_view(r, migrations=None, count=None):
    view = {'id': r.id, 'status': r.status, 'dry_run': r.dry_run,
            'reason': r.reason, 'started_at': iso(r.started_at),
            'finished_at': iso(r.finished_at)}
    if migrations is None:
        view['migration_count'] = count or 0
        return view
    view['migrations'] = [{
        'id': m.id, 'vm_uuid': m.vm_uuid, 'source_host': m.source_host,
        'dest_host': m.dest_host, 'resource': m.resource, 'kind': m.kind,
        'reason': '%s %s' % (m.resource, m.kind), 'status': m.status,
        'attempts': m.attempts, 'error': m.error,
        'started_at': iso(m.started_at), 'finished_at': iso(m.finished_at),
    } for m in migrations]
    view['migration_count'] = len(migrations)
    view['summary'] = {k: v for k, v in (r.summary or {}).items()
                       if k != 'states'}
    view['parameters'] = r.parameters
    return view


def round_list(req):
    query = _authorize_and_query(req, policies.ROUND_LIST,
                                 schemas.ROUND_LIST)
    limit = _limit(query)
    rounds = data.list_rounds(req.app.db, limit, **query)
    counts = data.migration_counts(req.app.db, [r.id for r in rounds])
    query.pop('marker', None)
    return 200, {'rounds': [_round_view(r, count=counts.get(r.id))
                            for r in rounds],
                 'links': _links(req, '/rounds', rounds, limit,
                                 lambda r: r.id, query)}


def _round_id(text):
    if not text.isdigit() or len(text) > 18:
        raise errors.NotFound('no consolidation round %s' % text)
    return int(text)


def _show_round(req, round_id):
    try:
        r = req.app.db.get_round(round_id)
    except db_api.RecordNotFound as e:
        raise errors.NotFound(str(e))
    return _round_view(r, req.app.db.list_migrations(round_id=r.id))


def round_show(req, round_id):
    _authorize_and_query(req, policies.ROUND_SHOW, schemas.ROUND_SHOW)
    return 200, {'round': _show_round(req, _round_id(round_id))}


def round_create(req):
    _authorize_and_query(req, policies.ROUND_CREATE,
                         schemas.ROUND_CREATE_QUERY)
    body = schemas.validate_body(schemas.ROUND_CREATE, req)
    round_id = req.app.start_round(body.get('dry_run'))
    view = _show_round(req, round_id)
    return 202, {'round': view}, {
        'Location': '%s/rounds/%d' % (req.application_url, round_id)}


# -- remote-memory allocations ---------------------------------------------

def _allocation_view(a):
    return {'allocation_id': a.allocation_id, 'state': a.state,
            'client_host': a.client_host, 'server_host': a.server_host,
            'vm_uuid': a.vm_uuid, 'size_kb': a.size_kb, 'uri': a.uri,
            'reason': a.reason, 'created_at': iso(a.created_at),
            'updated_at': iso(a.updated_at)}


def allocation_list(req):
    query = _authorize_and_query(req, policies.ALLOCATION_LIST,
                                 schemas.ALLOCATION_LIST)
    limit = _limit(query)
    allocs = data.list_allocations(req.app.db, limit, **query)
    query.pop('marker', None)
    return 200, {'allocations': [_allocation_view(a) for a in allocs],
                 'links': _links(req, '/allocations', allocs, limit,
                                 lambda a: a.allocation_id, query)}


def allocation_show(req, allocation_id):
    _authorize_and_query(req, policies.ALLOCATION_SHOW,
                         schemas.ALLOCATION_SHOW)
    try:
        alloc = req.app.db.get_remote_allocation(allocation_id)
    except db_api.RecordNotFound as e:
        raise errors.NotFound(str(e))
    return 200, {'allocation': _allocation_view(alloc)}
