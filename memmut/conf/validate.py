"""Configuration checked once, at start: every memmut option read and
bounded, plus the checks that span options.

oslo.config validates a value when it is first read; a bad one read first
by a worker thread would kill that thread while the process runs on. The
services therefore read every option here before starting anything, and
exit with one clear line on the first problems instead of a traceback.
"""

from oslo_config import cfg

from memmut.conf import opts as opts_mod


def _cross_checks(conf):
    b = conf.badis
    if conf.mutualization.guaranteed_headroom_kb > max(
            b.headroom_kb, 0) and b.headroom_fraction == 0:
        yield ('[mutualization] guaranteed_headroom_kb (%d) is more than '
               'the whole headroom ([badis] headroom_kb = %d)'
               % (conf.mutualization.guaranteed_headroom_kb, b.headroom_kb))


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
                found.append('[%s] %s: %s%s' % (
                    name, opt.dest, reason[:1].lower() + reason[1:],
                    ' (in %s)' % where if where else ''))
    if not found:
        found.extend(_cross_checks(conf))
    return found
