"""All memmut configuration options, registered in one place.

Each group lives in its own module with ``register_opts`` and ``list_opts``;
:mod:`memmut.conf.opts` gathers them for oslo-config-generator.
"""

from oslo_config import cfg

from memmut.conf import opts

CONF = cfg.CONF


def register_opts(conf):
    for module in opts.MODULES:
        module.register_opts(conf)


register_opts(CONF)
