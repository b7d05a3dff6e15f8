"""memmut-api behind a real keystone, driven by the real ``openstack``
command: token validation, policy (reader / admin), validation errors in
OpenStack's format, and a dry-run consolidation round executed by a real
memmut-controller over RabbitMQ and PostgreSQL."""

import pytest
import requests

from tests.functional import api_support


@pytest.fixture(scope='module')
def cloud(keystone, postgres_server, rabbit_url, tmp_path_factory):
    c = api_support.start_cloud(keystone, postgres_server, rabbit_url,
                                tmp_path_factory.mktemp('memmut-api'))
    try:
        yield c
    finally:
        c.stop()
        # leave keystone as a fresh one (the devstack plugin test
        # registers memmut again)
        admin = keystone.admin()
        for svc in admin.services.list():
            if svc.type == 'memmut':
                admin.services.delete(svc)
        for user in admin.users.list():
            if user.name == 'memmut':
                admin.users.delete(user)


def _errors(resp):
    body = resp.json()
    assert set(body) == {'errors'}, body
    err = body['errors'][0]
    assert err['status'] == resp.status_code
    assert err['title'] and err['detail'] and err['code'].startswith(
        'memmut.')
    return err


def test_version_document_needs_no_token(cloud):
    resp = requests.get(cloud.url + '/', timeout=10)
    assert resp.status_code == 200
    version = resp.json()['versions'][0]
    assert (version['min_version'], version['max_version']) == ('1.0', '1.5')
    assert resp.headers['OpenStack-API-Version'] == 'memmut 1.0'
    assert resp.headers['x-openstack-request-id'].startswith('req-')


def test_reader_lists_hosts_and_vms_through_the_cli(cloud):
    hosts = cloud.cli('host', 'list', user='alice', project='demo')
    assert [h['Name'] for h in hosts] == [api_support.NODE]
    assert hosts[0]['Lent KiB'] == 256 << 10
    assert hosts[0]['Sampling back-ends'] == ['badis/page_idle+memstore']
    vms = cloud.cli('vm', 'list', '--host', api_support.NODE, user='alice',
                    project='demo')
    assert sorted(v['UUID'] for v in vms) == api_support.VM_UUIDS
    vm = cloud.cli('vm', 'show', api_support.VM_UUIDS[1], '--history',
                   user='alice', project='demo')
    assert vm['role'] == 'client' and vm['borrowed_kb'] == 256 << 10
    # microversion 1.3: a day ago's polls as two rolled-up intervals
    assert [h['kind'] for h in vm['history']] == [
        'rollup', 'rollup', 'sample', 'sample']
    assert [h['samples'] for h in vm['history'][:2]] == [5, 5]
    vm = cloud.cli('vm', 'show', api_support.VM_UUIDS[1], '--history',
                   '--history-kind', 'sample', user='alice', project='demo')
    assert len(vm['history']) == 2
    assert (vm['wss_max_avg_kb'], vm['badis_mode']) == (950 << 10, 'VG')
    assert cloud.cli('allocation', 'list', user='alice',
                     project='demo') == []


def test_reader_cannot_create_a_round(cloud):
    proc = cloud.cli('round', 'create', '--dry-run', user='alice',
                     project='demo', check=False)
    assert proc.returncode != 0
    assert 'HTTP 403' in proc.stderr, proc.stderr
    assert 'memmut:round:create' in proc.stderr


def test_admin_runs_a_dry_run_round_and_waits(cloud):
    # the host is up: it reported less than host_down_after (60 s) ago,
    # whatever the tests before took
    api_support.report_now(cloud.db_url)
    rnd = cloud.cli('round', 'create', '--dry-run', '--wait')
    assert rnd['dry_run'] is True
    assert rnd['status'] == 'completed', cloud.logs()
    assert rnd['reason'].startswith('dry run:')
    shown = cloud.cli('round', 'show', str(rnd['id']), user='alice',
                      project='demo')
    assert shown['id'] == rnd['id'] and shown['summary']['hosts'] == 1
    listed = cloud.cli('round', 'list', '--dry-run')
    assert rnd['id'] in [r['ID'] for r in listed]


def test_bad_input_is_a_400_in_openstack_format(cloud):
    session = cloud.keystone.session()
    ep = {'service_type': 'memmut', 'interface': 'public'}
    for method, path, body, needle in [
            ('POST', '/rounds', {'dry_run': True, 'hosts': []}, 'hosts'),
            ('POST', '/rounds', {'dry_run': 'yes'}, 'boolean'),
            ('GET', '/vms?limit=1000000', None, 'maximum'),
            ('GET', '/vms?limit=ten', None, 'integer'),
            ('GET', '/hosts?color=blue', None, 'color')]:
        resp = session.request(path, method, json=body, endpoint_filter=ep,
                               raise_exc=False)
        assert resp.status_code == 400, (path, resp.text)
        assert needle in _errors(resp)['detail']
    proc = cloud.cli('vm', 'list', '--limit', '1000000', check=False)
    assert proc.returncode != 0 and 'HTTP 400' in proc.stderr, proc.stderr


def test_missing_invalid_or_revoked_token_is_a_401(cloud):
    resp = requests.get(cloud.url + '/hosts', timeout=10)
    assert resp.status_code == 401
    assert _errors(resp)['code'] == 'memmut.unauthorized'
    assert 'www-authenticate' in {k.lower() for k in resp.headers}
    resp = requests.get(cloud.url + '/hosts', timeout=10,
                        headers={'X-Auth-Token': 'gAAAAAbogus'})
    assert resp.status_code == 401
    session = cloud.keystone.session('alice', project='demo')
    token = session.get_token()
    resp = requests.get(cloud.url + '/hosts', timeout=10,
                        headers={'X-Auth-Token': token})
    assert resp.status_code == 200
    cloud.keystone.admin().tokens.revoke_token(token)
    resp = requests.get(cloud.url + '/hosts', timeout=10,
                        headers={'X-Auth-Token': token})
    assert resp.status_code == 401
    # the CLI says so too
    no_auth = {k: None for k in cloud.keystone.cli_env()
               if k.startswith('OS_')}
    no_auth.update(OS_AUTH_TYPE='none', OS_ENDPOINT=cloud.url)
    proc = cloud.cli('host', 'list', check=False, extra_env=no_auth)
    assert proc.returncode != 0 and 'HTTP 401' in proc.stderr, proc.stderr
