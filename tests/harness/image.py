"""The test guests' boot image: the host's Debian kernel + a tiny initramfs.

The initramfs holds busybox (static) with its applet links, the virtio
modules of that kernel, the guest ``/init`` and the compiled ``memwork``;
about 1.5 MB, built in a second or two and cached under a key hashed from
every input, so it is rebuilt only when one of them changes.
"""

import dataclasses
import glob
import gzip
import hashlib
import io
import lzma
import os
import re
import shutil
import stat
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GUEST_DIR = os.path.join(HERE, 'guest')
DEFAULT_CACHE = os.path.join(os.path.dirname(HERE), '.cache')

# The guest needs these; their dependencies come from modules.dep.
WANTED_MODULES = ('virtio_pci', 'virtio_balloon', 'virtio_blk')
# Bump when the image layout changes, to invalidate old cache entries.
FORMAT = '1'


class ImageError(RuntimeError):
    """A guest image input is missing or a build step failed."""


@dataclasses.dataclass(frozen=True)
class GuestImage:
    kernel: str            # path of the bzImage (used in place, not copied)
    initrd: str            # path of the cached initramfs (newc cpio, gzip)
    kernel_version: str
    memwork: str           # the static memwork binary (also runs on the host)
    key: str
    extras: tuple = ()     # (guest path, host path, mode) carried as well


# -- inputs ----------------------------------------------------------------

def find_kernel(version=None):
    """Return (vmlinuz path, version) of an installed kernel with modules.

    MEMMUT_GUEST_KERNEL (a vmlinuz path) overrides the choice; otherwise the
    newest /boot/vmlinuz-* whose /lib/modules/<version> exists is used.
    """
    override = os.environ.get('MEMMUT_GUEST_KERNEL')
    candidates = [override] if override else glob.glob('/boot/vmlinuz-*')
    found = []
    for path in candidates:
        ver = os.path.basename(path)[len('vmlinuz-'):]
        if version and ver != version:
            continue
        if os.path.isfile(path) and os.path.isfile(
                '/lib/modules/%s/modules.dep' % ver):
            found.append((_version_key(ver), path, ver))
    if not found:
        raise ImageError(
            'no guest kernel: need /boot/vmlinuz-<ver> with '
            '/lib/modules/<ver>/modules.dep (apt-get install '
            'linux-image-amd64, or set MEMMUT_GUEST_KERNEL)')
    _, path, ver = max(found)
    return path, ver


def _version_key(ver):
    return [int(x) if x.isdigit() else x for x in re.split(r'[.-]', ver)]


def module_files(version, wanted=WANTED_MODULES):
    """Module paths of ``wanted`` and their dependencies, dependencies first.

    A depth-first walk of modules.dep puts each module after everything it
    needs (e.g. virtio_ring before virtio before virtio_pci).
    """
    moddir = '/lib/modules/%s' % version
    deps = {}
    with open(os.path.join(moddir, 'modules.dep')) as f:
        for line in f:
            mod, _, rest = line.partition(':')
            deps[mod] = rest.split()
    by_name = {_mod_name(m): m for m in deps}
    order = []

    def visit(mod):
        if mod in order:
            return
        for dep in deps.get(mod, []):
            visit(dep)
        order.append(mod)

    for name in wanted:
        if name not in by_name:
            raise ImageError('kernel %s has no module %s (built in? then '
                             'drop it from WANTED_MODULES)' % (version, name))
        visit(by_name[name])
    return [os.path.join(moddir, m) for m in order]


def _mod_name(path):
    base = os.path.basename(path)
    return re.sub(r'\.ko(\.(xz|gz|zst))?$', '', base).replace('-', '_')


def _read_module(path):
    """Module contents, decompressed: busybox insmod loads plain .ko only."""
    with open(path, 'rb') as f:
        data = f.read()
    if path.endswith('.xz'):
        return lzma.decompress(data)
    if path.endswith('.gz'):
        return gzip.decompress(data)
    if path.endswith('.zst'):
        if not shutil.which('zstd'):
            raise ImageError('%s is zstd-compressed: install zstd' % path)
        return subprocess.run(['zstd', '-dc', path], check=True,
                              capture_output=True).stdout
    return data


def find_busybox():
    """A static busybox (the guest has no libc of its own)."""
    for path in ('/bin/busybox', '/usr/bin/busybox'):
        if os.path.isfile(path):
            if _elf_has_interp(path):
                raise ImageError('%s is dynamically linked: apt-get install '
                                 'busybox-static' % path)
            return path
    raise ImageError('busybox not found: apt-get install busybox-static')


def _elf_has_interp(path):
    """True if the ELF file asks for a dynamic loader (PT_INTERP)."""
    with open(path, 'rb') as f:
        hdr = f.read(64)
        if hdr[:4] != b'\x7fELF' or hdr[4] != 2:   # 64-bit ELF only here
            return False
        order = 'little' if hdr[5] == 1 else 'big'
        phoff = int.from_bytes(hdr[32:40], order)
        phentsize = int.from_bytes(hdr[54:56], order)
        phnum = int.from_bytes(hdr[56:58], order)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    return any(int.from_bytes(table[i:i + 4], order) == 3     # PT_INTERP
               for i in range(0, len(table), phentsize))


def _gcc_version():
    if not shutil.which('gcc'):
        raise ImageError('gcc not found: apt-get install gcc libc6-dev '
                         '(memwork is built with gcc -static)')
    return subprocess.run(['gcc', '--version'], check=True,
                          capture_output=True, text=True).stdout


