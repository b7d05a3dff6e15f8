"""The ``kmod`` back-end (/dev/memmut_wss) against a fake device.

Accuracy: fixtures/sampling_kmod_{anon,thp}.json were recorded from the
real module in Debian's 6.1 kernel (fixtures/record_kmod.py): a 256 MiB
mapping with a 96 MiB working set, 1 000 sampled pages, the module's
answer per page; the fake replays them.

The fake decodes the very bytes :class:`kmod.WssDevice` sends (the ABI of
kmod/memmut_wss/memmut_wss_abi.h: a 72-byte struct carrying user pointers)
and keeps a fake process: its guest RAM mapping (from the recorded smaps
of tests/unit/agent/fixtures) and the accessed state of its pages, which a
scan tests and clears as the module does. The module itself is tested in
a real 6.1 kernel by tests/functional/test_kmod_wss.py.
"""

import ctypes
import errno
import os
import re
import struct

import pytest

from memmut.agent.wss.sampling import base
from memmut.agent.wss.sampling import kmod
from tests.unit.agent.test_sampling import PID
from tests.unit.agent.test_sampling import fake_proc
from tests.unit.agent.test_sampling import fixture
from tests.unit.agent.test_sampling import vm_info

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
ABI_H = os.path.join(ROOT, 'kmod', 'memmut_wss', 'memmut_wss_abi.h')
PAGE = 4096
HUGE = 2 * 1024 * 1024


