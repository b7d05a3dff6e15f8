"""memmut's one plug-in mechanism: stevedore entry points.

Every swappable piece is an entry point in ``setup.cfg`` under one of the
namespaces below, and is loaded by name with :func:`load`. A third party
adds one by declaring an entry point in its own package; adding one to
memmut touches its module and ``setup.cfg`` only.
"""

import importlib.metadata

from stevedore import driver as stevedore_driver

VIRT_DRIVERS = 'memmut.virt.drivers'
SAMPLERS = 'memmut.agent.samplers'
WSS_ESTIMATORS = 'memmut.agent.wss_estimators'
BALLOON_CONTROLLERS = 'memmut.agent.balloon_controllers'
MUTUALIZATION_POLICIES = 'memmut.mutualization.policies'
CONSOLIDATION = 'memmut.consolidation.'      # + underload, overload, ...

WHAT = {
    VIRT_DRIVERS: 'hypervisor driver',
    SAMPLERS: 'access-sampling back-end',
    WSS_ESTIMATORS: 'working-set estimator',
    BALLOON_CONTROLLERS: 'balloon controller',
    MUTUALIZATION_POLICIES: 'mutualization policy',
}


class PluginError(ValueError):
    """A plug-in that is not registered or cannot be loaded; the message
    names it and the choices."""


def what(namespace):
    if namespace.startswith(CONSOLIDATION):
        return '%s algorithm' % namespace[len(CONSOLIDATION):].replace(
            '_', ' ')
    return WHAT.get(namespace, namespace)


def names(namespace):
    """The registered names of a namespace, sorted (a name whose code
    fails to import is still listed: :func:`load` says why)."""
    return sorted({ep.name for ep in
                   importlib.metadata.entry_points(group=namespace)})


def load(namespace, name):
    """The object registered as ``name`` (not called)."""
    choices = names(namespace)
    if name not in choices:
        raise PluginError('unknown %s %r (choices: %s)'
                          % (what(namespace), name,
                             ', '.join(choices) or 'none registered'))
    try:
        return stevedore_driver.DriverManager(
            namespace, name, invoke_on_load=False).driver
    except Exception as e:
        raise PluginError('%s %r is registered but cannot be loaded: %s: %s'
                          % (what(namespace), name, type(e).__name__, e))
