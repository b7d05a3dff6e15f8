"""A real program in the test guest: Debian's redis-server under its own
load generator, redis-benchmark (issue 13).

The image carries the host's ``redis-server`` and ``redis-benchmark``
under ``/opt/redis`` (tests/harness/guest_programs.py). The guest's /init runs
them when the kernel command line has ``memmut.redis=SECONDS``
(tests/harness/guest/init): redis-server on the loopback, a load phase
(``SET`` of ``memmut.redis_keys`` random keys of 4 KiB values), then
``GET`` rounds of random keys until SECONDS have passed, one line per
round::

    REDIS load keys=20000 rps=1500.2 t=14.1
    REDIS get requests=5000 rps=2104.5 t=17.0
    REDIS done get_requests=60000 t=44.3
"""

from tests.harness import guest_programs

GUEST_DIR = '/opt/redis'
BINARIES = {'redis-server': 'redis-server',
            'redis-benchmark': 'redis-benchmark'}


def extras():
    """(guest path, host path, mode) of the binaries and their libraries;
    raises guest_programs.ProgramMissing naming the packages."""
    return guest_programs.extras(GUEST_DIR, BINARIES,
                                 'redis-server redis-tools')


def redis_image(cache_dir=None):
    """The harness image with redis (a GuestImage)."""
    return guest_programs.program_image(extras, cache_dir)


def cmdline(seconds, keys=20000, poweroff=True):
    words = ['memmut.redis=%d' % seconds, 'memmut.redis_keys=%d' % keys]
    if poweroff:
        words.append('memwork.poweroff=1')
    return ' '.join(words)
