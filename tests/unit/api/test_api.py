"""memmut-api in process (noauth), over the fixed sample data set."""

import os
import subprocess
import sys

import oslo_messaging as messaging
import pytest

from memmut.api import app as api_app
from memmut.api import microversion
from memmut.api import policies
from memmut.api import policy
from memmut.api import sample
from memmut.api import schemas
from memmut.api import deploy as wsgi_api
from memmut import objects
from tests import common

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))))
READER = 'reader'
ADMIN = 'admin,member,reader'


@pytest.fixture
def api():
    conf = common.private_conf()
    wsgi_api.register_middleware_opts(conf)
    policy.reset()
    policy.get_enforcer(conf)
    s = sample.SampleAPI(conf)
    yield s
    s.close()
    policy.reset()


def _err(doc):
    assert set(doc) == {'errors'}
    (err,) = doc['errors']
    assert set(err) == {'status', 'code', 'title', 'detail', 'request_id'}
    return err


def test_version_document_and_microversion_headers(api):
    resp, doc = api.request('GET', '/', roles='')
    assert resp.status_int == 200
    assert doc['versions'][0]['max_version'] == str(microversion.MAX_VERSION)
    assert resp.headers[microversion.HEADER] == 'memmut 1.0'
    assert resp.headers['Vary'] == microversion.HEADER
    resp, _ = api.request('GET', '/hosts',
                          headers={microversion.HEADER: 'memmut latest'})
    assert resp.headers[microversion.HEADER] == 'memmut 1.5'
    resp, doc = api.request('GET', '/hosts',
                            headers={microversion.HEADER: 'memmut 9.0'})
    assert resp.status_int == 406
    assert _err(doc)['code'] == 'memmut.microversion_unsupported'
    resp, doc = api.request('GET', '/hosts',
                            headers={microversion.HEADER: 'memmut one'})
    assert resp.status_int == 400


def test_request_id_and_healthcheck(api):
    resp, _ = api.request('GET', '/hosts')
    assert resp.headers['x-openstack-request-id'].startswith('req-')
    resp, _ = api.request('GET', '/healthcheck', roles='')
    assert resp.status_int == 200


def test_hosts(api):
    resp, doc = api.request('GET', '/hosts', roles=READER)
    assert resp.status_int == 200
    by_name = {h['name']: h for h in doc['hosts']}
    host = by_name[sample.HOST]
    assert host['vm_count'] == 2
    assert host['lent_kb'] == 2 << 20 and host['borrowed_kb'] == 2 << 20
    assert host['reservoir_kb'] == 2 << 20
    assert host['sampling_backends'] == ['badis/page_idle+memstore']
    assert host['status'] == 'down'     # its last report is in 2026
    resp, doc = api.request('GET', '/hosts/%s' % sample.HOST)
    assert [v['name'] for v in doc['host']['vms']] == ['web-1', 'db-1']
    resp, doc = api.request('GET', '/hosts/nope')
    assert resp.status_int == 404
    assert _err(doc)['code'] == 'memmut.not_found'


def test_pagination_follows_markers(api):
    _, doc = api.request('GET', '/hosts?limit=1')
    assert [h['name'] for h in doc['hosts']] == [sample.HOST]
    (link,) = doc['links']
    assert link['rel'] == 'next' and 'marker=compute-1' in link['href']
    _, doc = api.request('GET', '/hosts?limit=1&marker=compute-1')
    assert [h['name'] for h in doc['hosts']] == [sample.OTHER]
    _, doc = api.request('GET', '/hosts?marker=compute-2')
    assert doc == {'hosts': [], 'links': []}


