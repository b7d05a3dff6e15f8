"""Access-sampling back-ends against data recorded from real QEMU guests.

The fixtures (fixtures/sampling_{anon,memfd}.json, recorded by
fixtures/record_sampling.py) hold the smaps of a 256 MiB TCG guest running
a 96 MiB working set, read 3 s after clear_refs, and pagemap/kpageflags
entries of 256 random pages of its RAM. The tests rebuild a small /proc
and /sys from them.
"""

import json
import logging
import os
import struct

import pytest

from memmut.agent.wss import sampling
from memmut.agent.wss.sampling import base
from memmut.agent.wss.sampling import page_idle
from memmut.agent.wss.sampling import simulated as sim_sampler
from memmut.agent.wss.sampling import smaps
from memmut.virt import driver
from memmut.virt import simulated
from tests import common

HERE = os.path.dirname(os.path.abspath(__file__))
MIB = 1024
PID = 4242


def fixture(kind):
    with open(os.path.join(HERE, 'fixtures', 'sampling_%s.json' % kind)) as f:
        return json.load(f)


def vm_info(booked_kb=256 * MIB, domain_type='qemu', uuid='u-1'):
    return driver.VMInfo(uuid=uuid, name='vm-' + uuid, state='running',
                         booked_kb=booked_kb, balloon_kb=booked_kb,
                         memory_stats={}, cpu_time_ns=0,
                         domain_type=domain_type)


def fake_proc(tmp_path, fx):
    d = tmp_path / 'proc' / str(PID)
    d.mkdir(parents=True)
    (d / 'smaps').write_text(fx['smaps'])
    (d / 'clear_refs').write_text('')
    return str(tmp_path / 'proc')


# -- smaps parsing and the guest RAM mapping ---------------------------------

@pytest.mark.parametrize('kind', ['anon', 'memfd'])
def test_guest_ram_is_found_not_the_larger_translation_cache(kind):
    fx = fixture(kind)
    maps = base.parse_smaps(fx['smaps'])
    ram = base.find_guest_ram(maps, fx['booked_kb'])
    assert ram.start == fx['ram_start']
    assert ram.size_kb == fx['booked_kb']
    assert max(m.size_kb for m in maps) > ram.size_kb     # the TCG cache
    assert not base.hugetlb(ram)
    if kind == 'memfd':
        assert ram.name.startswith('/memfd:') and base.thp_kb(ram) == 0
    else:
        assert ram.name == '' and base.thp_kb(ram) > 0


def test_guest_ram_lookup_refuses_to_guess():
    fx = fixture('anon')
    maps = base.parse_smaps(fx['smaps'])
    with pytest.raises(base.SamplerError, match='no mapping'):
        base.find_guest_ram(maps, 123 * MIB)
    twice = base.parse_smaps(fx['smaps'] + fx['smaps'])
    with pytest.raises(base.SamplerError, match='refusing to guess'):
        base.find_guest_ram(twice, fx['booked_kb'])


# -- smaps back-end -----------------------------------------------------------

def test_smaps_memfd_reads_the_working_set_within_3_mib(tmp_path):
    fx = fixture('memfd')
    proc = fake_proc(tmp_path, fx)
    s = smaps.SmapsSampler(proc_root=proc)
    vm = vm_info(fx['booked_kb'])
    cap = s.capability(vm, PID)
    assert cap.usable and cap.exact, cap.reason
    assert s.end(vm, PID) is None            # no interval started yet
    s.begin(vm, PID)
    assert (tmp_path / 'proc' / str(PID) / 'clear_refs').read_text() == '1'
    sample = s.end(vm, PID)
    assert sample.huge_kb == 0 and sample.offset_kb == 0
    est = sample.estimate(fx['booked_kb'])
    assert abs(est.wss_kb - fx['wss_kb']) <= 3 * MIB
    # capped at the allocation: sampling cannot see beyond m_cur
    assert sample.estimate(64 * MIB).wss_kb == 64 * MIB
    assert s.end(vm, PID) is None            # one end per begin


