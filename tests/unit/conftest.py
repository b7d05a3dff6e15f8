import pytest
from oslo_config import cfg

from memmut import conf as memmut_conf
from memmut import rpc


@pytest.fixture
def conf():
    """A private, fully registered ConfigOpts (no files, no argv)."""
    c = cfg.ConfigOpts()
    memmut_conf.register_opts(c)
    rpc.set_defaults(c)
    c([], project='memmut', default_config_files=[])
    c.set_override('host', 'node1')
    yield c
    c.reset()


class FakeClock:
    def __init__(self, t=1000.0):
        self.t = t

    def __call__(self):
        return self.t

    def advance(self, dt):
        self.t += dt


@pytest.fixture
def clock():
    return FakeClock()
