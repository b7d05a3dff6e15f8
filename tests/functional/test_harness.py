"""The real-hypervisor harness itself: guests boot, run the W-shapes, balloon
and swap as the memmut tests below it will assume."""

import subprocess
import xml.etree.ElementTree as ET

import pytest

from memmut.evaluation import workloads
from tests.harness import domain
from tests.harness.guest import parse_lines, wait_until

libvirt = pytest.importorskip('libvirt')

LIVE = libvirt.VIR_DOMAIN_AFFECT_LIVE
BALLOON_KEYS = {'actual', 'unused', 'available', 'usable', 'swap_in',
                'swap_out', 'major_fault', 'minor_fault', 'rss',
                'last_update'}


def _ends(guest):
    return [d for d in guest.workload_lines() if d['event'] == 'end']


@pytest.mark.parametrize('alloc', ['d', 's'])
def test_memwork_on_host(guest_image, alloc):
    """The workload binary itself: schedule, allocation modes, and a
    corrupted page is caught (run on the host: no guest needed)."""
    run = subprocess.run(
        [guest_image.memwork, 'memwork.sched=8x0.3,24x0.3,4x0.3',
         'memwork.alloc=' + alloc], capture_output=True, text=True,
        timeout=30)
    lines = parse_lines(run.stdout, 'MEMWORK')
    assert run.returncode == 0, run.stdout
    assert [(d['step'], d['wss_mib']) for d in lines
            if d['event'] == 'end'] == [(0, 8), (1, 24), (2, 4)]
    assert lines[-1]['event'] == 'done' and lines[-1]['errors'] == 0
    assert lines[-1]['verified'] > 24 * 256     # pages re-checked

    bad = subprocess.run(
        [guest_image.memwork, 'memwork.sched=8x0.3', 'memwork.corrupt=1',
         'memwork.alloc=' + alloc], capture_output=True, text=True,
        timeout=30)
    assert bad.returncode == 1
    assert 'MEMWORK error step=0 page=1 word=0' in bad.stdout
    assert 'MEMWORK done errors=1' in bad.stdout


PATTERNS = ('random', 'zipf:1.1', 'hotset:4:0.3', 'load_idle:2',
            'scan:2:0.25')


@pytest.mark.parametrize('pattern', PATTERNS)
def test_memwork_patterns_on_host(guest_image, pattern):
    """memwork.pattern: every pattern keeps the pages' contents checked
    and reports its throughput; hotset and load_idle touch only their hot
    MiB after the step's loading pass, scan too but for a sweep of the
    whole step every period; the default (seq) prints no ops."""
    run = subprocess.run(
        [guest_image.memwork, 'memwork.sched=16x0.6,8x0.4',
         'memwork.pattern=' + pattern], capture_output=True, text=True,
        timeout=30)
    lines = parse_lines(run.stdout, 'MEMWORK')
    assert run.returncode == 0, run.stdout
    assert lines[0]['pattern'] == pattern
    ends = [d for d in lines if d['event'] == 'end']
    assert [(d['step'], d['wss_mib']) for d in ends] == [(0, 16), (1, 8)]
    assert all(d['ops'] > 0 and d['ops_s'] > 0 for d in ends)
    assert lines[-1]['event'] == 'done' and lines[-1]['errors'] == 0
    first = ends[0]
    if pattern.startswith(('hotset', 'load_idle')):
        # one loading pass of 4096 pages, then passes of hot pages only
        hot = int(pattern.split(':')[1]) * 256
        assert first['ops'] <= 4096 + first['passes'] * hot
        assert first['verified'] <= (first['passes'] + 1) * hot
    elif pattern.startswith('scan'):
        # the loading pass, hot passes, and a sweep at 0.25 and 0.5 s (a
        # pass cut short at the step's end counts in ops, not in passes)
        hot = int(pattern.split(':')[1]) * 256
        sweeps = (first['ops'] - 4096 - (first['passes'] - 1) * hot) / (
            4096 - hot)
        assert 1 <= sweeps <= 3, first
    else:
        assert first['ops'] >= first['passes'] * 4096
    seq = subprocess.run([guest_image.memwork, 'memwork.sched=4x0.2'],
                         capture_output=True, text=True, timeout=30)
    assert ' pattern=' not in seq.stdout and ' ops=' not in seq.stdout
    bad = subprocess.run([guest_image.memwork, 'memwork.sched=4x0.2',
                          'memwork.pattern=zipf:0'], capture_output=True,
                         text=True, timeout=30)
    assert bad.returncode == 2 and 'fatal bad-pattern' in bad.stdout