def test_smaps_anonymous_thp_is_warned_about_and_offset(tmp_path, caplog):
    fx = fixture('anon')
    proc = fake_proc(tmp_path, fx)
    vm = vm_info(fx['booked_kb'])
    raw = smaps.SmapsSampler(proc_root=proc)
    raw.begin(vm, PID)
    caplog.set_level(logging.WARNING)
    over = raw.end(vm, PID).estimate(fx['booked_kb']).wss_kb
    assert over - fx['wss_kb'] > 40 * MIB      # THP: ~+50 MiB
    assert 'transparent huge pages' in caplog.text and vm.uuid in caplog.text
    fixed = smaps.SmapsSampler(offset_kb=56 * MIB, proc_root=proc)
    fixed.begin(vm, PID)
    sample = fixed.end(vm, PID)
    assert sample.huge_kb > 0 and sample.offset_kb == 56 * MIB
    assert abs(sample.estimate(fx['booked_kb']).wss_kb - fx['wss_kb']) < (
        4 * MIB)


@pytest.mark.parametrize('dtype,why', [('kvm', 'EPT/NPT'),
                                       ('sim', 'only under TCG'),
                                       (None, 'only under TCG')])
def test_smaps_refuses_domains_whose_accesses_it_cannot_see(
        tmp_path, dtype, why):
    fx = fixture('memfd')
    s = smaps.SmapsSampler(proc_root=fake_proc(tmp_path, fx))
    cap = s.capability(vm_info(fx['booked_kb'], domain_type=dtype), PID)
    assert not cap.usable and why in cap.reason


def test_smaps_refuses_hugetlbfs_and_missing_processes(tmp_path):
    fx = fixture('memfd')
    fx['smaps'] = fx['smaps'].replace('KernelPageSize:        4 kB',
                                      'KernelPageSize:     2048 kB')
    s = smaps.SmapsSampler(proc_root=fake_proc(tmp_path, fx))
    vm = vm_info(fx['booked_kb'])
    cap = s.capability(vm, PID)
    assert not cap.usable and 'hugetlbfs' in cap.reason
    assert not s.capability(vm, None).usable
    cap = s.capability(vm, 999999)
    assert not cap.usable and 'cannot read' in cap.reason
    with pytest.raises(base.SamplerError):
        s.begin(vm, 999999)


# -- page_idle back-end ------------------------------------------------------

class PickRecorded:
    """An rng whose sample() returns the page indices of the fixture."""

    def __init__(self, indices):
        self.indices = indices

    def sample(self, population, n):
        return self.indices[:n]