def test_vms_filters_and_microversion_fields(api):
    _, doc = api.request('GET', '/vms?host=compute-1&state=running')
    assert len(doc['vms']) == 2
    assert 'wss_max_avg_kb' not in doc['vms'][0]
    _, doc = api.request('GET', '/vms?nova_instance=false')
    assert doc['vms'] == []
    _, doc = api.request('GET', '/vms/%s' % sample.VMS[1][0],
                         headers={microversion.HEADER: 'memmut 1.1'})
    vm = doc['vm']
    assert vm['role'] == 'client' and vm['borrowed_kb'] == 2 << 20
    assert vm['swap_out_kb'] == 512
    assert vm['wss_max_avg_kb'] == (6 << 20) | (1 << 18)
    assert (vm['badis_mode'], vm['max_avg_window']) == ('VG', 5)
    assert 'pinned_kb' not in vm            # 1.2
    _, doc = api.request('GET', '/vms/%s/history?limit=1' % sample.VMS[0][0])
    assert len(doc['history']) == 1
    resp, _ = api.request('GET', '/vms/%s/history?since=-1'
                          % sample.VMS[0][0])
    assert resp.status_int == 400


def test_vm_shows_what_badis_learned_from_1_2(api):
    uuid = sample.VMS[1][0]
    _, doc = api.request('GET', '/vms/%s' % uuid,
                         headers={microversion.HEADER: 'memmut 1.2'})
    vm = doc['vm']
    assert vm['pinned_kb'] == 310 << 10
    assert vm['pinned_note'].startswith('learned in VG: swapping at')
    assert vm['pinned_at'] == '2026-11-24T11:45:00+00:00'
    _, doc = api.request('GET', '/vms/%s/history?limit=1' % uuid,
                         headers={microversion.HEADER: 'memmut 1.2'})
    assert doc['history'][0]['pinned_kb'] == 310 << 10
    _, doc = api.request('GET', '/vms?host=compute-2',
                         headers={microversion.HEADER: 'memmut latest'})
    assert doc['vms'] == []
    # a VM whose agent reported no correction (older agent, other
    # estimator) shows nulls
    api.db.store_report(objects.HostReport(
        host='compute-3', boot_id='e5', seq=1, timestamp=sample.T0,
        hypervisor='libvirt', memory_total_kb=4 << 20, memory_free_kb=0,
        cpu_count=2, cpu_util=0.0, vms=[objects.VMReport(
            uuid='0c5c8a1e-5f8e-4a4e-9d55-1b0f3c7a9e03', name='old',
            timestamp=sample.T0, state='running', booked_kb=1 << 20,
            balloon_kb=1 << 20)]))
    _, doc = api.request('GET', '/vms/0c5c8a1e-5f8e-4a4e-9d55-1b0f3c7a9e03',
                         headers={microversion.HEADER: 'memmut 1.2'})
    assert (doc['vm']['pinned_kb'], doc['vm']['pinned_note'],
            doc['vm']['pinned_at']) == (None, None, None)


def test_vm_shows_the_shrink_floor_from_1_4(api):
    uuid = sample.VMS[1][0]
    _, doc = api.request('GET', '/vms/%s' % uuid,
                         headers={microversion.HEADER: 'memmut 1.3'})
    assert 'shrink_floor_kb' not in doc['vm']
    _, doc = api.request('GET', '/vms/%s' % uuid,
                         headers={microversion.HEADER: 'memmut 1.4'})
    vm = doc['vm']
    assert vm['shrink_floor_kb'] == 6 << 20
    assert vm['shrink_floor_note'].startswith('shrink floor set at')
    assert vm['shrink_floor_at'] == '2026-11-24T11:45:00+00:00'
    _, doc = api.request('GET', '/vms/%s/history?limit=1' % uuid,
                         headers={microversion.HEADER: 'memmut 1.4'})
    assert doc['history'][0]['shrink_floor_kb'] == 6 << 20
    # no floor: 0, and no note yet
    _, doc = api.request('GET', '/vms/%s' % sample.VMS[0][0],
                         headers={microversion.HEADER: 'memmut 1.4'})
    assert (doc['vm']['shrink_floor_kb'], doc['vm']['shrink_floor_note'],
            doc['vm']['shrink_floor_at']) == (0, None, None)