@pytest.mark.parametrize('pattern', PATTERNS)
def test_memwork_patterns_in_a_guest(guest_factory, pattern):
    """One guest per pattern runs it to the end with no page lost."""
    steps = [workloads.Step(48, 2), workloads.Step(24, 1.5)]
    g = guest_factory(memory_mib=256, schedule=steps, alloc='d',
                      poweroff=True, pattern=pattern)
    done = g.wait_done(timeout=90)
    assert done['errors'] == 0, g.log()[-3000:]
    lines = g.workload_lines()
    assert lines[0]['pattern'] == pattern
    ends = _ends(g)
    assert [(e['step'], e['wss_mib']) for e in ends] == [(0, 48), (1, 24)]
    assert all(e['ops'] > 0 and e['ops_s'] > 0 for e in ends)
    g.wait_shutoff()


def test_w1_dynamic_schedule(guest_factory):
    steps = workloads.shape_schedule('W1', 160, 1.5)
    g = guest_factory(memory_mib=320, schedule=steps, alloc='d',
                      poweroff=True)
    assert g.ready_after < 30

    done = g.wait_done(timeout=60)
    assert done['errors'] == 0
    ends = _ends(g)
    assert [(e['step'], e['wss_mib']) for e in ends] == [
        (i, s.mib) for i, s in enumerate(steps)]
    assert all(e['passes'] >= 1 and e['errors'] == 0 for e in ends)
    # every step lasted as scheduled (guest clock; TCG adds jitter)
    for prev, cur in zip(ends, ends[1:]):
        assert abs(cur['t'] - prev['t'] - 1.5) < 0.6, ends
    progress = [d for d in g.workload_lines() if d['event'] == 'pass']
    assert {d['wss_mib'] for d in progress} == {s.mib for s in steps}
    g.wait_shutoff()                              # memwork.poweroff=1


def test_balloon_stats_and_resize(guest_factory, libvirtd):
    g = guest_factory(memory_mib=384, stat_period=1,
                      nova=domain.NovaMetadata(name='harness-vm'))
    dom = g.dom

    # memmut's driver finds the QEMU process through this pid file
    pid = g.qemu_pid()
    with open('/proc/%d/cmdline' % pid, 'rb') as f:
        assert g.uuid.encode() in f.read().split(b'\0')
    # ... and recognises nova instances by nova's metadata, which libvirt
    # keeps namespaced in the domain XML but hands out through
    # virDomainGetMetadata without the namespace
    ns = {'nova': domain.NOVA_NS}
    root = ET.fromstring(dom.XMLDesc(0))
    assert root.findtext('metadata/nova:instance/nova:name',
                         namespaces=ns) == 'harness-vm'
    meta = ET.fromstring(dom.metadata(libvirt.VIR_DOMAIN_METADATA_ELEMENT,
                                      domain.NOVA_NS))
    assert (meta.tag, meta.findtext('name')) == ('instance', 'harness-vm')

    dom.setMemoryStatsPeriod(1, LIVE)
    stats = wait_until(dom.memoryStats, lambda s: BALLOON_KEYS <= set(s),
                       20, 'balloon statistics')
    assert stats['actual'] == 384 * 1024
    assert 0 < stats['unused'] <= stats['available'] < 384 * 1024

    before = g.guest_stats()[-1]['memtotal_kb']
    mark = g.mark()
    dom.setMemoryFlags(256 * 1024, LIVE)
    # the balloon takes exactly the difference out of the guest's MemTotal
    after = g.wait_stat(lambda d: d['memtotal_kb'] <= before - 127 * 1024,
                        20, after=mark)
    assert before - after['memtotal_kb'] == pytest.approx(128 * 1024,
                                                          abs=1024)
    assert wait_until(dom.memoryStats, lambda s: s['actual'] == 256 * 1024,
                      10, 'balloon actual = 256 MiB')


