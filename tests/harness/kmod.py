"""Guest images that carry the memmut-wss kernel helper (kmod/memmut_wss).

The module is the one DKMS built for the guest kernel's version
(``tools/build-kmod.sh``, ``tox -e kmod``); its client ``wss-probe`` is
built here, static. :func:`kmod_image` returns a
:class:`image.GuestImage` whose initramfs has both under /opt/memmut-wss;
the guest's /init loads the module with ``memmut.kmod=1`` on the kernel
command line (see tests/harness/guest/init).
"""

import glob
import os
import subprocess

from tests.harness import guest
from tests.harness import image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
KMOD_DIR = os.path.join(ROOT, 'kmod', 'memmut_wss')
PROBE_SOURCE = os.path.join(KMOD_DIR, 'tools', 'wss-probe.c')
GUEST_DIR = '/opt/memmut-wss'


class KmodMissing(image.ImageError):
    """No DKMS-built memmut_wss.ko for the guest kernel."""


def find_module(kernel_version):
    """Path of the DKMS-built memmut_wss.ko for ``kernel_version``."""
    patterns = [
        '/var/lib/dkms/memmut-wss/*/%s/*/module/memmut_wss.ko*'
        % kernel_version,
        '/lib/modules/%s/updates/dkms/memmut_wss.ko*' % kernel_version,
    ]
    for pattern in patterns:
        found = sorted(glob.glob(pattern), key=os.path.getmtime)
        if found:
            return found[-1]
    raise KmodMissing('no DKMS-built memmut_wss.ko for kernel %s: run '
                      'tools/build-kmod.sh (tox -e kmod) first'
                      % kernel_version)


def build_probe(out):
    res = subprocess.run(['gcc', '-static', '-O2', '-Wall', '-Wextra',
                          '-Werror', '-s', '-o', out, PROBE_SOURCE],
                         capture_output=True, text=True)
    if res.returncode:
        raise image.ImageError('building wss-probe failed:\n' + res.stderr)
    return out


def kmod_image(cache_dir=None, kernel_version=None):
    """The harness image plus the module and wss-probe (GuestImage)."""
    cache_dir = cache_dir or os.environ.get('MEMMUT_TEST_CACHE',
                                            image.DEFAULT_CACHE)
    _, version = image.find_kernel(kernel_version)
    ko = find_module(version)
    if not ko.endswith('.ko'):          # busybox insmod: plain .ko only
        plain = os.path.join(cache_dir, 'memmut_wss-%s.ko' % version)
        os.makedirs(cache_dir, exist_ok=True)
        with open(plain + '.tmp', 'wb') as f:
            f.write(image._read_module(ko))
        os.rename(plain + '.tmp', plain)
        ko = plain
    os.makedirs(cache_dir, exist_ok=True)
    probe = build_probe(os.path.join(cache_dir, 'wss-probe.%d' % os.getpid()))
    try:
        return image.build_image(cache_dir, version, extras=(
            (GUEST_DIR + '/memmut_wss.ko', ko, 0o644),
            (GUEST_DIR + '/wss-probe', probe, 0o755)))
    finally:
        os.unlink(probe)


def parse_wss(text):
    """KMOD-WSS lines of a console log as dicts."""
    return [d for d in guest.parse_lines(text, 'KMOD-WSS')
            if d['event'] == 'pass']


def memwork_steps(text):
    """(start, end, wss_mib) of memwork's steps, in guest uptime (the
    KMOD-MEMWORK line /init prints when it starts memwork + memwork's own
    step end times)."""
    lines = guest.parse_lines(text, 'MEMMUT-GUEST')
    t0 = [d for d in lines if d['event'] == 'KMOD-MEMWORK'][0]['uptime']
    out, begin = [], 0.0
    for d in guest.parse_lines(text, 'MEMWORK'):
        if d['event'] == 'end':
            out.append((t0 + begin, t0 + d['t'], d['wss_mib']))
            begin = d['t']
    return out


def intervals(text, map_kb, margin_s=1.0):
    """KMOD-WSS intervals of the ``map_kb`` mapping with their truth:
    (line, true_kb, step index, clean), clean when the interval lies in
    one step (``margin_s`` away from its ends). The truth of an interval
    that spans steps is the largest of their working sets (memwork's
    pages are a prefix of the mapping: the union of what it touched)."""
    steps = memwork_steps(text)
    out = []
    for w in parse_wss(text):
        if w['map_kb'] != map_kb:
            continue
        over = [(i, mib) for i, (a, b, mib) in enumerate(steps)
                if a < w['t1'] and w['t0'] < b]
        if not over:
            continue
        clean = [i for i, (a, b, _) in enumerate(steps)
                 if a + margin_s <= w['t0'] and w['t1'] <= b - margin_s]
        out.append((w, max(mib for _, mib in over) * 1024, over[0][0],
                    bool(clean)))
    return out
