"""The ``kmod`` back-end: memmut's kernel helper, /dev/memmut_wss.

The memmut-wss module (``kmod/memmut_wss``, doc/source/kmod.rst) tests and
clears the accessed state of chosen pages of a process: the host PTE (or
huge PMD) and, when the process has an MMU notifier (KVM registers one
per VM), KVM's secondary page tables through ``mmu_notifier_clear_young``.
It is the back-end for KVM hosts whose kernel has neither idle page
tracking nor DAMON (Debian 12's stock kernel).

Per interval (seed 004 §2.4.3, as ``page_idle``): at :meth:`begin` a
random scan of ``n`` pages of the guest RAM mapping (the module picks one
random page in each of n equal slices and clears them), at :meth:`end` a
scan of the same pages; the accessed ones were touched meanwhile. A page
of a 2 MiB THP counts with its huge page's accessed bit.

What it can see: under TCG (domain type ``qemu``) the guest's accesses go
through QEMU's host page tables: usable without a notifier. Under KVM the
QEMU process must have an MMU notifier or the guest's accesses are
invisible: the capability says so and the VM is refused, and a scan that
reports no notifier for a ``kvm`` domain raises :class:`SamplerError`
rather than return a sample of zeros.

:class:`WssDevice` speaks ABI 1 of the device (it mirrors
``kmod/memmut_wss/memmut_wss_abi.h``; the unit tests run it against a fake
ioctl that decodes the same bytes).
"""

import ctypes
import dataclasses
import errno
import fcntl
import os
import random
import struct
import time

from memmut.agent.wss.sampling import base

DEVICE = '/dev/memmut_wss'
ABI_VERSION = 1
MAGIC = 0xE7

INFO_FORMAT = '<4I'
SCAN_FORMAT = '<IIiIQQQQ6I'
INFO_SIZE = struct.calcsize(INFO_FORMAT)     # 16
SCAN_SIZE = struct.calcsize(SCAN_FORMAT)     # 72

F_SECONDARY_MMU = 1 << 0
F_TLB_FLUSH = 1 << 1
F_THP = 1 << 2
SCAN_RANDOM = 1 << 0
SCAN_NO_FLUSH = 1 << 1
OUT_NOTIFIERS = 1 << 0
OUT_FLUSHED = 1 << 1
P_ACCESSED = 1 << 0
P_PRESENT = 1 << 1
P_HUGE = 1 << 2
P_SECONDARY = 1 << 3
P_UNMAPPED = 1 << 4


def _ioc(direction, nr, size):
    return (direction << 30) | (size << 16) | (MAGIC << 8) | nr


IOC_INFO = _ioc(2, 1, INFO_SIZE)             # _IOR
IOC_SCAN = _ioc(3, 2, SCAN_SIZE)             # _IOWR

_ERRORS = {
    errno.ESRCH: 'no such process (or it exited during the scan)',
    errno.ENXIO: 'the range is not one sampleable mapping of the process',
    errno.EINVAL: 'invalid scan request',
    errno.E2BIG: 'too many pages for one scan',
    errno.EFAULT: 'bad buffer',
    errno.EINTR: 'interrupted',
    errno.ENOTTY: 'not a memmut-wss device (unknown ioctl)',
}


@dataclasses.dataclass(frozen=True)
class Info:
    abi_version: int
    max_pages: int
    features: int


@dataclasses.dataclass(frozen=True)
class Scan:
    addrs: tuple            # the tested page addresses
    results: bytes          # P_* per page
    done: int
    accessed: int
    present: int
    huge: int
    secondary: int
    out_flags: int

    @property
    def notifiers(self):
        return bool(self.out_flags & OUT_NOTIFIERS)


