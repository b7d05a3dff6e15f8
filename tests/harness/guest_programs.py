"""Real programs from the host's Debian packages, carried into the test
guest (issue 13).

The guest has busybox and no libc of its own: :func:`extras` copies a
program's binaries and every shared library they load (as ``ldd``
resolves them, at the same paths) into the initramfs, so the guest's
dynamic loader finds them where the host's would. tests/harness/redis.py
and tests/harness/sqlite.py are the programs; the guest's /init runs them
from the kernel command line.
"""

import os
import re
import shutil
import subprocess

from tests.harness import image


class ProgramMissing(image.ImageError):
    """A program the image should carry is not installed on the host."""


def libraries(binary):
    """The shared libraries ``binary`` loads, as ldd resolves them."""
    out = subprocess.run(['ldd', binary], capture_output=True, text=True,
                         check=True).stdout
    libs = []
    for line in out.splitlines():
        m = re.search(r'(/\S+) \(0x', line)
        if m:
            libs.append(m.group(1))
    return libs


def extras(guest_dir, binaries, packages):
    """(guest path, host path, mode) of ``binaries`` ({name in the guest:
    command on the host}) under ``guest_dir`` and of their libraries;
    raises ProgramMissing naming ``packages`` to install."""
    found = {}
    for guest_name, host_name in binaries.items():
        path = shutil.which(host_name)
        if path is None:
            raise ProgramMissing('%s not found: apt-get install %s '
                                 '(tools/test-setup.sh)'
                                 % (host_name, packages))
        # copy the file, keep the name: redis-server is a symlink to
        # redis-check-rdb, which picks its role from argv[0]
        found[guest_name] = os.path.realpath(path)
    out = []
    libs = set()
    for guest_name, path in sorted(found.items()):
        out.append((guest_dir + '/' + guest_name, path, 0o755))
        libs.update(libraries(path))
    for lib in sorted(libs):
        out.append((lib, os.path.realpath(lib), 0o755))
    return tuple(out)


def program_image(extras_of, cache_dir=None):
    """The harness image with a program's extras (a GuestImage)."""
    cache_dir = cache_dir or os.environ.get('MEMMUT_TEST_CACHE',
                                            image.DEFAULT_CACHE)
    return image.build_image(cache_dir, extras=extras_of())
