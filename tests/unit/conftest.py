import pytest

from tests import common


@pytest.fixture
def conf():
    """A private, fully registered ConfigOpts (no files, no argv)."""
    c = common.private_conf(DEFAULT={'host': 'node1'})
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