class WssDevice:
    """An open /dev/memmut_wss. ``ioctl`` and ``opener`` are for tests."""

    def __init__(self, path=DEVICE, ioctl=fcntl.ioctl, opener=os.open):
        self.path = path
        self._ioctl = ioctl
        try:
            self.fd = opener(path, os.O_RDWR | os.O_CLOEXEC)
        except OSError as e:
            if e.errno == errno.ENOENT:
                raise base.SamplerError(
                    '%s does not exist: the memmut-wss kernel module is not '
                    'loaded (doc/source/kmod.rst)' % path)
            raise base.SamplerError('cannot open %s: %s'
                                    % (path, e.strerror or e))

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def _call(self, request, buf, what):
        try:
            self._ioctl(self.fd, request, buf, True)
        except OSError as e:
            raise base.SamplerError('%s %s: %s (errno %s)' % (
                self.path, what, _ERRORS.get(e.errno, e.strerror or e),
                e.errno))

    def info(self):
        buf = bytearray(INFO_SIZE)
        self._call(IOC_INFO, buf, 'info')
        abi, max_pages, features, _ = struct.unpack(INFO_FORMAT, buf)
        return Info(abi, max_pages, features)

    def scan(self, pid, start, end, addrs=None, count=None, flush=True):
        """Test and clear pages of ``pid``: ``addrs`` (ascending page
        addresses in [start, end)) or, without them, ``count`` pages the
        module picks at random. Returns a :class:`Scan`."""
        flags = 0 if flush else SCAN_NO_FLUSH
        if addrs is None:
            flags |= SCAN_RANDOM
            arr = (ctypes.c_uint64 * count)()
        else:
            count = len(addrs)
            arr = (ctypes.c_uint64 * count)(*addrs)
        res = (ctypes.c_uint8 * count)()
        buf = bytearray(struct.pack(
            SCAN_FORMAT, SCAN_SIZE, flags, pid, count, start, end,
            ctypes.addressof(arr), ctypes.addressof(res), 0, 0, 0, 0, 0, 0))
        self._call(IOC_SCAN, buf, 'scan of pid %s' % pid)
        out = struct.unpack(SCAN_FORMAT, buf)
        return Scan(addrs=tuple(arr), results=bytes(res), done=out[8],
                    accessed=out[9], present=out[10], huge=out[11],
                    secondary=out[12], out_flags=out[13])


