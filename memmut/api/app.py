"""memmut-api's WSGI stack (outermost first)::

    RequestId            x-openstack-request-id (oslo.middleware)
    HTTPProxyToWSGI      honour X-Forwarded-* from a TLS proxy
    CORS                 when [cors] allowed_origin is set
    Dispatch             /healthcheck (oslo.middleware, no token) and
                         / (the version document, public as in every
                         OpenStack API) go around auth_token
    FaultWrapper         every error in OpenStack's format
    auth_token           keystonemiddleware
    API                  context, microversion, route, policy, handler

:func:`build_app` assembles it from a ConfigOpts; ``memmut.wsgi.api``
serves it (:mod:`memmut.api.deploy`).
"""

import json
import threading
import time

from keystonemiddleware import auth_token
from oslo_context import context as oslo_context
from oslo_log import log as logging
from oslo_middleware import cors
from oslo_middleware import healthcheck
from oslo_middleware import http_proxy_to_wsgi
from oslo_middleware import request_id
import routes
import webob

from memmut.api import errors
from memmut.api import handlers
from memmut.api import microversion
from memmut.api import policy
from memmut.db import api as db_api

LOG = logging.getLogger(__name__)

ANY_SEGMENT = '[^/]+'

ROUTES = [
    ('/hosts', {'GET': handlers.host_list}),
    ('/hosts/{name}', {'GET': handlers.host_show}),
    ('/vms', {'GET': handlers.vm_list}),
    ('/vms/{uuid}', {'GET': handlers.vm_show}),
    ('/vms/{uuid}/history', {'GET': handlers.vm_history}),
    ('/rounds', {'GET': handlers.round_list,
                 'POST': handlers.round_create}),
    ('/rounds/{round_id}', {'GET': handlers.round_show}),
    ('/allocations', {'GET': handlers.allocation_list}),
    ('/allocations/{allocation_id}', {'GET': handlers.allocation_show}),
]


def version_document(req):
    return {'versions': [{
        'id': 'v%s' % str(microversion.MIN_VERSION),
        'status': 'CURRENT',
        'min_version': str(microversion.MIN_VERSION),
        'max_version': str(microversion.MAX_VERSION),
        'links': [{'rel': 'self', 'href': req.application_url + '/'}],
    }]}


class RPCRoundStarter:
    """Asks memmut-controller over RPC to start a round (see
    :meth:`memmut.globals.manager.ControllerManager.start_round`)."""

    def __init__(self, conf, controller_api=None):
        self.conf = conf
        self._api = controller_api
        self._lock = threading.Lock()

    def __call__(self, dry_run):
        import oslo_messaging as messaging
        from memmut.globals import rpcapi
        from memmut import rpc
        with self._lock:
            if self._api is None:
                self._api = rpcapi.ControllerAPI(
                    rpc.get_transport(self.conf), self.conf)
        try:
            reply = self._api.start_round(
                dry_run, timeout=self.conf.api.round_start_timeout)
        except messaging.MessagingTimeout:
            raise errors.ServiceUnavailable(
                'memmut-controller did not answer within %d s; is it '
                'running?' % self.conf.api.round_start_timeout)
        except messaging.MessagingException as e:
            raise errors.ServiceUnavailable(
                'cannot reach memmut-controller: %s' % e)
        if reply.get('round_id') is None:
            raise errors.Conflict('consolidation round not started: %s'
                                  % reply.get('reason', 'unknown reason'),
                                  code='memmut.round_busy'
                                  if reply.get('busy') else None)
        return reply['round_id']


class API:
    """The innermost application: context, microversion, routing."""

    def __init__(self, conf, db, start_round):
        self.conf = conf
        self.db = db
        self.start_round = start_round
        self.mapper = routes.Mapper()
        self.methods = {}
        for path, methods in ROUTES:
            names = [p[1:-1] for p in path.split('/')
                     if p.startswith('{')]
            self.methods[path] = methods
            self.mapper.connect(path, route=path,
                                requirements={n: ANY_SEGMENT
                                              for n in names})

    def __call__(self, environ, start_response):
        req = webob.Request(environ)
        t0 = time.monotonic()
        try:
            resp = self._handle(req)
        except errors.ApiError as e:
            resp = errors.error_response(environ, e.status, e.detail,
                                         e.code, e.headers)
        if getattr(req, 'microversion', None) is not None:
            resp.headers[microversion.HEADER] = microversion.header_value(
                req.microversion)
        resp.headers['Vary'] = microversion.HEADER
        LOG.info('%s %s -> %s (%.3f s)', req.method, req.path_qs,
                 resp.status_int, time.monotonic() - t0)
        return resp(environ, start_response)

    def _handle(self, req):
        req.app = self
        req.microversion = microversion.from_headers(req.headers)
        path = req.path_info.rstrip('/') or '/'
        if path == '/':
            if req.method not in ('GET', 'HEAD'):
                raise errors.MethodNotAllowed('%s is not allowed on /'
                                              % req.method,
                                              headers={'Allow': 'GET'})
            return self._json(200, version_document(req))
        match = self.mapper.match(path)
        if match is None:
            raise errors.NotFound('no resource at %s' % req.path_info)
        methods = self.methods[match.pop('route')]
        handler = methods.get(req.method)
        if handler is None:
            raise errors.MethodNotAllowed(
                '%s is not allowed on %s' % (req.method, req.path_info),
                headers={'Allow': ', '.join(sorted(methods))})
        req.context = oslo_context.RequestContext.from_environ(req.environ)
        result = handler(req, **match)
        status, body = result[:2]
        resp = self._json(status, body)
        for k, v in (result[2] if len(result) > 2 else {}).items():
            resp.headers[k] = v
        return resp

    @staticmethod
    def _json(status, body):
        resp = webob.Response(status=status, content_type='application/json',
                              charset='utf-8')
        resp.body = json.dumps(body).encode()
        return resp


class Dispatch:
    """Send the paths in ``by_path`` to their own applications (the
    public version document, the health check), the rest to ``default``.
    """

    def __init__(self, default, by_path):
        self.default = default
        self.by_path = by_path

    def __call__(self, environ, start_response):
        app = self.by_path.get(environ.get('PATH_INFO') or '/',
                               self.default)
        return app(environ, start_response)


def build_app(conf, db=None, start_round=None):
    """The whole stack for ``conf`` (a parsed ConfigOpts)."""
    if db is None:
        db = db_api.Database(conf.database.connection,
                             debug=conf.database.connection_debug)
    policy.get_enforcer(conf)
    api = API(conf, db, start_round or RPCRoundStarter(conf))
    app = api
    if conf.api.auth_strategy == 'keystone':
        app = auth_token.AuthProtocol(api, {'oslo_config_config': conf})
    app = Dispatch(errors.FaultWrapper(app), {
        '/': errors.FaultWrapper(api),
        '/healthcheck': healthcheck.Healthcheck(None, conf)})
    if conf.cors.allowed_origin:
        app = cors.CORS(app, conf)
    app = http_proxy_to_wsgi.HTTPProxyToWSGI(app, conf)
    app = request_id.RequestId(app)
    return app