def test_hotplug_swap_disk(guest_factory):
    """A file swap disk hot-plugged into a running guest becomes swap (what
    memmut's agent does with its NBD disks); also memfd + tb-cache boot."""
    g = guest_factory(memory_mib=256, memfd=True, tb_cache_mib=128)
    with open('/proc/%d/cmdline' % g.qemu_pid(), 'rb') as f:
        args = f.read().decode(errors='replace')
    assert 'memory-backend-memfd' in args and 'tb-size=128' in args
    assert g.guest_stats()[-1]['swaptotal_kb'] == 0

    mark = g.mark()
    disk = domain.SwapDisk(file=guest_factory.swap_file(64))
    g.dom.attachDeviceFlags(disk.xml(), LIVE)
    g.wait_for(r'MEMMUT-GUEST SWAP dev=/dev/vda size_kb=65536', 20,
               after=mark)
    g.wait_stat(lambda d: d['swaptotal_kb'] > 60 * 1024, 10, after=mark)


def test_swap_under_balloon_pressure(guest_factory):
    # 288 MiB of working set in a guest ballooned to 256 MiB (about 200 MiB
    # usable): every pass goes through the NBD swap disk.
    # 25 s at 288 MiB: the first pass only swaps out; pages come back from
    # the second pass on, which CI's slower TCG reached late in a 10 s step
    # (34 MiB read back there, 99 MiB here).
    steps = [workloads.Step(64, 1), workloads.Step(288, 25)]
    g = guest_factory(memory_mib=384, current_mib=256, schedule=steps,
                      alloc='d', poweroff=True, swap='nbd', swap_mib=512)
    g.wait_for(r'MEMMUT-GUEST SWAP dev=/dev/vda size_kb=524288', 1)
    # libvirt's balloon statistics see the guest swapping too
    wait_until(g.dom.memoryStats, lambda s: s.get('swap_out', 0) > 0, 30,
               'balloon swap_out > 0')

    done = g.wait_done(timeout=150)
    g.wait_shutoff()
    assert done['errors'] == 0, g.log()[-3000:]
    last = _ends(g)[-1]
    # one full pass is enough: the pswpin check below proves pages came
    # back from the swap disk
    assert last['wss_mib'] == 288 and last['passes'] >= 1
    final = g.guest_stats()[-1]                   # printed after memwork
    assert final['pswpout'] > 64 * 256            # > 64 MiB swapped out
    assert final['pswpin'] > 16 * 256             # > 16 MiB read back
    # every page the guest swapped out reached the server, plus mkswap's
    # header page (measured: exactly one 4 KiB write)
    writes = g.swap_server.requests()
    assert 0 <= writes['write_bytes'] - final['pswpout'] * 4096 <= 64 * 1024


def test_a_guest_pinned_to_one_host_cpu(guest_factory):
    # bench_patterns --pin: a run and its twin each on their own core.
    # The vCPU thread and the QEMU process (libvirt pins the emulator to
    # the vcpu cpuset when it has no emulatorpin) run on CPU 0 only.
    g = guest_factory(memory_mib=256, cpuset='0')
    infos, maps = g.dom.vcpus()
    assert [tuple(m) for m in maps] == [(True,) + (False,) * (len(m) - 1)
                                        for m in maps]
    out = subprocess.run(['taskset', '-p', str(g.qemu_pid())],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith(': 1')
