"""JSON Schemas of every request body and query string.

Query strings are text: :func:`validate_query` first converts each value
to the type its schema names (``integer``, ``number``, ``boolean``) when
it can, then validates the whole, so a wrong type is reported against the
schema like any other mistake. Repeating a parameter is an error. The API
reference (``doc/source/api-ref.rst``) is generated from these schemas by
``tools/gen-api-ref.py``; a unit test checks that it is current.
"""

import json

import jsonschema

from memmut.api import errors

MAX_LIMIT = 1000
DEFAULT_LIMIT = 100

LIMIT = {'type': 'integer', 'minimum': 1, 'maximum': MAX_LIMIT,
         'description': 'Page size, at most %d (default %d).'
                        % (MAX_LIMIT, DEFAULT_LIMIT)}
NAME = {'type': 'string', 'minLength': 1, 'maxLength': 255}
UUID = {'type': 'string',
        'pattern': '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?'
                   '[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$'}
STATE = {'type': 'string', 'minLength': 1, 'maxLength': 32}


def _query(properties):
    return {'type': 'object', 'properties': properties,
            'additionalProperties': False}


HOST_LIST = _query({
    'limit': LIMIT,
    'marker': dict(NAME, description='Name of the last host of the '
                                     'previous page.'),
    'hypervisor': dict(NAME, description='Only hosts of this hypervisor '
                                         'driver (libvirt, sim).'),
})
HOST_SHOW = _query({})

VM_LIST = _query({
    'limit': LIMIT,
    'marker': dict(UUID, description='UUID of the last VM of the previous '
                                     'page.'),
    'host': dict(NAME, description='Only VMs last seen on this host.'),
    'state': dict(STATE, description='Only VMs in this libvirt state '
                                     '(running, paused, shutoff...).'),
    'nova_instance': {'type': 'boolean',
                      'description': 'Only nova instances (true) or only '
                                     'other domains (false).'},
})
VM_SHOW = _query({})
VM_HISTORY = _query({
    'limit': LIMIT,
    'since': {'type': 'number', 'minimum': 0,
              'description': 'Only samples taken at or after this time '
                             '(seconds since the epoch; a rolled-up '
                             'interval by its newest sample).'},
    'kind': {'type': 'string', 'enum': ['sample', 'rollup'],
             'description': 'Only raw samples (sample) or only rolled-up '
                            'intervals (rollup); microversion 1.3.'},
})

ROUND_LIST = _query({
    'limit': LIMIT,
    'marker': {'type': 'integer', 'minimum': 1,
               'description': 'Id of the last round of the previous page '
                              '(rounds are listed newest first).'},
    'status': dict(STATE, description='Only rounds with this status '
                                      '(running, completed, partial, '
                                      'failed).'),
    'dry_run': {'type': 'boolean', 'description': 'Only dry runs (true) '
                                                  'or only real rounds.'},
})
ROUND_SHOW = _query({})
ROUND_CREATE_QUERY = _query({})
ROUND_CREATE = {
    'type': 'object',
    'properties': {
        'dry_run': {'type': 'boolean',
                    'description': 'Plan and record only, migrate nothing. '
                                   'Absent: the controller\'s '
                                   '[consolidation] dry_run.'},
    },
    'additionalProperties': False,
}

ALLOCATION_LIST = _query({
    'limit': LIMIT,
    'marker': dict(NAME, description='allocation_id of the last '
                                     'allocation of the previous page.'),
    'host': dict(NAME, description='Only allocations where this host is '
                                   'the client or the server.'),
    'state': dict(STATE, description='Only allocations in this state '
                                     '(requested, granted, active, '
                                     'releasing, reclaiming, released, '
                                     'refused, failed).'),
})
ALLOCATION_SHOW = _query({})


def _error(e):
    where = '/'.join(str(p) for p in e.absolute_path)
    if e.validator == 'additionalProperties':
        return e.message
    return '%s: %s' % (where or 'request', e.message)


def _coerce(value, schema):
    kind = schema.get('type')
    if kind == 'integer' and value.strip().lstrip('-').isdigit():
        return int(value)
    if kind == 'number':
        try:
            return float(value)
        except ValueError:
            return value
    if kind == 'boolean' and value.lower() in ('true', 'false', '1', '0'):
        return value.lower() in ('true', '1')
    return value


def validate_query(schema, params):
    """``params`` (a WebOb MultiDict) as a dict of typed values, or 400."""
    result = {}
    for key in params.keys():
        values = params.getall(key)
        if len(values) > 1:
            raise errors.BadRequest('query parameter %r given %d times'
                                    % (key, len(values)))
        result[key] = _coerce(values[0],
                              schema['properties'].get(key, {}))
    _validate(schema, result, 'query string')
    return result


def validate_body(schema, req):
    """The request's JSON body, validated, or 400 / 415."""
    if not req.body:
        body = {}
    else:
        if req.content_type != 'application/json':
            raise errors.UnsupportedMediaType(
                'the body must be application/json, not %r'
                % (req.content_type or 'unspecified'))
        try:
            body = json.loads(req.body)
        except ValueError as e:
            raise errors.BadRequest('malformed JSON body: %s' % e)
    _validate(schema, body, 'body')
    return body


def _validate(schema, document, what):
    validator = jsonschema.Draft202012Validator(schema)
    problems = sorted(validator.iter_errors(document),
                      key=lambda e: list(e.absolute_path))
    if problems:
        raise errors.BadRequest('invalid %s: %s' % (
            what, '; '.join(_error(e) for e in problems)))


# (method, route) -> (query schema, body schema or None): what
# tools/gen-api-ref.py documents; tests check it matches the router.
BY_ROUTE = {
    ('GET', '/hosts'): (HOST_LIST, None),
    ('GET', '/hosts/{name}'): (HOST_SHOW, None),
    ('GET', '/vms'): (VM_LIST, None),
    ('GET', '/vms/{uuid}'): (VM_SHOW, None),
    ('GET', '/vms/{uuid}/history'): (VM_HISTORY, None),
    ('GET', '/rounds'): (ROUND_LIST, None),
    ('POST', '/rounds'): (ROUND_CREATE_QUERY, ROUND_CREATE),
    ('GET', '/rounds/{round_id}'): (ROUND_SHOW, None),
    ('GET', '/allocations'): (ALLOCATION_LIST, None),
    ('GET', '/allocations/{allocation_id}'): (ALLOCATION_SHOW, None),
}