def test_vm_shows_what_it_is_packed_on_from_1_5(api):
    v14 = {microversion.HEADER: 'memmut 1.4'}
    v15 = {microversion.HEADER: 'memmut 1.5'}
    low, high = (sample.VMS[i][0] for i in (0, 1))
    _, doc = api.request('GET', '/vms/%s' % high, headers=v14)
    assert 'packing_kb' not in doc['vm']
    # WSS^max_avg above the floor (6 GiB) or no floor: WSS^max_avg
    _, doc = api.request('GET', '/vms', headers=v15)
    got = {v['uuid']: v['packing_kb'] for v in doc['vms']}
    assert got[low] == (3 << 20) | (1 << 18)
    assert got[high] == (6 << 20) | (1 << 18)
    # rolled-up intervals carry their floor and the figure too
    _, doc = api.request('GET', '/vms/%s/history?kind=rollup' % high,
                         headers=v15)
    rollup = doc['history'][-1]
    assert rollup['shrink_floor_kb'] == 6 << 20
    assert rollup['packing_kb'] == (6 << 20) | (1 << 18)
    _, doc = api.request('GET', '/vms/%s/history?kind=rollup' % high,
                         headers=v14)
    assert 'packing_kb' not in doc['history'][-1]
    # packed on bookings: the booking, whatever was estimated
    conf = api.conf
    conf.set_override('memory_basis', 'booked', 'consolidation')
    try:
        _, doc = api.request('GET', '/vms/%s' % high, headers=v15)
        assert doc['vm']['packing_kb'] == 8 << 20
    finally:
        conf.clear_override('memory_basis', 'consolidation')


def test_packing_carries_a_floor_above_max_avg_unless_switched_off(api):
    # the agent holds the balloon at a 7 GiB floor, over its 6.25 GiB
    uuid = sample.VMS[1][0]
    with api.db._session() as session:
        import sqlalchemy as sa
        from memmut.db import models
        session.execute(sa.update(models.VMSample).values(
            shrink_floor_kb=7 << 20))
    v15 = {microversion.HEADER: 'memmut 1.5'}
    _, doc = api.request('GET', '/vms/%s' % uuid, headers=v15)
    assert doc['vm']['packing_kb'] == 7 << 20
    conf = api.conf
    conf.set_override('pack_on_shrink_floor', False, 'consolidation')
    try:
        _, doc = api.request('GET', '/vms/%s' % uuid, headers=v15)
        assert doc['vm']['packing_kb'] == (6 << 20) | (1 << 18)
    finally:
        conf.clear_override('pack_on_shrink_floor', 'consolidation')


V13 = {microversion.HEADER: 'memmut 1.3'}


def _history(api, query='', headers=V13):
    resp, doc = api.request('GET', '/vms/%s/history%s' % (sample.VMS[1][0],
                                                          query),
                            headers=headers)
    assert resp.status_int == 200, doc
    return doc['history']


def test_vm_history_goes_on_with_rollups_from_1_3(api):
    # Before 1.3: the raw samples only (the day-old ones are rolled up).
    old = _history(api, headers={microversion.HEADER: 'memmut 1.2'})
    assert [h['timestamp'] for h in old] == ['2026-11-24T11:59:00+00:00',
                                             '2026-11-24T12:00:00+00:00']
    assert all('kind' not in h for h in old)
    # 1.3: the two rolled-up 5-minute intervals of a day ago first.
    history = _history(api)
    assert [h['kind'] for h in history] == ['rollup', 'rollup', 'sample',
                                            'sample']
    first, second = history[:2]
    assert first == {
        'kind': 'rollup', 'timestamp': '2026-11-23T12:05:00+00:00',
        'interval_start': '2026-11-23T12:00:00+00:00',
        'interval_end': '2026-11-23T12:05:00+00:00', 'samples': 5,
        'host': 'compute-1', 'booked_kb': 8 << 20, 'wss_max_kb': 6 << 20,
        'wss_max_avg_kb': (6 << 20) | (1 << 18),
        # 4 deltas of 60 s at one core (the first sample has none before)
        'cpu_used_s': 240.0, 'cpu_spent_s': 240.0, 'cpu_mean_cores': 1.0,
        'cpu_peak_cores': 1.0}
    assert (second['interval_end'], second['samples'],
            second['cpu_spent_s']) == ('2026-11-23T12:10:00+00:00', 5, 300.0)
    assert history[2:] == [dict(h, kind='sample') for h in old]
    # limit: the newest entries, whatever their kind
    assert [h['kind'] for h in _history(api, '?limit=3')] == [
        'rollup', 'sample', 'sample']
    # since: a rolled-up interval by its newest sample
    since = sample.T0 - 86400 + 301
    assert [h['timestamp'] for h in _history(api, '?since=%d' % since)][
        0] == '2026-11-23T12:10:00+00:00'
    # one kind only
    assert [h['kind'] for h in _history(api, '?kind=rollup')] == [
        'rollup', 'rollup']
    assert [h['kind'] for h in _history(api, '?kind=sample&limit=1')] == [
        'sample']


