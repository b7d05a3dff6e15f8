"""All memmut configuration options, registered in one place.

Each group lives in its own module with ``list_opts``;
:mod:`memmut.conf.opts` gathers them for oslo-config-generator and for
:func:`register_opts`.
"""

from oslo_config import cfg

from memmut.conf import opts

CONF = cfg.CONF


def register_opts(conf):
    for group, group_opts in opts.list_opts():
        name = None
        if group is not None and group != 'DEFAULT':
            # A fresh OptGroup per ConfigOpts: oslo.config copies the group
            # shallowly, so sharing the module's object would share
            # overrides between ConfigOpts instances (tests, tools).
            name = getattr(group, 'name', group)
            conf.register_group(cfg.OptGroup(
                name, title=getattr(group, 'title', None),
                help=getattr(group, 'help', None)))
        conf.register_opts(group_opts, group=name)


register_opts(CONF)
