"""Helpers shared by unit and functional tests."""

import importlib.util
import os

from oslo_config import cfg

from memmut import conf as memmut_conf
from memmut import rpc


def private_conf(**groups):
    """A private, fully registered ConfigOpts (no files, no argv) with
    ``groups`` = {group: {option: value}} overridden ('DEFAULT' for the
    default group)."""
    conf = cfg.ConfigOpts()
    memmut_conf.register_opts(conf)
    rpc.set_defaults(conf)
    conf([], project='memmut', default_config_files=[])
    for group, values in groups.items():
        for k, v in values.items():
            conf.set_override(k, v, group=None if group == 'DEFAULT'
                              else group)
    return conf


def tool_module(name):
    """The script ``tools/NAME.py`` loaded as a module (tools/ is not a
    package: its scripts run by path)."""
    path = os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), 'tools', name + '.py')
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
