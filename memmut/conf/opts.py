"""Entry point for oslo-config-generator (``oslo.config.opts = memmut``)."""

import collections

from memmut.conf import agent
from memmut.conf import api
from memmut.conf import badis
from memmut.conf import consolidation
from memmut.conf import controller
from memmut.conf import database
from memmut.conf import default
from memmut.conf import demo
from memmut.conf import libvirt
from memmut.conf import memstore
from memmut.conf import mutualization
from memmut.conf import nova
from memmut.conf import placement
from memmut.conf import simulated_hypervisor
from memmut.conf import simulator

MODULES = (default, agent, controller, database, libvirt,
           simulated_hypervisor, demo, badis, mutualization, consolidation,
           simulator, memstore, nova, api, placement)


def list_opts():
    grouped = collections.OrderedDict()
    for module in MODULES:
        for group, opts in module.list_opts().items():
            grouped.setdefault(group, []).extend(opts)
    return list(grouped.items())