def test_a_late_sample_of_a_rolled_up_interval_joins_it(api):
    uuid, name = sample.VMS[1]
    late = sample.T0 - 86400 + 330          # in the second interval
    api.db.store_report(objects.HostReport(
        host=sample.OTHER, boot_id='late', seq=1, timestamp=late,
        hypervisor='libvirt', memory_total_kb=64 << 20, memory_free_kb=0,
        cpu_count=16, cpu_util=0.0, vms=[objects.VMReport(
            uuid=uuid, name=name, timestamp=late, state='running',
            booked_kb=8 << 20, balloon_kb=8 << 20, wss_kb=7 << 20)]))
    assert api.db.rollup_samples(sample.T0 - 43200,
                                 sample.ROLLUP_INTERVAL) == 1
    assert api.db.count_samples()[1] == 2 * 2 + 1     # a second row
    rollups = _history(api, '?kind=rollup')
    assert len(rollups) == 2
    second = rollups[1]
    assert second['samples'] == 6
    assert second['wss_max_kb'] == 7 << 20             # the late one's
    # still dated by, and on the host of, the interval's newest sample
    assert (second['timestamp'], second['host']) == (
        '2026-11-23T12:10:00+00:00', sample.HOST)


def test_history_kind_needs_1_3(api):
    resp, doc = api.request('GET', '/vms/%s/history?kind=rollup'
                            % sample.VMS[1][0])
    assert resp.status_int == 400
    assert '1.3' in _err(doc)['detail']
    resp, doc = api.request('GET', '/vms/%s/history?kind=raw'
                            % sample.VMS[1][0], headers=V13)
    assert resp.status_int == 400


@pytest.mark.parametrize('query,needle', [
    ('limit=0', 'minimum'), ('limit=1001', 'maximum'),
    ('limit=x', 'integer'), ('colour=red', 'colour'),
    ('limit=1&limit=2', 'given 2 times'), ('marker=not-a-uuid', 'match'),
    ('nova_instance=maybe', 'boolean')])
def test_bad_queries_are_400(api, query, needle):
    resp, doc = api.request('GET', '/vms?' + query)
    assert resp.status_int == 400
    err = _err(doc)
    assert err['code'] == 'memmut.invalid_input' and needle in err['detail']


def test_round_create_policy_and_body(api):
    resp, doc = api.request('POST', '/rounds', {'dry_run': True},
                            roles=READER)
    assert resp.status_int == 403
    assert 'memmut:round:create' in _err(doc)['detail']
    for body in ({'dry_run': 'yes'}, {'dry_run': True, 'x': 1}, [1]):
        resp, doc = api.request('POST', '/rounds', body, roles=ADMIN)
        assert resp.status_int == 400, body
    resp, doc = api.request('POST', '/rounds', {'dry_run': True},
                            roles='service')
    assert resp.status_int == 202
    assert resp.headers['Location'].endswith('/rounds/1')
    assert doc['round']['migrations'][0]['reason'] == 'memory overload'
    _, doc = api.request('GET', '/rounds?dry_run=true', roles=READER)
    assert doc['rounds'][0]['migration_count'] == 1
    resp, _ = api.request('GET', '/rounds/abc')
    assert resp.status_int == 404
    resp, doc = api.request('DELETE', '/rounds/1')
    assert resp.status_int == 405 and resp.headers['Allow'] == 'GET'


