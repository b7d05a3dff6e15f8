import os
import shutil
import tempfile

import pytest

from tests.harness import memstore as process


@pytest.fixture(scope='session')
def memstore_binary():
    """The memmut-memstore binary, built from memstore/ if missing."""
    try:
        return process.find_binary()
    except process.MemstoreNotFound:
        pass
    try:
        return process.build()
    except (process.MemstoreNotFound, OSError) as e:
        if os.environ.get('CI') == 'true':
            pytest.fail('cannot build memmut-memstore: %s' % e)
        pytest.skip('memmut-memstore unavailable: %s' % e)


@pytest.fixture
def short_dir():
    # unix socket paths are limited to 107 bytes: not under tmp_path
    d = tempfile.mkdtemp(prefix='ms', dir='/tmp')
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def memstore(memstore_binary, short_dir):
    """A running memmut-memstore (process.MemstoreProcess) with 1-page
    histogram buckets, stopped after the test."""
    p = process.MemstoreProcess(memstore_binary,
                                os.path.join(short_dir, 'state'),
                                short_dir, host_quota=64 << 20,
                                bucket_pages=1)
    p.start()
    yield p
    p.kill()


@pytest.fixture
def ctl(memstore):
    c = memstore.client()
    yield c
    c.close()
