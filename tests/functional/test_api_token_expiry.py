"""An expired token is refused by memmut-api (401), against a keystone of
its own whose tokens live a few seconds: the shared keystone keeps the
default hour, so the other API tests' tokens are not cut short."""

import time

import pytest
import requests

from tests.functional import api_support
from tests.harness import keystone as ks

LIFETIME = 8            # seconds: keystone's [token] expiration here


@pytest.fixture(scope='module')
def short_cloud(postgres_server, rabbit_url, tmp_path_factory):
    keystone = ks.Keystone(token_expiration=LIFETIME)
    cloud = None
    try:
        keystone.start()
        cloud = api_support.start_cloud(
            keystone, postgres_server, rabbit_url,
            tmp_path_factory.mktemp('memmut-api-expiry'))
        yield cloud
    finally:
        if cloud is not None:
            cloud.stop()
        keystone.stop()


def test_an_expired_token_is_a_401(short_cloud):
    session = short_cloud.keystone.session('alice', project='demo')
    access = session.auth.get_access(session)
    token = access.auth_token
    headers = {'X-Auth-Token': token}
    resp = requests.get(short_cloud.url + '/hosts', timeout=10,
                        headers=headers)
    assert resp.status_code == 200, resp.text
    assert [h['name'] for h in resp.json()['hosts']] == [api_support.NODE]

    # wait the token out (keystone's clock is this machine's)
    remaining = access.expires.timestamp() - time.time()
    assert 0 < remaining <= LIFETIME + 1, remaining
    time.sleep(remaining + 1.5)

    resp = requests.get(short_cloud.url + '/hosts', timeout=10,
                        headers=headers)
    assert resp.status_code == 401, resp.text
    err = resp.json()['errors'][0]
    assert err['code'] == 'memmut.unauthorized' and err['status'] == 401
    assert 'www-authenticate' in {k.lower() for k in resp.headers}

    # a fresh token of the same user is accepted again: the 401 was the
    # expiry, not the user, the service's own (re-issued) token or policy
    fresh = short_cloud.keystone.session('alice', project='demo')
    resp = requests.get(short_cloud.url + '/hosts', timeout=10,
                        headers={'X-Auth-Token': fresh.get_token()})
    assert resp.status_code == 200, resp.text
