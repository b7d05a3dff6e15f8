"""The test bed a benchmark runs on: the guest image, a private libvirtd
and a guest factory, as the functional tests' fixtures set them up."""

import os
import tempfile

from tests.harness import fixtures
from tests.harness import image
from tests.harness import libvirtd as libvirtd_mod


def start(prefix, cache=None):
    """``(daemon, img, work_dir, factory)``; the caller stops the daemon
    and removes ``work_dir``."""
    cache = cache or os.environ.get('MEMMUT_TEST_CACHE', image.DEFAULT_CACHE)
    img = image.build_image(cache)
    daemon = libvirtd_mod.PrivateLibvirtd(
        cache_dir=os.path.join(cache, 'libvirt-cache'))
    daemon.start()
    work = tempfile.mkdtemp(prefix=prefix)
    return daemon, img, work, fixtures.GuestFactory(daemon, img, work)