def build_memwork(out, source=None):
    source = source or os.path.join(GUEST_DIR, 'memwork.c')
    res = subprocess.run(['gcc', '-static', '-O2', '-Wall', '-s', '-o', out,
                          source, '-lm'], capture_output=True, text=True)
    if res.returncode:
        raise ImageError('building memwork failed (static glibc comes with '
                         'libc6-dev):\n' + res.stderr)


# -- cpio (newc) -----------------------------------------------------------

class CpioWriter:
    """Minimal newc writer: what the kernel's initramfs unpacker reads."""

    def __init__(self):
        self._buf = io.BytesIO()
        self._ino = 1

    def _entry(self, name, mode, data=b'', rdev=(0, 0)):
        name = name.lstrip('/').encode() + b'\0'
        fields = [self._ino, mode, 0, 0, 1, 0, len(data), 0, 0,
                  rdev[0], rdev[1], len(name), 0]
        self._ino += 1
        self._buf.write(b'070701' + b''.join(b'%08X' % v for v in fields))
        self._buf.write(name)
        self._pad()
        self._buf.write(data)
        self._pad()

    def _pad(self):
        self._buf.write(b'\0' * (-self._buf.tell() % 4))

    def dir(self, name):
        self._entry(name, stat.S_IFDIR | 0o755)

    def file(self, name, data, mode=0o644):
        self._entry(name, stat.S_IFREG | mode, data)

    def symlink(self, name, target):
        self._entry(name, stat.S_IFLNK | 0o777, target.encode())

    def chardev(self, name, major, minor, mode=0o600):
        self._entry(name, stat.S_IFCHR | mode, rdev=(major, minor))

    def finish(self):
        self._entry('TRAILER!!!', 0)
        return self._buf.getvalue()


def _busybox_applets(busybox):
    out = subprocess.run([busybox, '--list-full'], check=True,
                         capture_output=True, text=True).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


def _initramfs(busybox, modules, init, memwork, extras=()):
    cpio = CpioWriter()
    for d in ('bin', 'sbin', 'usr', 'usr/bin', 'usr/sbin', 'dev', 'proc',
              'sys', 'etc', 'lib', 'lib/modules', 'tmp', 'run'):
        cpio.dir(d)
    # The kernel opens /dev/console for /init before devtmpfs is mounted.
    cpio.chardev('dev/console', 5, 1)
    with open(busybox, 'rb') as f:
        cpio.file('bin/busybox', f.read(), 0o755)
    for applet in _busybox_applets(busybox):
        if applet != 'bin/busybox':
            cpio.symlink(applet, '/bin/busybox')
    names = []
    for path in modules:
        names.append(_mod_name(path))
        cpio.file('lib/modules/%s.ko' % names[-1], _read_module(path))
    cpio.file('etc/memmut-modules', ('\n'.join(names) + '\n').encode())
    with open(init, 'rb') as f:
        cpio.file('init', f.read(), 0o755)
    with open(memwork, 'rb') as f:
        cpio.file('bin/memwork', f.read(), 0o755)
    made = set()
    for guest_path, host_path, mode in extras:
        parts = guest_path.strip('/').split('/')[:-1]
        for i in range(1, len(parts) + 1):
            d = '/'.join(parts[:i])
            if d not in made:
                made.add(d)
                cpio.dir(d)       # repeating an existing dir is harmless
        with open(host_path, 'rb') as f:
            cpio.file(guest_path.lstrip('/'), f.read(), mode)
    # mtime=0: the same inputs give the same bytes
    return gzip.compress(cpio.finish(), compresslevel=6, mtime=0)


# -- build with cache ---------------------------------------------------------

def build_image(cache_dir=None, kernel_version=None, extras=()):
    """Build (or reuse) the guest image; raises ImageError with a hint.

    ``extras``: further files for the initramfs, as (guest path, host
    path, mode) tuples (e.g. the memmut-wss module and its client, see
    tests/harness/kmod.py); without them the image is the same as ever.
    """
    extras = tuple(tuple(e) for e in extras)
    cache_dir = cache_dir or os.environ.get('MEMMUT_TEST_CACHE',
                                            DEFAULT_CACHE)
    kernel, version = find_kernel(kernel_version)
    busybox = find_busybox()
    modules = module_files(version)
    init = os.path.join(GUEST_DIR, 'init')
    source = os.path.join(GUEST_DIR, 'memwork.c')

    h = hashlib.sha256(FORMAT.encode())
    h.update(_gcc_version().encode())
    for path in [kernel, busybox, init, source] + modules:
        h.update(path.encode() + b'\0')
        with open(path, 'rb') as f:
            h.update(hashlib.sha256(f.read()).digest())
    for guest_path, host_path, mode in extras:
        h.update(b'extra\0%s\0%o\0' % (guest_path.encode(), mode))
        with open(host_path, 'rb') as f:
            h.update(hashlib.sha256(f.read()).digest())
    key = h.hexdigest()[:16]

    out = os.path.join(cache_dir, 'guest-' + key)
    initrd = os.path.join(out, 'initrd.gz')
    memwork = os.path.join(out, 'memwork')
    if not (os.path.isfile(initrd) and os.path.isfile(memwork)):
        os.makedirs(cache_dir, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix='.build-', dir=cache_dir)
        try:
            build_memwork(os.path.join(tmp, 'memwork'), source)
            data = _initramfs(busybox, modules, init,
                              os.path.join(tmp, 'memwork'), extras)
            with open(os.path.join(tmp, 'initrd.gz'), 'wb') as f:
                f.write(data)
            try:
                os.rename(tmp, out)      # atomic: parallel builders race
            except OSError:
                if not os.path.isfile(initrd):
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return GuestImage(kernel=kernel, initrd=initrd, kernel_version=version,
                      memwork=memwork, key=key, extras=extras)