class FakeSys:
    """/proc/PID/pagemap, /proc/kpageflags and the page_idle bitmap as
    sparse files, filled from a recorded fixture."""

    def __init__(self, tmp_path, fx):
        self.fx = fx
        self.proc = fake_proc(tmp_path, fx)
        self.pagemap = os.path.join(self.proc, str(PID), 'pagemap')
        self.kpageflags = os.path.join(self.proc, 'kpageflags')
        self.bitmap = str(tmp_path / 'bitmap')
        for path in (self.pagemap, self.kpageflags, self.bitmap):
            open(path, 'wb').close()
        self.first = fx['ram_start'] // 4096
        self.entries = {int(k): v for k, v in fx['pagemap'].items()}
        for i, e in self.entries.items():
            self.put(self.pagemap, self.first + i, e)
        for pfn, flags in fx['kpageflags'].items():
            self.put(self.kpageflags, int(pfn), flags)

    @staticmethod
    def put(path, index, word):
        with open(path, 'r+b') as f:
            f.seek(index * 8)
            f.write(struct.pack('<Q', word))

    @staticmethod
    def get(path, index):
        with open(path, 'rb') as f:
            f.seek(index * 8)
            data = f.read(8)
        return struct.unpack('<Q', data.ljust(8, b'\0'))[0]

    def head(self, pfn):
        flags = {int(k): v for k, v in self.fx['kpageflags'].items()}
        if not flags.get(pfn, 0) & page_idle.KPF_COMPOUND_TAIL:
            return pfn
        return max(p for p, f in flags.items()
                   if f & page_idle.KPF_COMPOUND_HEAD and
                   pfn & ~511 <= p < pfn)

    def access(self, pfn):
        """What the kernel does when the guest touches a tracked frame."""
        w = self.get(self.bitmap, pfn // 64)
        self.put(self.bitmap, pfn // 64, w & ~(1 << pfn % 64))

    def sampler(self, pages=256):
        idx = sorted(self.entries)
        return page_idle.PageIdleSampler(
            pages=pages, proc_root=self.proc, bitmap=self.bitmap,
            kpageflags=self.kpageflags, rng=PickRecorded(idx))


@pytest.mark.parametrize('kind', ['anon', 'memfd'])
def test_page_idle_counts_accessed_sampled_pages(tmp_path, kind):
    fx = fixture(kind)
    fs = FakeSys(tmp_path, fx)
    s = fs.sampler()
    vm = vm_info(fx['booked_kb'], domain_type='kvm')
    cap = s.capability(vm, PID)
    assert cap.usable, cap.reason
    s.begin(vm, PID)
    present = {i: e & page_idle.PFN_MASK for i, e in fs.entries.items()
               if e & page_idle.PM_PRESENT}
    heads = {i: fs.head(pfn) for i, pfn in present.items()}
    for h in set(heads.values()):          # every tracked frame is idle
        assert fs.get(fs.bitmap, h // 64) >> (h % 64) & 1
    if kind == 'anon':                     # THP: tails tracked via heads
        assert any(h != present[i] for i, h in heads.items())
    # The guest touches a third of the sampled present pages...
    touched = sorted(present)[::3]
    for i in touched:
        fs.access(heads[i])
    # ... and faults in one page that was not backed at the start.
    absent = sorted(set(fs.entries) - set(present))[0]
    fs.put(fs.pagemap, fs.first + absent,
           page_idle.PM_PRESENT | 0x1234567)
    fs.put(fs.kpageflags, 0x1234567, 1 << 5)     # KPF_LRU, not huge
    sample = s.end(vm, PID)
    touched_heads = {heads[i] for i in touched}
    expected = sum(1 for i in present if heads[i] in touched_heads) + 1
    assert sample.accessed == expected
    assert sample.sampled == len(fs.entries)
    assert sample.span_kb == fx['booked_kb']
    est = sample.estimate(fx['booked_kb'])
    assert est.wss_kb == expected * fx['booked_kb'] // len(fs.entries)


def test_page_idle_unaccessed_pages_stay_out(tmp_path):
    fx = fixture('memfd')
    fs = FakeSys(tmp_path, fx)
    s = fs.sampler()
    vm = vm_info(fx['booked_kb'])
    s.begin(vm, PID)
    assert s.end(vm, PID).accessed == 0
    assert s.end(vm, PID) is None


def test_page_idle_capability(tmp_path):
    fx = fixture('memfd')
    fs = FakeSys(tmp_path, fx)
    vm = vm_info(fx['booked_kb'])
    missing = page_idle.PageIdleSampler(
        proc_root=fs.proc, bitmap=str(tmp_path / 'nope'))
    cap = missing.capability(vm, PID)
    assert not cap.usable and 'CONFIG_IDLE_PAGE_TRACKING' in cap.reason
    # an unprivileged reader sees present pages with frame number 0
    for i, e in fs.entries.items():
        fs.put(fs.pagemap, fs.first + i, e & ~page_idle.PFN_MASK)
    cap = fs.sampler().capability(vm, PID)
    assert not cap.usable and 'CAP_SYS_ADMIN' in cap.reason


# -- simulated back-end and the choice of back-end ---------------------------

def test_sim_sampler_is_unbiased_with_binomial_noise(conf, clock):
    d = simulated.SimDriver(conf, clock=clock, vms=['a:1024:W1:500'])
    uuid = next(iter(d.vms))
    vm = d.list_vms()[0]
    s = sim_sampler.SimSampler(d, pages=100)
    assert s.capability(vm, None).usable
    wss = []
    for _ in range(200):
        s.begin(vm, None)
        wss.append(s.end(vm, None).estimate(vm.balloon_kb).wss_kb)
    truth = d.vms[uuid].demand_kb + simulated.GUEST_ACTIVE_KB
    mean = sum(wss) / len(wss)
    assert abs(mean - truth) < 0.02 * 1024 * MIB
    spread = max(wss) - min(wss)
    assert spread > 0.05 * 1024 * MIB      # it is sampling, not reading


def test_sim_sampler_refuses_a_driver_that_does_not_simulate():
    from tests.unit.agent import balloon_host
    host = balloon_host.BalloonHost()       # a Driver, not simulating
    assert not host.simulates_access_sampling
    s = sim_sampler.SimSampler(host)
    cap = s.capability(vm_info(), None)
    assert not cap.usable
    assert cap.reason == ('the scripted driver does not simulate access '
                          'sampling')
    with pytest.raises(NotImplementedError):
        host.access_sample('u-1', 10)
    s.begin(vm_info(), None)
    with pytest.raises(base.SamplerError, match='does not simulate'):
        s.end(vm_info(), None)


def test_choice_auto_sim_and_refusals(conf, clock, caplog):
    d = simulated.SimDriver(conf, clock=clock, vms=['a:512:W1'])
    vm = d.list_vms()[0]
    auto = sampling.SamplerChoice(conf, d)
    assert auto.for_vm(vm, None).name == 'sim'
    caplog.set_level(logging.INFO)
    explicit = sampling.SamplerChoice(common.private_conf(
        agent={'sampling_backend': 'smaps'}), d)
    assert explicit.for_vm(vm, None) is None
    assert 'refusing sampling back-end smaps' in caplog.text
    assert vm.uuid in caplog.text


def test_choice_none_turns_sampling_off_with_a_log_line(conf, clock,
                                                        caplog):
    d = simulated.SimDriver(conf, clock=clock, vms=['a:512:W1'])
    vm = d.list_vms()[0]
    caplog.set_level(logging.INFO)
    off = sampling.SamplerChoice(common.private_conf(
        agent={'sampling_backend': 'none'}), d)
    assert off.for_vm(vm, None) is None and off.samplers == {}
    assert 'access sampling is off' in caplog.text


def test_choice_auto_on_kvm_without_page_idle_warns(tmp_path, caplog):
    fx = fixture('memfd')
    proc = fake_proc(tmp_path, fx)
    conf = common.private_conf()
    samplers = {
        'smaps': smaps.SmapsSampler(proc_root=proc),
        'page_idle': page_idle.PageIdleSampler(
            proc_root=proc, bitmap=str(tmp_path / 'absent'))}
    choice = sampling.SamplerChoice(conf, object(), samplers=samplers)
    caplog.set_level(logging.WARNING)
    assert choice.for_vm(vm_info(fx['booked_kb'], 'kvm'), PID) is None
    assert 'EPT/NPT' in caplog.text and 'balloon statistics' in caplog.text
    tcg = vm_info(fx['booked_kb'], 'qemu', uuid='u-2')
    assert choice.for_vm(tcg, PID).name == 'smaps'


# -- reading an interval without ending it (peek, for ws_curve) -------------

def test_smaps_peek_rereads_without_clearing(tmp_path):
    fx = fixture('memfd')
    proc = fake_proc(tmp_path, fx)
    s = smaps.SmapsSampler(proc_root=proc)
    vm = vm_info(fx['booked_kb'])
    assert s.can_peek and s.peek(vm, PID) is None
    s.begin(vm, PID)
    clear_refs = tmp_path / 'proc' / str(PID) / 'clear_refs'
    clear_refs.write_text('')
    first = s.peek(vm, PID)
    assert clear_refs.read_text() == ''      # not cleared again
    assert first.referenced_kb == s.peek(vm, PID).referenced_kb
    assert s.end(vm, PID).referenced_kb == first.referenced_kb
    assert s.peek(vm, PID) is None           # the interval ended


def test_page_idle_peek_is_cumulative_and_leaves_the_bits(tmp_path):
    fx = fixture('memfd')
    fs = FakeSys(tmp_path, fx)
    s = fs.sampler()
    vm = vm_info(fx['booked_kb'], domain_type='kvm')
    s.begin(vm, PID)
    present = sorted(i for i, e in fs.entries.items()
                     if e & page_idle.PM_PRESENT)
    pfn = {i: fs.entries[i] & page_idle.PFN_MASK for i in present}
    fs.access(fs.head(pfn[present[0]]))
    assert s.peek(vm, PID).accessed == 1
    assert s.peek(vm, PID).accessed == 1     # reading set no bit idle
    fs.access(fs.head(pfn[present[1]]))
    assert s.peek(vm, PID).accessed == 2
    assert s.end(vm, PID).accessed == 2
    assert s.peek(vm, PID) is None
