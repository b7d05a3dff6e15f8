import pytest

from memmut.db import api as db_api
from memmut.db import migration
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


@pytest.fixture
def db(tmp_path, clock):
    """A migrated SQLite database in a private directory."""
    url = 'sqlite:///%s' % (tmp_path / 'memmut.sqlite')
    migration.upgrade(url)
    database = db_api.Database(url, clock=clock)
    yield database
    database.close()