class FakeWss:
    """The module's semantics, in Python, behind a fake ioctl."""

    def __init__(self, start, end, notifiers=False, abi=1, huge=()):
        self.procs = {PID: (start, end)}
        self.accessed = set()       # page addresses accessed since clear
        self.notifiers = notifiers
        self.abi = abi
        self.huge = set(huge)       # 2 MiB-aligned addresses of huge PMDs
        self.fail = None            # errno to fail the next scan with
        self.calls = []
        self.replay = None          # (addrs, results) recorded for real

    def touch(self, addr):
        self.accessed.add(addr & ~(PAGE - 1))

    def ioctl(self, fd, request, buf, mutate):
        assert mutate is True
        if request == kmod.IOC_INFO:
            buf[:] = struct.pack(kmod.INFO_FORMAT, self.abi, 65536, 7, 0)
            return 0
        if request != kmod.IOC_SCAN:
            raise OSError(errno.ENOTTY, 'unknown ioctl')
        (size, flags, pid, count, start, end, uaddrs, ures,
         *_) = struct.unpack(kmod.SCAN_FORMAT, buf)
        self.calls.append((flags, pid, count, start, end))
        if self.fail:
            err, self.fail = self.fail, None
            raise OSError(err, os.strerror(err))
        if size != kmod.SCAN_SIZE or flags & ~3 or not count:
            raise OSError(errno.EINVAL, 'bad request')
        if count > 65536:
            raise OSError(errno.E2BIG, 'too many')
        if pid not in self.procs:
            raise OSError(errno.ESRCH, 'no such process')
        m_start, m_end = self.procs[pid]
        if not (m_start <= start < end <= m_end):
            raise OSError(errno.ENXIO, 'not one mapping')
        npages = (end - start) // PAGE
        if self.replay:
            return self._replay(buf, flags, count, uaddrs, ures)
        if flags & kmod.SCAN_RANDOM:
            addrs = [start + (npages * i // count) * PAGE
                     for i in range(count)]
            ctypes.memmove(uaddrs, (ctypes.c_uint64 * count)(*addrs),
                           8 * count)
        else:
            addrs = list(struct.unpack('<%dQ' % count,
                                       ctypes.string_at(uaddrs, 8 * count)))
            if any(b <= a for a, b in zip(addrs, addrs[1:])) or any(
                    a % PAGE or not start <= a < end for a in addrs):
                raise OSError(errno.EINVAL, 'bad addresses')
        res = []
        huge_seen = {}
        for a in addrs:
            h = a & ~(2 * 1024 * 1024 - 1)
            if h in self.huge:
                if h not in huge_seen:
                    young = any(p & ~(2 * 1024 * 1024 - 1) == h
                                for p in self.accessed)
                    self.accessed = {p for p in self.accessed
                                     if p & ~(2 * 1024 * 1024 - 1) != h}
                    huge_seen[h] = (kmod.P_PRESENT | kmod.P_HUGE |
                                    (kmod.P_ACCESSED if young else 0))
                r = huge_seen[h]
            else:
                r = kmod.P_PRESENT
                if a in self.accessed:
                    self.accessed.discard(a)
                    r |= kmod.P_ACCESSED
                    if self.notifiers:
                        r |= kmod.P_SECONDARY
            res.append(r)
        ctypes.memmove(ures, bytes(res), count)
        out = [count, sum(r & 1 for r in res),
               sum(1 for r in res if r & kmod.P_PRESENT),
               sum(1 for r in res if r & kmod.P_HUGE),
               sum(1 for r in res if r & kmod.P_SECONDARY),
               kmod.OUT_NOTIFIERS if self.notifiers else 0]
        buf[:] = struct.pack(kmod.SCAN_FORMAT, size, flags, pid, count,
                             start, end, uaddrs, ures, *out)
        return 0

    def _replay(self, buf, flags, count, uaddrs, ures):
        addrs, results = self.replay
        if count == 1:                        # the capability's probe
            addrs, results = addrs[:1], bytes([kmod.P_PRESENT])
        assert count == len(addrs)
        if count == 1 or flags & kmod.SCAN_RANDOM:   # a clearing scan
            ctypes.memmove(uaddrs, (ctypes.c_uint64 * count)(*addrs),
                           8 * count)
            res = bytes([kmod.P_PRESENT] * count)
        else:                                 # the recorded answers
            got = struct.unpack('<%dQ' % count,
                                ctypes.string_at(uaddrs, 8 * count))
            assert list(got) == addrs
            res = results
        ctypes.memmove(ures, res, count)
        fields = list(struct.unpack(kmod.SCAN_FORMAT, buf))
        fields[8:] = [count, sum(r & kmod.P_ACCESSED for r in res),
                      sum(1 for r in res if r & kmod.P_PRESENT),
                      sum(1 for r in res if r & kmod.P_HUGE),
                      sum(1 for r in res if r & kmod.P_SECONDARY), 0]
        buf[:] = struct.pack(kmod.SCAN_FORMAT, *fields)
        return 0

    def factory(self, path):
        return kmod.WssDevice(
            path, ioctl=self.ioctl,
            opener=lambda p, flags: os.open(os.devnull, flags))


def setup(tmp_path, **kwargs):
    fx = fixture('memfd')
    proc = fake_proc(tmp_path, fx)
    start = fx['ram_start']
    fake = FakeWss(start, start + fx['booked_kb'] * 1024, **kwargs)
    sampler = kmod.KmodSampler(pages=100, proc_root=proc,
                               device_factory=fake.factory)
    return fx, fake, sampler


# -- the ABI is the header's ----------------------------------------------

def _header_defines():
    with open(ABI_H) as f:
        text = f.read()
    return {m.group(1): int(m.group(2), 0) for m in re.finditer(
        r'#define MEMMUT_WSS_(\w+)\s+\(?(0x[0-9A-Fa-f]+|\d+)U?\s*'
        r'(?:<<\s*(\d+))?', text)} | {
        m.group(1): 1 << int(m.group(2)) for m in re.finditer(
            r'#define MEMMUT_WSS_(\w+)\s+\(1U << (\d+)\)', text)}


def test_abi_matches_the_module_header():
    d = _header_defines()
    assert d['ABI_VERSION'] == kmod.ABI_VERSION
    assert d['IOC_MAGIC'] == kmod.MAGIC
    for name in ('SCAN_RANDOM', 'SCAN_NO_FLUSH', 'OUT_NOTIFIERS',
                 'OUT_FLUSHED', 'P_ACCESSED', 'P_PRESENT', 'P_HUGE',
                 'P_SECONDARY', 'P_UNMAPPED', 'F_SECONDARY_MMU',
                 'F_TLB_FLUSH', 'F_THP'):
        assert d[name] == getattr(kmod, name), name
    assert kmod.SCAN_SIZE == 72 and kmod.INFO_SIZE == 16
    # _IOWR(0xE7, 2, 72) and _IOR(0xE7, 1, 16) as <asm-generic/ioctl.h>
    assert kmod.IOC_SCAN == 0xC048E702
    assert kmod.IOC_INFO == 0x8010E701


# -- sampling -----------------------------------------------------------------

@pytest.mark.parametrize('domain_type,notifiers',
                         [('qemu', False), ('kvm', True)])
def test_kmod_counts_accessed_sampled_pages(tmp_path, domain_type,
                                            notifiers):
    fx, fake, s = setup(tmp_path, notifiers=notifiers)
    vm = vm_info(fx['booked_kb'], domain_type=domain_type)
    assert s.capability(vm, PID).usable
    fake.accessed.clear()
    s.begin(vm, PID)
    flags, pid, count, start, end = fake.calls[-1]
    assert flags & kmod.SCAN_RANDOM and pid == PID and count == 100
    assert end - start == fx['booked_kb'] * 1024
    # the guest touches the first 37 % of its RAM
    touched_end = start + int(0.37 * (end - start))
    for a in range(start, touched_end, PAGE):
        fake.touch(a)
    sampled = s._sets[vm.uuid][4]
    expected = sum(1 for a in sampled if a < touched_end)
    sample = s.end(vm, PID)
    assert fake.calls[-1][0] == 0            # the same pages, explicitly
    assert sample.backend == 'kmod'
    assert sample.sampled == 100 and sample.accessed == expected
    assert abs(expected - 37) <= 1
    assert sample.span_kb == fx['booked_kb']
    assert sample.estimate(fx['booked_kb']).wss_kb == expected * fx[
        'booked_kb'] // 100
    # the next interval starts clean: nothing touched, nothing counted
    s.begin(vm, PID)
    assert s.end(vm, PID).accessed == 0
    assert s.end(vm, PID) is None


def test_kmod_thp_counts_sub_pages_with_their_huge_page(tmp_path):
    fx = fixture('memfd')
    start = fx['ram_start']
    first_huge = (start + HUGE - 1) & ~(HUGE - 1)
    huge = [first_huge + i * HUGE for i in range(100)]
    fx, fake, s = setup(tmp_path, huge=huge)
    vm = vm_info(fx['booked_kb'])
    s.begin(vm, PID)
    sampled = s._sets[vm.uuid][4]
    h = next(a & ~(HUGE - 1) for a in sampled if a & ~(HUGE - 1) in huge)
    # another 4 KiB page of that THP than the sampled one is touched
    fake.touch(h + 5 * PAGE)
    assert not any(a == h + 5 * PAGE for a in sampled)
    sample = s.end(vm, PID)
    assert sample.accessed == sum(1 for a in sampled
                                  if a & ~(HUGE - 1) == h) >= 1
    assert sample.huge_kb > 0


@pytest.mark.parametrize('kind', ['anon', 'thp'])
def test_kmod_recorded_reads_the_working_set_within_5_pct(tmp_path, kind):
    fx = fixture('kmod_' + kind)
    proc = fake_proc(tmp_path, fx)
    fake = FakeWss(fx['ram_start'], fx['ram_start'] + fx['booked_kb'] * 1024)
    fake.replay = (fx['addrs'], bytes.fromhex(fx['results']))
    s = kmod.KmodSampler(pages=len(fx['addrs']), proc_root=proc,
                         device_factory=fake.factory)
    vm = vm_info(fx['booked_kb'])
    cap = s.capability(vm, PID)
    assert cap.usable and 'host page tables only' in cap.reason, cap.reason
    fake.calls.clear()
    s.begin(vm, PID)
    assert fake.calls[0][3:] == (fx['ram_start'], fx['ram_start'] +
                                 fx['booked_kb'] * 1024)
    sample = s.end(vm, PID)
    assert sample.accessed == fx['accessed']
    assert sample.sampled == len(fx['addrs'])
    est = sample.estimate(fx['booked_kb'])
    assert abs(est.wss_kb - fx['wss_kb']) <= 0.05 * fx['booked_kb']
    if kind == 'thp':                   # the module saw huge PMDs
        assert sample.huge_kb > 0.9 * fx['booked_kb']
    else:
        assert sample.huge_kb == 0


# -- capability and refusals -------------------------------------------------

def test_kmod_capability_says_what_it_sees(tmp_path):
    fx, fake, s = setup(tmp_path)
    cap = s.capability(vm_info(fx['booked_kb'], domain_type='qemu'), PID)
    assert cap.usable and 'host page tables only' in cap.reason
    # KVM without a notifier: the secondary MMU path is absent, visibly
    cap = s.capability(vm_info(fx['booked_kb'], domain_type='kvm'), PID)
    assert not cap.usable
    assert 'secondary MMU path absent' in cap.reason
    fake.notifiers = True
    cap = s.capability(vm_info(fx['booked_kb'], domain_type='kvm'), PID)
    assert cap.usable and 'secondary MMU' in cap.reason
    assert not s.capability(vm_info(fx['booked_kb']), None).usable
    assert not s.capability(vm_info(fx['booked_kb'], domain_type='xen'),
                            PID).usable


def test_kmod_capability_without_module_or_with_another_abi(tmp_path):
    fx, fake, _ = setup(tmp_path)
    vm = vm_info(fx['booked_kb'])
    missing = kmod.KmodSampler(proc_root=str(tmp_path / 'proc'),
                               device=str(tmp_path / 'no-such-device'))
    cap = missing.capability(vm, PID)
    assert not cap.usable and 'module is not loaded' in cap.reason
    fake.abi = 2
    other = kmod.KmodSampler(proc_root=str(tmp_path / 'proc'),
                             device_factory=fake.factory)
    cap = other.capability(vm, PID)
    assert not cap.usable and 'ABI 2' in cap.reason


def test_kmod_kvm_scan_without_notifier_is_an_error_not_zeros(tmp_path):
    fx, fake, s = setup(tmp_path, notifiers=True)
    vm = vm_info(fx['booked_kb'], domain_type='kvm')
    s.begin(vm, PID)
    fake.notifiers = False            # e.g. KVM let go of the mm
    with pytest.raises(base.SamplerError, match='secondary MMU'):
        s.end(vm, PID)


def test_kmod_errors_become_sampler_errors(tmp_path):
    fx, fake, s = setup(tmp_path)
    vm = vm_info(fx['booked_kb'])
    s.begin(vm, PID)
    fake.fail = errno.ESRCH
    with pytest.raises(base.SamplerError, match='no such process'):
        s.end(vm, PID)
    fake.fail = errno.ENXIO
    with pytest.raises(base.SamplerError, match='not one sampleable'):
        s.begin(vm, PID)
    dev = fake.factory('/dev/memmut_wss')
    with pytest.raises(base.SamplerError, match='too many pages'):
        dev.scan(PID, fx['ram_start'], fx['ram_start'] + 2 ** 30,
                 count=70000)
    dev.close()


def test_auto_order_on_kvm_hosts_is_kmod_then_page_idle():
    """smaps first (exact, but it refuses kvm domains), then the kernel
    helper, then page_idle where the kernel has it."""
    from memmut.agent.wss import sampling
    order = sampling.auto_order(sampling.load_factories())
    assert order.index('smaps') < order.index('kmod') < \
        order.index('page_idle')


def test_kmod_peek_keeps_the_union_of_what_scans_cleared(tmp_path):
    # a scan tests and clears: peek keeps what earlier scans of the
    # interval found, so its count is cumulative since begin
    fx, fake, s = setup(tmp_path)
    vm = vm_info(fx['booked_kb'])
    assert s.can_peek
    fake.accessed.clear()
    s.begin(vm, PID)
    addrs = s._sets[vm.uuid][4]
    fake.touch(addrs[0])
    assert s.peek(vm, PID).accessed == 1
    fake.touch(addrs[1])
    assert s.peek(vm, PID).accessed == 2     # addrs[0] was cleared
    fake.touch(addrs[0])
    assert s.end(vm, PID).accessed == 2
    s.begin(vm, PID)                         # a new interval: clean
    assert s.peek(vm, PID).accessed == 0