def test_round_create_needs_json(api):
    import webob
    req = webob.Request.blank('/rounds', method='POST')
    req.headers['X-Roles'] = ADMIN
    req.body = b'dry_run=true'
    req.content_type = 'application/x-www-form-urlencoded'
    assert req.get_response(api.app).status_int == 415


class FakeControllerAPI:
    def __init__(self, reply=None, exc=None):
        self.reply, self.exc = reply, exc

    def start_round(self, dry_run, timeout):
        if self.exc:
            raise self.exc
        return self.reply


@pytest.mark.parametrize('controller,status,code', [
    (FakeControllerAPI({'round_id': None, 'busy': True,
                        'reason': 'another round is running'}),
     409, 'memmut.round_busy'),
    (FakeControllerAPI(exc=messaging.MessagingTimeout('late')), 503,
     'memmut.service_unavailable'),
])
def test_round_create_when_the_controller_cannot(controller, status, code):
    conf = common.private_conf()
    wsgi_api.register_middleware_opts(conf)
    policy.reset()
    s = sample.SampleAPI(conf, start_round=api_app.RPCRoundStarter(
        conf, controller_api=controller))
    try:
        resp, doc = s.request('POST', '/rounds', {})
        assert resp.status_int == status
        assert _err(doc)['code'] == code
    finally:
        s.close()
        policy.reset()


def test_allocations(api):
    _, doc = api.request('GET', '/allocations?host=compute-2')
    assert [a['allocation_id'] for a in doc['allocations']] == [
        sample.ALLOCATION]
    _, doc = api.request('GET', '/allocations?state=released')
    assert doc['allocations'] == []
    resp, _ = api.request('GET', '/allocations/%s' % sample.ALLOCATION)
    assert resp.status_int == 200
    resp, _ = api.request('GET', '/allocations/none')
    assert resp.status_int == 404


def test_no_roles_is_403_everywhere(api):
    for method, path in (('GET', '/hosts'), ('GET', '/vms'),
                         ('GET', '/rounds'), ('GET', '/allocations')):
        resp, _ = api.request(method, path, roles='')
        assert resp.status_int == 403, path


def test_every_route_has_schemas_and_a_policy():
    routed = {(m, p) for p, methods in api_app.ROUTES for m in methods}
    assert routed == set(schemas.BY_ROUTE)
    documented = {(op['method'], op['path']) for r in policies.rules
                  for op in r.operations}
    assert len(documented) == len(routed)
    for rule in policies.rules:
        assert rule.scope_types == ['project']


def test_api_reference_is_current():
    proc = subprocess.run([sys.executable, 'tools/gen-api-ref.py',
                           '--check'], cwd=ROOT, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]


def test_policy_sample_is_current(tmp_path):
    from oslo_policy import generator
    out = tmp_path / 'policy.yaml'
    generator.generate_sample(args=['--namespace', 'memmut',
                                    '--output-file', str(out)])
    with open(os.path.join(ROOT, 'etc/memmut/policy.yaml.sample')) as f:
        assert out.read_text() == f.read(), 'run "tox -e genpolicy"'


def test_wsgi_config_files_from_environment():
    assert wsgi_api.config_files({}) is None
    files = wsgi_api.config_files(
        {'OS_MEMMUT_CONFIG_FILES': '/a.conf; /b.conf'})
    assert files == ['/a.conf', '/b.conf']
    assert wsgi_api.config_files({'OS_MEMMUT_CONFIG_DIR': '/etc/x'}) == [
        '/etc/x/memmut.conf']
