"""The ``page_idle`` back-end: idle page tracking of n random guest pages.

Seed 004 §2.4.3 as written: each interval pick ``n`` random pages of the
guest's memory, clear their accessed state, and count the ``f`` pages
accessed by the end of the interval; WSS = f / n × size. Here:

1. pick ``n`` random 4 KiB pages of the guest RAM mapping of the QEMU
   process (its size is the booked memory: ballooned-out pages are in it,
   unbacked, and never accessed, so f / n × booked is the WSS);
2. translate them to page frames with ``/proc/PID/pagemap`` (needs
   CAP_SYS_ADMIN, otherwise the kernel hides frame numbers);
3. mark those frames idle in ``/sys/kernel/mm/page_idle/bitmap``;
4. at the end of the interval a frame whose idle bit was cleared was
   accessed. A page that was not backed at the start and is backed now, or
   whose frame changed, was faulted in during the interval: accessed. A
   page still unbacked was not.

Idle page tracking walks the reverse map and calls the MMU notifiers, so it
sees accesses made through KVM's secondary page tables (EPT/NPT) as well as
under TCG; it works for anonymous and memfd/shmem-backed RAM alike.

Huge pages: the kernel tracks idleness per folio and ignores tail frames
(reads report them "not idle", writes are dropped), so each sampled page in
a transparent huge page is tracked through its head frame, found in
``/proc/kpageflags``. An access to any 4 KiB of a huge page then counts the
sampled page as accessed, the same 2 MiB granularity the hardware gives.
hugetlbfs pages are not tracked at all: refused.
"""

import os
import random
import struct
import time

from memmut.agent.wss.sampling import base

PM_PRESENT = 1 << 63
PM_SWAP = 1 << 62
PFN_MASK = (1 << 55) - 1
KPF_COMPOUND_HEAD = 1 << 15
KPF_COMPOUND_TAIL = 1 << 16
KPF_THP = 1 << 22
KPF_HUGE = 1 << 17
BITMAP = '/sys/kernel/mm/page_idle/bitmap'


def _pread_words(fd, offset, count):
    data = os.pread(fd, 8 * count, offset)
    if len(data) != 8 * count:
        raise base.SamplerError('short read at offset %d' % offset)
    return struct.unpack('<%dQ' % count, data)


def _check_frames(entries):
    present = [e for e in entries if e & PM_PRESENT]
    if present and not any(e & PFN_MASK for e in present):
        raise base.SamplerError('pagemap hides frame numbers (needs '
                                'CAP_SYS_ADMIN)')


