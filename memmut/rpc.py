"""oslo.messaging plumbing shared by the agent and the controller.

The embedded default is the in-process ``fake://`` transport, which only
connects services living in one process (``memmut-demo``, unit tests). Real
deployments set ``[DEFAULT] transport_url = rabbit://...``.
"""

import importlib

import oslo_messaging as messaging
from oslo_messaging import opts as msg_opts

EMBEDDED_TRANSPORT_URL = 'fake://'


def set_defaults(conf):
    """Register oslo.messaging's options on ``conf`` and our defaults."""
    # The library registers its own options lazily on the first transport;
    # registering them up front lets us set defaults and lets a private
    # ConfigOpts (tests) work like the global one. Defaults first: the
    # library re-registers its own option objects later, and oslo.config
    # accepts that only if they equal ours, defaults included.
    set_library_defaults()
    for group, opts in msg_opts.list_opts():
        conf.register_opts(opts, group=group)
    # oslo.messaging registers its tracing and metrics options on the global
    # CONF only, yet reads them from whatever ConfigOpts the transport got
    # (its own ConfFixture imports them the same way).
    for module, name in (('_tracing.client', 'oslo_messaging_tracing'),
                         ('_metrics.client', 'oslo_messaging_metrics')):
        try:
            mod = importlib.import_module('oslo_messaging.' + module)
            conf.register_opts(getattr(mod, name), group=name)
        except (ImportError, AttributeError):
            pass
    # Not in the generated sample (it is oslo.messaging's option); the
    # services refuse it, see service.require_real_transport.
    conf.set_default('transport_url', EMBEDDED_TRANSPORT_URL)


def set_library_defaults():
    """memmut's defaults for oslo.messaging's own options.

    Also the ``oslo.config.opts.defaults`` hook, so the generated sample
    shows the defaults the services really use.
    """
    messaging.set_transport_defaults(control_exchange='memmut')


def is_embedded(conf):
    return (conf.transport_url or '').startswith('fake:')


def get_transport(conf):
    return messaging.get_rpc_transport(conf)


def get_client(transport, topic, version, server=None, timeout=None):
    target = messaging.Target(topic=topic, version=version, server=server)
    return messaging.get_rpc_client(transport, target, timeout=timeout)


def get_server(transport, topic, server, endpoints):
    """A threaded RPC server (the library's default executor, not eventlet:
    passing ``executor`` explicitly is deprecated)."""
    target = messaging.Target(topic=topic, server=server)
    return messaging.get_rpc_server(transport, target, endpoints)
