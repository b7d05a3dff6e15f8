"""Policy enforcement for memmut-api (rules: :mod:`memmut.api.policies`)."""

import threading

from oslo_policy import policy as oslo_policy

from memmut.api import errors
from memmut.api import policies

_ENFORCER = None
_LOCK = threading.Lock()


def get_enforcer(conf=None):
    """The enforcer (also the ``oslo.policy.enforcer`` entry point that
    ``oslopolicy-policy-generator`` and ``oslopolicy-checker`` load)."""
    global _ENFORCER
    with _LOCK:
        if _ENFORCER is None:
            if conf is None:
                from memmut import conf as memmut_conf
                conf = memmut_conf.CONF
            enforcer = oslo_policy.Enforcer(conf)
            enforcer.register_defaults(policies.list_rules())
            _ENFORCER = enforcer
        return _ENFORCER


def reset():
    global _ENFORCER
    with _LOCK:
        _ENFORCER = None


def authorize(context, rule, target=None):
    """Raise a 403 :class:`errors.Forbidden` unless ``context`` may."""
    enforcer = get_enforcer()
    try:
        enforcer.authorize(rule, target or {}, context,
                           do_raise=True, exc=errors.Forbidden,
                           detail='policy does not allow %s to be '
                                  'performed' % rule)
    except oslo_policy.InvalidScope:
        raise errors.Forbidden('policy %s is not allowed with this token\'s '
                               'scope (a project-scoped token is needed)'
                               % rule)
