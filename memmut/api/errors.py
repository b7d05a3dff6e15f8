"""Errors in OpenStack's API format (the API-SIG errors guideline)::

    {"errors": [{"status": 400, "code": "memmut.invalid_input",
                 "title": "Bad Request", "detail": "...",
                 "request_id": "req-..."}]}

Handlers raise :class:`ApiError` (or a subclass); :class:`FaultWrapper`
renders it, turns any other exception into a 500 with the same body, and
rewrites the errors that come from keystonemiddleware (its own
``{"error": {...}}`` body) so that a client sees one format.
"""

import http.client
import json

from oslo_log import log as logging
import webob

LOG = logging.getLogger(__name__)

REQUEST_ID_KEY = 'openstack.request_id'


class ApiError(Exception):
    status = 500
    code = 'memmut.error'

    def __init__(self, detail, code=None, headers=None):
        super().__init__(detail)
        self.detail = detail
        if code:
            self.code = code
        self.headers = headers or {}


class BadRequest(ApiError):
    status = 400
    code = 'memmut.invalid_input'


class Forbidden(ApiError):
    status = 403
    code = 'memmut.forbidden'


class NotFound(ApiError):
    status = 404
    code = 'memmut.not_found'


class MethodNotAllowed(ApiError):
    status = 405
    code = 'memmut.method_not_allowed'


class NotAcceptable(ApiError):
    status = 406
    code = 'memmut.microversion_unsupported'


class Conflict(ApiError):
    status = 409
    code = 'memmut.conflict'


class UnsupportedMediaType(ApiError):
    status = 415
    code = 'memmut.unsupported_media_type'


class ServiceUnavailable(ApiError):
    status = 503
    code = 'memmut.service_unavailable'


def title(status):
    return http.client.responses.get(status, 'Error')


def error_body(status, detail, code, request_id=None):
    error = {'status': status, 'code': code, 'title': title(status),
             'detail': detail}
    if request_id:
        error['request_id'] = request_id
    return {'errors': [error]}


def error_response(environ, status, detail, code, headers=None):
    resp = webob.Response(status=status, content_type='application/json',
                          charset='utf-8')
    resp.body = json.dumps(error_body(
        status, detail, code, environ.get(REQUEST_ID_KEY))).encode()
    for k, v in (headers or {}).items():
        resp.headers[k] = v
    return resp


class FaultWrapper:
    """The outermost layer that knows the error format (see module doc)."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        captured = {}

        def capture(status, headers, exc_info=None):
            captured['status'] = status
            captured['headers'] = headers
            return lambda data: None   # the app returns its body instead

        try:
            body = self.application(environ, capture)
            body = b''.join(body) if not isinstance(body, bytes) else body
        except ApiError as e:
            return error_response(environ, e.status, e.detail, e.code,
                                  e.headers)(environ, start_response)
        except Exception as e:
            LOG.exception('Unexpected error in %s %s',
                          environ.get('REQUEST_METHOD'),
                          environ.get('PATH_INFO'))
            return error_response(
                environ, 500, 'unexpected error: %s' % type(e).__name__,
                'memmut.internal_error')(environ, start_response)
        status = int(captured['status'].split()[0])
        headers = captured['headers']
        if status >= 400:
            rewritten = self._rewrite(environ, status, headers, body)
            if rewritten is not None:
                return rewritten(environ, start_response)
        start_response(captured['status'], headers)
        return [body]

    @staticmethod
    def _rewrite(environ, status, headers, body):
        """A foreign error body (auth_token's) in our format, or None."""
        try:
            doc = json.loads(body or b'null')
        except ValueError:
            doc = None
        if isinstance(doc, dict) and 'errors' in doc:
            return None
        detail = None
        if isinstance(doc, dict) and isinstance(doc.get('error'), dict):
            detail = doc['error'].get('message')
        if not detail:
            detail = body.decode('utf-8', 'replace').strip() or title(status)
        keep = {k: v for k, v in headers
                if k.lower() in ('www-authenticate', 'allow',
                                 'x-openstack-request-id')}
        code = {401: 'memmut.unauthorized'}.get(status, 'memmut.error')
        return error_response(environ, status, detail, code, keep)
