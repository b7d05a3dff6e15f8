"""The page-fault latency a guest sees: ``faultlat`` in the test guest.

tests/harness/guest/faultlat.c, built static like memwork and carried in
the initramfs as ``/opt/faultlat/faultlat`` (an image extra); the guest's
/init runs it when the kernel command line has
``memmut.run=/opt/faultlat/faultlat``. It fills a region larger than the
guest can keep resident, then times random page touches; its result line
gives percentiles of all touches and of the major faults among them
(see the C file). :func:`parse_result` reads that line.
"""

import hashlib
import os
import subprocess

from tests.harness import guest as guestmod
from tests.harness import image

SOURCE = os.path.join(image.GUEST_DIR, 'faultlat.c')
GUEST_PATH = '/opt/faultlat/faultlat'


def build(cache_dir):
    """The static binary, compiled once per source (cached by hash)."""
    with open(SOURCE, 'rb') as f:
        key = hashlib.sha256(f.read()).hexdigest()[:16]
    out = os.path.join(cache_dir, 'faultlat-%s' % key)
    if not os.path.isfile(out):
        os.makedirs(cache_dir, exist_ok=True)
        tmp = out + '.%d' % os.getpid()
        res = subprocess.run(['gcc', '-static', '-O2', '-Wall', '-s', '-o',
                              tmp, SOURCE], capture_output=True, text=True)
        if res.returncode:
            raise image.ImageError('building faultlat failed (static glibc '
                                   'comes with libc6-dev):\n' + res.stderr)
        os.rename(tmp, out)
    return out


def faultlat_image(cache_dir=None):
    """The harness image with faultlat (a GuestImage)."""
    cache_dir = cache_dir or os.environ.get('MEMMUT_TEST_CACHE',
                                            image.DEFAULT_CACHE)
    binary = build(cache_dir)
    return image.build_image(cache_dir,
                             extras=((GUEST_PATH, binary, 0o755),))


def cmdline(mib, seconds, cluster=0, seed=1, poweroff=True):
    """Kernel command line words that run faultlat."""
    words = ['memmut.run=' + GUEST_PATH, 'faultlat.mib=%d' % mib,
             'faultlat.seconds=%g' % seconds, 'faultlat.cluster=%d' % cluster,
             'faultlat.seed=%d' % seed]
    if poweroff:
        words.append('memwork.poweroff=1')
    return ' '.join(words)


def parse_result(text):
    """The fields of faultlat's lines in a console log, by event:
    ``{'start': {...}, 'fill': {...}, 'result': {...}}`` (numbers as
    int or float); raises ValueError without a result line."""
    out = {}
    for d in guestmod.parse_lines(text, 'FAULTLAT'):
        out[d['event']] = d
    if 'result' not in out:
        raise ValueError('no FAULTLAT result line')
    return out
