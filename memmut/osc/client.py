"""A thin client of memmut-api: a keystoneauth adapter, the service type
``memmut`` and its microversion header, errors as one line."""

import json

from keystoneauth1 import adapter
from keystoneauth1 import exceptions as ks_exc
from osc_lib import exceptions

SERVICE_TYPE = 'memmut'
# The newest microversion this client understands (memmut.api.microversion).
MICROVERSION = '1.5'


def error_message(response):
    """One line from an OpenStack error body (or whatever came back)."""
    detail = None
    try:
        body = response.json()
    except (ValueError, AttributeError):
        body = None
    if isinstance(body, dict) and body.get('errors'):
        err = body['errors'][0]
        detail = err.get('detail') or err.get('title')
        rid = err.get('request_id')
        if rid:
            detail = '%s (request %s)' % (detail, rid)
    elif isinstance(body, dict) and isinstance(body.get('error'), dict):
        detail = body['error'].get('message')
    if not detail:
        detail = (getattr(response, 'text', '') or '').strip()[:200]
    return 'HTTP %s %s: %s' % (response.status_code,
                               getattr(response, 'reason', '') or '',
                               detail)


class Client:
    def __init__(self, session, region_name=None, interface=None,
                 endpoint_override=None, microversion=MICROVERSION):
        self.adapter = adapter.Adapter(
            session, service_type=SERVICE_TYPE, region_name=region_name,
            interface=interface, endpoint_override=endpoint_override or None,
            default_microversion=microversion)

    def _request(self, method, path, **kwargs):
        try:
            resp = self.adapter.request(path, method, raise_exc=False,
                                        **kwargs)
        except ks_exc.EndpointNotFound:
            raise exceptions.CommandError(
                'no memmut endpoint in the catalog (service type %r); is '
                'memmut-api registered in keystone?' % SERVICE_TYPE)
        except ks_exc.ConnectFailure as e:
            raise exceptions.CommandError('cannot reach memmut-api: %s' % e)
        if resp.status_code >= 400:
            raise exceptions.CommandError(error_message(resp))
        return resp.json() if resp.content else {}

    def get(self, path, params=None):
        return self._request('GET', path, params={
            k: (str(v).lower() if isinstance(v, bool) else v)
            for k, v in (params or {}).items() if v is not None})

    def post(self, path, body):
        return self._request('POST', path, data=json.dumps(body),
                             headers={'Content-Type': 'application/json'})

    def list(self, path, key, params=None, limit=None):
        """Every item of a collection, following ``next`` links unless
        ``limit`` asks for one page."""
        params = dict(params or {})
        if limit is not None:
            params['limit'] = limit
            return self.get(path, params)[key]
        items = []
        while True:
            page = self.get(path, params)
            items.extend(page[key])
            nxt = [link for link in page.get('links', [])
                   if link.get('rel') == 'next']
            if not nxt or not page[key]:
                return items
            import urllib.parse
            query = urllib.parse.urlsplit(nxt[0]['href']).query
            params = dict(urllib.parse.parse_qsl(query))

    # -- resources ------------------------------------------------------

    def hosts(self, **filters):
        limit = filters.pop('limit', None)
        return self.list('/hosts', 'hosts', filters, limit)

    def host(self, name):
        from urllib.parse import quote
        return self.get('/hosts/%s' % quote(name, safe=''))['host']

    def vms(self, **filters):
        limit = filters.pop('limit', None)
        return self.list('/vms', 'vms', filters, limit)

    def vm(self, uuid):
        return self.get('/vms/%s' % uuid)['vm']

    def vm_history(self, uuid, limit=None, since=None, kind=None):
        return self.get('/vms/%s/history' % uuid,
                        {'limit': limit, 'since': since,
                         'kind': kind})['history']

    def rounds(self, **filters):
        limit = filters.pop('limit', None)
        return self.list('/rounds', 'rounds', filters, limit)

    def round(self, round_id):
        return self.get('/rounds/%s' % round_id)['round']

    def create_round(self, dry_run=None):
        body = {} if dry_run is None else {'dry_run': dry_run}
        return self.post('/rounds', body)['round']

    def allocations(self, **filters):
        limit = filters.pop('limit', None)
        return self.list('/allocations', 'allocations', filters, limit)

    def allocation(self, allocation_id):
        return self.get('/allocations/%s' % allocation_id)['allocation']