class PageIdleSampler(base.Sampler):
    name = 'page_idle'
    auto_rank = 30

    @classmethod
    def from_conf(cls, conf, driver):
        return cls(pages=conf.badis.sample_pages)

    def __init__(self, pages=100, proc_root='/proc', bitmap=BITMAP,
                 kpageflags=None, rng=None, clock=time.monotonic):
        self.pages = pages
        self.proc_root = proc_root
        self.bitmap = bitmap
        self.kpageflags = kpageflags or os.path.join(proc_root, 'kpageflags')
        self.rng = rng or random.SystemRandom()
        self.clock = clock
        self._sets = {}     # uuid -> (started, span_kb, [(vaddr, frame)])
        self._short = {}    # the short-cycle set, the same per uuid

    # -- capability -------------------------------------------------------

    def capability(self, vm, pid):
        if not os.path.exists(self.bitmap):
            return base.Capability(
                self.name, False, '%s does not exist (kernel built without '
                'CONFIG_IDLE_PAGE_TRACKING)' % self.bitmap)
        if not os.access(self.bitmap, os.R_OK | os.W_OK):
            return base.Capability(self.name, False,
                                   '%s is not readable and writable'
                                   % self.bitmap)
        if not pid:
            return base.Capability(self.name, False,
                                   'no QEMU process found for the VM')
        try:
            ram = self._ram(vm, pid)
            if base.hugetlb(ram):
                return base.Capability(
                    self.name, False, 'guest RAM is on hugetlbfs pages, '
                    'which idle page tracking ignores')
            npages = ram.size_kb // base.PAGE_KB
            entries = self._pagemap(pid, [
                ram.start + i * 4096
                for i in self.rng.sample(range(npages), min(64, npages))])
            _check_frames(entries)
        except base.SamplerError as e:
            return base.Capability(self.name, False, str(e))
        return base.Capability(
            self.name, True, 'idle page tracking of %d random pages of the '
            '%s guest RAM mapping' % (self.pages, ram.name or 'anonymous'))

    # -- helpers ----------------------------------------------------------

    def _ram(self, vm, pid):
        return base.find_guest_ram(base.parse_smaps(base.read_text(
            base.proc_path(self.proc_root, pid, 'smaps'))), vm.booked_kb)

    def _pagemap(self, pid, vaddrs):
        path = base.proc_path(self.proc_root, pid, 'pagemap')
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError as e:
            raise base.SamplerError('cannot open %s: %s'
                                    % (path, e.strerror or e))
        try:
            return [_pread_words(fd, v // 4096 * 8, 1)[0] for v in vaddrs]
        except OSError as e:
            raise base.SamplerError('cannot read %s: %s'
                                    % (path, e.strerror or e))
        finally:
            os.close(fd)

    def _frames(self, entries):
        """Frame to track per pagemap entry (the head of a huge page), or
        None for an unbacked page."""
        frames = []
        fd = None
        try:
            for e in entries:
                if not e & PM_PRESENT:
                    frames.append(None)
                    continue
                pfn = e & PFN_MASK
                if fd is None:
                    try:
                        fd = os.open(self.kpageflags, os.O_RDONLY)
                    except OSError as err:
                        raise base.SamplerError(
                            'cannot open %s: %s' % (self.kpageflags,
                                                    err.strerror or err))
                flags = _pread_words(fd, pfn * 8, 1)[0]
                if flags & KPF_COMPOUND_TAIL:
                    low = pfn & ~511
                    words = _pread_words(fd, low * 8, pfn - low + 1)
                    for back in range(pfn - low, -1, -1):
                        if words[back] & KPF_COMPOUND_HEAD:
                            pfn = low + back
                            break
                    else:
                        raise base.SamplerError(
                            'no head frame within 2 MiB of tail frame %#x'
                            % (e & PFN_MASK))
                frames.append(pfn)
        finally:
            if fd is not None:
                os.close(fd)
        return frames

    def _bitmap_fd(self, flags):
        try:
            return os.open(self.bitmap, flags)
        except OSError as e:
            raise base.SamplerError('cannot open %s: %s'
                                    % (self.bitmap, e.strerror or e))

    def _set_idle(self, frames):
        words = {}
        for pfn in frames:
            if pfn is not None:
                words[pfn // 64] = words.get(pfn // 64, 0) | (1 << pfn % 64)
        fd = self._bitmap_fd(os.O_WRONLY)
        try:
            for word, bits in sorted(words.items()):
                os.pwrite(fd, struct.pack('<Q', bits), word * 8)
        except OSError as e:
            raise base.SamplerError('cannot write %s: %s'
                                    % (self.bitmap, e.strerror or e))
        finally:
            os.close(fd)

    def _idle(self, frames):
        fd = self._bitmap_fd(os.O_RDONLY)
        try:
            cache = {}
            out = []
            for pfn in frames:
                if pfn is None:
                    out.append(None)
                    continue
                w = pfn // 64
                if w not in cache:
                    cache[w] = _pread_words(fd, w * 8, 1)[0]
                out.append(bool(cache[w] >> (pfn % 64) & 1))
            return out
        except OSError as e:
            raise base.SamplerError('cannot read %s: %s'
                                    % (self.bitmap, e.strerror or e))
        finally:
            os.close(fd)

    # -- the interval -----------------------------------------------------

    def begin(self, vm, pid):
        ram = self._ram(vm, pid)
        npages = ram.size_kb // base.PAGE_KB
        n = min(self.pages, npages)
        vaddrs = [ram.start + i * 4096
                  for i in sorted(self.rng.sample(range(npages), n))]
        entries = self._pagemap(pid, vaddrs)
        _check_frames(entries)
        frames = self._frames(entries)
        self._set_idle(frames)
        self._sets[vm.uuid] = (self.clock(), ram.size_kb,
                               list(zip(vaddrs, frames)))
        # marking these frames idle may have reset a short-set frame's
        # state only if they share one (a huge page): the short set is
        # started again after every begin
        self._short.pop(vm.uuid, None)

    # -- the short-cycle set (short_set) ----------------------------------

    # Marking a frame idle clears the accessed state of that frame only
    # (the reverse map walk of that page): a second set of frames outside
    # the first's 2 MiB regions is read and cleared independently.
    can_short = True

    def begin_short(self, vm, pid, pages):
        main = self._sets.get(vm.uuid)
        if main is None:
            raise base.SamplerError('no running interval to keep a short '
                                    'set beside')
        ram = self._ram(vm, pid)
        npages = ram.size_kb // base.PAGE_KB
        # a page of the same huge page shares the main set's tracked
        # (head) frame: left out below, by frame
        avoid = [(v - ram.start) // 4096 for v, _ in main[2]]
        vaddrs = [ram.start + i * 4096 for i in base.short_pages(
            self.rng, npages, pages, avoid)]
        entries = self._pagemap(pid, vaddrs)
        _check_frames(entries)
        frames = self._frames(entries)
        taken = {f for _, f in main[2] if f is not None}
        # (an unbacked page has no frame yet: it is read by its fault)
        pairs = [(v, f) for v, f in zip(vaddrs, frames)
                 if f is None or f not in taken]
        if not pairs:
            raise base.SamplerError('no page left outside the main set')
        self._set_idle([f for _, f in pairs])
        self._short[vm.uuid] = (self.clock(), ram.size_kb, pairs)

    def peek_short(self, vm, pid):
        started = self._short.get(vm.uuid)
        if started is None:
            return None
        return self._read(pid, started)

    # Reading the idle bitmap does not change it: re-reading the same
    # frames reads the interval so far (cost: one pagemap and one bitmap
    # read of n pages, as end()).
    can_peek = True

    def peek(self, vm, pid):
        started = self._sets.get(vm.uuid)
        if started is None:
            return None
        return self._read(pid, started)

    def end(self, vm, pid):
        started = self._sets.pop(vm.uuid, None)
        if started is None:
            return None
        return self._read(pid, started)

    def _read(self, pid, started):
        t0, span_kb, pages = started
        vaddrs = [v for v, _ in pages]
        now_frames = self._frames(self._pagemap(pid, vaddrs))
        idle = self._idle([f if f == old else None
                           for (_, old), f in zip(pages, now_frames)])
        accessed = 0
        for (_, old), new, still_idle in zip(pages, now_frames, idle):
            if new is None:
                continue                    # unbacked now: not accessed
            if new != old or not still_idle:
                accessed += 1               # faulted in, or bit cleared
        return base.AccessSample(
            backend=self.name, accessed=accessed, sampled=len(pages),
            span_kb=span_kb, interval_s=self.clock() - t0)

    def forget(self, uuid):
        self._sets.pop(uuid, None)
        self._short.pop(uuid, None)
