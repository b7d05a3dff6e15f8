"""A real program in the test guest: Debian's redis-server under its own
load generator, redis-benchmark (issue 13).

The guest has busybox and no libc: :func:`extras` copies the two
binaries of the host's ``redis-server`` and ``redis-tools`` packages and
every shared library they load (as ``ldd`` resolves them, at the same
paths) into the initramfs, under ``/opt/redis``. The guest's /init runs
them when the kernel command line has ``memmut.redis=SECONDS``
(tests/harness/guest/init): redis-server on the loopback, a load phase
(``SET`` of ``memmut.redis_keys`` random keys of 4 KiB values), then
``GET`` rounds of random keys until SECONDS have passed, one line per
round::

    REDIS load keys=20000 rps=1500.2 t=14.1
    REDIS get requests=5000 rps=2104.5 t=17.0
    REDIS done get_requests=60000 t=44.3
"""

import os
import re
import shutil
import subprocess

from tests.harness import image

GUEST_DIR = '/opt/redis'
BINARIES = {'redis-server': 'redis-server',
            'redis-benchmark': 'redis-benchmark'}


class RedisMissing(image.ImageError):
    """redis-server or redis-benchmark is not installed on the host."""


def _libraries(binary):
    out = subprocess.run(['ldd', binary], capture_output=True, text=True,
                         check=True).stdout
    libs = []
    for line in out.splitlines():
        m = re.search(r'(/\S+) \(0x', line)
        if m:
            libs.append(m.group(1))
    return libs


def extras():
    """(guest path, host path, mode) of the binaries and their libraries;
    raises RedisMissing with the packages to install."""
    found = {}
    for guest_name, host_name in BINARIES.items():
        path = shutil.which(host_name)
        if path is None:
            raise RedisMissing('%s not found: apt-get install redis-server '
                               'redis-tools (tools/test-setup.sh)'
                               % host_name)
        # redis-server is a symlink to redis-check-rdb, which picks its
        # role from argv[0]: copy the file, keep the name
        found[guest_name] = os.path.realpath(path)
    out = []
    libs = set()
    for guest_name, path in sorted(found.items()):
        out.append((GUEST_DIR + '/' + guest_name, path, 0o755))
        libs.update(_libraries(path))
    for lib in sorted(libs):
        out.append((lib, os.path.realpath(lib), 0o755))
    return tuple(out)


def redis_image(cache_dir=None):
    """The harness image with redis (a GuestImage)."""
    cache_dir = cache_dir or os.environ.get('MEMMUT_TEST_CACHE',
                                            image.DEFAULT_CACHE)
    return image.build_image(cache_dir, extras=extras())


def cmdline(seconds, keys=20000, poweroff=True):
    words = ['memmut.redis=%d' % seconds, 'memmut.redis_keys=%d' % keys]
    if poweroff:
        words.append('memwork.poweroff=1')
    return ' '.join(words)
