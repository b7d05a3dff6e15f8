"""Configuration checked once, at start: every memmut option read and
bounded, plus the checks that span options.

oslo.config validates a value when it is first read; a bad one read first
by a worker thread would kill that thread while the process runs on. The
services therefore read every option here before starting anything, and
exit with one clear line on the first problems instead of a traceback.
"""

import configparser
import json

from oslo_config import cfg

from memmut.conf import opts as opts_mod


def _raw_value(where, group, name):
    """The text a config file gave an option, for the error line; None
    when it cannot be read back."""
    if not where:
        return None
    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read(where)
        return parser.get(group, name)
    except (configparser.Error, OSError, UnicodeDecodeError):
        return None


def _plugin_checks(conf):
    """Options that name a plug-in must name a registered one, and the
    consolidation algorithms' parameters must be theirs."""
    from memmut.consolidation import loader
    from memmut.consolidation import planner
    from memmut import plugins
    policy = conf.mutualization.policy
    known = plugins.names(plugins.MUTUALIZATION_POLICIES)
    if policy not in known:
        yield ('[mutualization] policy: unknown policy %r (known: %s)'
               % (policy, ', '.join(sorted(known))))
    try:
        spec = planner.PlanParams.from_conf(conf).spec
        spec.effective()
        # built once here, so that a bad value (a duration that is none)
        # stops the service at start, not at its first round
        loader.build_all(spec, conf.consolidation.interval, 0.0)
    except ValueError as e:
        yield '[consolidation] %s' % e
    from memmut.consolidation import young
    try:
        young.YoungPolicy.from_conf(conf)
    except ValueError as e:
        yield '[consolidation] young_vm_policy_parameters: %s' % e


def _cross_checks(conf):
    b = conf.badis
    if b.calibration_probe_warm_rounds == 1:
        # (a read over one round sees nothing beyond its first round)
        yield ('[badis] calibration_probe_warm_rounds: 1 reads nothing '
               'beyond one round; use 0 (off) or at least 2')
    if conf.mutualization.guaranteed_headroom_kb > max(
            b.headroom_kb, 0) and b.headroom_fraction == 0:
        yield ('[mutualization] guaranteed_headroom_kb (%d) is more than '
               'the whole headroom ([badis] headroom_kb = %d)'
               % (conf.mutualization.guaranteed_headroom_kb, b.headroom_kb))


def warnings(conf):
    """Settings that are valid but do not do what they seem to; call after
    :func:`problems` found none."""
    from memmut.consolidation import algorithm
    from memmut.consolidation import planner
    c = conf.consolidation
    length = c.history_length
    effective = planner.PlanParams.from_conf(conf).spec.effective()
    for role, option in (('overload', 'overload_detection'),
                         ('memory_overload', 'memory_overload_detection')):
        name, params = effective[role]
        if name != 'forecast_threshold' or not params.get('period'):
            continue
        period = algorithm.samples(params, 'period', c.interval)
        if period > length:
            yield ('[consolidation] %s_parameters: period %s is %d samples '
                   'of %d s, longer than history_length %d: the seasonal '
                   'part of the forecast never sees a whole period and '
                   'never fires (set history_length to at least %d)'
                   % (option, json.dumps(params['period']), period,
                      c.interval, length, period))


def problems(conf):
    """Every problem of ``conf``'s memmut options, one line each."""
    found = []
    for group, opts in opts_mod.list_opts():
        name = getattr(group, 'name', group) or 'DEFAULT'
        section = conf if name == 'DEFAULT' else getattr(conf, name)
        for opt in opts:
            try:
                getattr(section, opt.dest)
            except (cfg.Error, ValueError) as e:
                # oslo.config's message names the value's location at
                # length; keep the reason, and the file it came from.
                text = str(e)
                reason = text.split('is not valid: ', 1)[-1]
                where = text.split("detail='", 1)[-1].split("'", 1)[0] \
                    if "detail='" in text else None
                raw = _raw_value(where, name, opt.dest)
                found.append('[%s] %s: %s%s%s' % (
                    name, opt.dest, reason[:1].lower() + reason[1:],
                    ' (got %s)' % raw if raw is not None else '',
                    ' (in %s)' % where if where else ''))
    if not found:
        found.extend(_plugin_checks(conf))
        found.extend(_cross_checks(conf))
    return found