class KmodSampler(base.Sampler):
    name = 'kmod'
    # After smaps (exact, but TCG only), before page_idle: on a KVM host the
    # first back-end that sees the guest.
    auto_rank = 20

    @classmethod
    def from_conf(cls, conf, driver):
        return cls(pages=conf.badis.sample_pages)

    def __init__(self, pages=100, proc_root='/proc', device=DEVICE,
                 device_factory=WssDevice, clock=time.monotonic, rng=None):
        self.pages = pages
        self.rng = rng or random.SystemRandom()
        self.proc_root = proc_root
        self.device_path = device
        self.device_factory = device_factory
        self.clock = clock
        self._dev = None
        self._sets = {}      # uuid -> (t0, span_kb, start, end, addrs)
        self._seen = {}      # uuid -> addresses found accessed (peek)
        self._short = {}     # the short-cycle set, as _sets
        self._huge = {}      # uuid -> main set's pages mapped huge
        self._short_seen = {}

    def _device(self):
        if self._dev is None:
            dev = self.device_factory(self.device_path)
            try:
                info = dev.info()
            except base.SamplerError:
                dev.close()
                raise
            if info.abi_version != ABI_VERSION:
                dev.close()
                raise base.SamplerError(
                    '%s speaks ABI %d, this agent ABI %d: install the '
                    'matching memmut-wss module' % (
                        self.device_path, info.abi_version, ABI_VERSION))
            self._dev = dev
            self.info = info
        return self._dev

    def _ram(self, vm, pid):
        return base.find_guest_ram(base.parse_smaps(base.read_text(
            base.proc_path(self.proc_root, pid, 'smaps'))), vm.booked_kb)

    def capability(self, vm, pid):
        if vm.domain_type not in ('qemu', 'kvm'):
            return base.Capability(
                self.name, False, 'domain type %r: the kernel helper '
                'knows QEMU processes only (qemu, kvm)' % (vm.domain_type,))
        if not pid:
            return base.Capability(self.name, False,
                                   'no QEMU process found for the VM')
        try:
            dev = self._device()
            ram = self._ram(vm, pid)
            if base.hugetlb(ram):
                return base.Capability(
                    self.name, False, 'guest RAM is on hugetlbfs pages, '
                    'which the kernel helper does not sample')
            # one page: tells whether the process has an MMU notifier
            probe = dev.scan(pid, ram.start, ram.end, count=1)
        except base.SamplerError as e:
            return base.Capability(self.name, False, str(e))
        if probe.notifiers:
            how = ('host page tables and the secondary MMU (the QEMU '
                   'process has an MMU notifier)')
        elif vm.domain_type == 'kvm':
            return base.Capability(
                self.name, False, 'secondary MMU path absent: QEMU pid %s '
                'has no MMU notifier registered, so the kernel helper '
                'would see only host page tables and none of the KVM '
                'guest\'s accesses' % pid)
        else:
            how = ('host page tables only (no MMU notifier registered: '
                   'right for TCG, where the guest\'s accesses go through '
                   'them)')
        return base.Capability(
            self.name, True, 'kernel helper ABI %d, %d random pages of the '
            '%s guest RAM mapping; %s' % (
                self.info.abi_version, self.pages,
                ram.name or 'anonymous', how))

    def _check_notifier(self, vm, scan):
        if vm.domain_type == 'kvm' and not scan.notifiers:
            raise base.SamplerError(
                'secondary MMU path absent: the QEMU process of this kvm '
                'domain has no MMU notifier, the scan saw host page tables '
                'only')

    def begin(self, vm, pid):
        ram = self._ram(vm, pid)
        npages = ram.size_kb // base.PAGE_KB
        n = min(self.pages, npages)
        dev = self._device()
        n = min(n, self.info.max_pages)
        scan = dev.scan(pid, ram.start, ram.end, count=n)
        self._check_notifier(vm, scan)
        self._seen.pop(vm.uuid, None)
        self._sets[vm.uuid] = (self.clock(), ram.size_kb, ram.start,
                               ram.end, scan.addrs)
        self._huge[vm.uuid] = [a for a, r in zip(scan.addrs, scan.results)
                               if r & P_HUGE]
        # the short set is started again after every begin
        self._short.pop(vm.uuid, None)
        self._short_seen.pop(vm.uuid, None)

    # -- the short-cycle set (short_set) ----------------------------------

    # A scan tests and clears the PTE (a huge page's PMD) of each page it
    # is given, and the secondary MMU for that page's range only: other
    # pages, outside the 2 MiB regions of the main set's huge pages, are
    # cleared independently.
    can_short = True

    def begin_short(self, vm, pid, pages):
        main = self._sets.get(vm.uuid)
        if main is None:
            raise base.SamplerError('no running interval to keep a short '
                                    'set beside')
        _, span_kb, start, end, addrs = main
        npages = (end - start) // 4096
        dev = self._device()
        chosen = [start + i * 4096 for i in base.short_pages(
            self.rng, npages, min(pages, self.info.max_pages),
            [(a - start) // 4096 for a in addrs],
            [(a - start) // 4096 for a in self._huge.get(vm.uuid, ())])]
        if not chosen:
            raise base.SamplerError('no page left outside the main set')
        scan = dev.scan(pid, start, end, addrs=chosen)
        self._check_notifier(vm, scan)
        self._short_seen.pop(vm.uuid, None)
        self._short[vm.uuid] = (self.clock(), span_kb, start, end,
                                tuple(chosen))

    def peek_short(self, vm, pid):
        started = self._short.get(vm.uuid)
        if started is None:
            return None
        return self._read(vm, pid, started, self._short_seen)

    # A scan tests and clears: a read during the interval scans the same
    # pages and keeps the union of those found accessed, which is what the
    # interval has seen so far (cost: one scan of n pages, as end()).
    can_peek = True

    def peek(self, vm, pid):
        started = self._sets.get(vm.uuid)
        if started is None:
            return None
        return self._read(vm, pid, started)

    def end(self, vm, pid):
        started = self._sets.get(vm.uuid)
        if started is None:
            return None
        try:
            return self._read(vm, pid, started)
        finally:
            self._sets.pop(vm.uuid, None)
            self._seen.pop(vm.uuid, None)

    def _read(self, vm, pid, started, seen_of=None):
        t0, span_kb, start, end, addrs = started
        scan = self._device().scan(pid, start, end, addrs=addrs)
        self._check_notifier(vm, scan)
        seen_of = self._seen if seen_of is None else seen_of
        seen = seen_of.setdefault(vm.uuid, set())
        seen.update(a for a, r in zip(scan.addrs, scan.results)
                    if r & P_ACCESSED)
        accessed = max(scan.accessed, len(seen))
        return base.AccessSample(
            backend=self.name, accessed=accessed, sampled=scan.done,
            span_kb=span_kb, interval_s=self.clock() - t0,
            huge_kb=span_kb * scan.huge // scan.done if scan.done else 0)

    def forget(self, uuid):
        self._sets.pop(uuid, None)
        self._seen.pop(uuid, None)
        self._short.pop(uuid, None)
        self._short_seen.pop(uuid, None)
        self._huge.pop(uuid, None)
