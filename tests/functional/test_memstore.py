"""memmut-memstore serving real guests' swap disks (issue 3).

A TCG guest swaps onto an export of memmut-memstore; the tests check that
every swap-out reached the server, that reuse distances are reported, that
a SIGKILL of memstore in the middle of swapping loses no page (QEMU's NBD
client reconnects to the restarted server; memwork checks every page), and
that the agent's SwapDiskManager hot-plugs the disk into a running guest
and refuses to unplug it while the guest swaps on it.
"""

import json
import signal
import time
import xml.etree.ElementTree as ET

import pytest

from memmut.evaluation import workloads
from memmut.agent.swap import swapdisk
from memmut.virt.libvirt import driver
from memmut.virt.libvirt import swapdisk as lv_swapdisk
from tests import common
from tests.harness.guest import stat_lines, wait_until

libvirt = pytest.importorskip('libvirt')

PAGE = 4096
MKSWAP_SLACK = 64 * 1024        # mkswap's header write (measured: 4 KiB)


def _quiet(g, after, polls=3):
    """Wait for ``polls`` consecutive GUESTSTAT lines (1 s apart) past
    ``after`` with the same pswpout; return the last one."""
    def check(lines):
        tail = lines[-polls:]
        return (len(tail) == polls
                and len({d['pswpout'] for d in tail}) == 1)
    return wait_until(lambda: stat_lines(g.log()[after:]),
                      check, 60, 'swap-out to stop on %s' % g.name,
                      interval=0.5)[-1]


def test_guest_swaps_on_memstore_and_survives_sigkill(guest_factory):
    # alloc='s': one 288 MiB mapping; steps 0 and 2 touch all of it in a
    # guest ballooned to 256 MiB (heavy swapping), step 1 only 16 MiB
    # (swapping stops), and step 2 re-checks every page swapped out in
    # step 0 -- across a SIGKILL of memstore.
    steps = [workloads.Step(288, 14), workloads.Step(16, 10),
             workloads.Step(288, 25)]
    g = guest_factory(memory_mib=384, current_mib=256, schedule=steps,
                      alloc='s', poweroff=True, swap='memstore',
                      swap_mib=512, swap_quota_mib=64, stat_period=1,
                      reconnect_delay=30)
    export = g.swap_server
    g.wait_for(r'MEMMUT-GUEST SWAP dev=/dev/vda size_kb=524288', 1)

    # 1. swap-outs seen by the guest == writes seen by memstore
    g.wait_for(r'^MEMWORK end step=0 ', 90)
    mark = g.mark()
    quiet = _quiet(g, mark)
    st = export.stats(percentile=95)
    c, mon = st['counters'], st['monitor']
    assert quiet['pswpout'] > 32 * 256, quiet          # > 32 MiB swapped
    extra = c['write_bytes'] - quiet['pswpout'] * PAGE
    assert 0 <= extra <= MKSWAP_SLACK, (c, quiet)
    # page-granular monitor: one swap-out per page written
    assert mon['swap_out_pages'] * PAGE == c['write_bytes']
    # the guest read back what it swapped in, through memstore
    assert c['read_bytes'] >= quiet['pswpin'] * PAGE > 0
    # 2. reuse distances were reported (the step-0 passes re-touch pages
    # swapped out earlier in the same pass)
    cum = mon['cumulative']
    assert cum['swap_ins'] > 1000 and cum['histogram'], mon
    assert sum(n for _, n in cum['histogram']) == cum['swap_ins']
    assert 0 < cum['extra_bytes'] <= 512 << 20
    # the RAM quota held: the rest overflowed to the backing file
    assert st['export']['ram_bytes'] <= 64 << 20
    assert c['evicted_pages'] > 0
    assert st['export']['stored_bytes'] > 64 << 20

    # 3. SIGKILL in the middle of step 2's swapping, restart
    g.wait_stat(lambda d: d['pswpout'] > quiet['pswpout'] + 16 * 256, 60,
                after=mark)
    before_kill = export.stats()['counters']['writes']
    assert before_kill > 0
    export.process.kill(signal.SIGKILL)
    killed_at = time.monotonic()
    time.sleep(1.0)
    export.process.start()
    restarted = time.monotonic() - killed_at
    assert 'restored export %s' % export.name in export.process.log()

    done = g.wait_done(timeout=150)
    g.wait_shutoff()
    assert done['errors'] == 0, g.log()[-3000:]
    ends = [d for d in g.workload_lines() if d['event'] == 'end']
    assert [e['step'] for e in ends] == [0, 1, 2]
    assert ends[-1]['passes'] >= 1 and ends[-1]['errors'] == 0
    # step 2 re-verified every page of the 288 MiB (73728 pages), most of
    # them written before the SIGKILL
    assert ends[2]['verified'] - ends[1]['verified'] >= 73728
    after = export.stats()
    assert after['counters']['writes'] > 0          # guest kept swapping
    assert after['counters']['file_read_pages'] > 0  # pages from before
    assert 'client connected' in export.process.log().split(
        'restored export')[-1]
    assert restarted < 30


def test_agent_hotplugs_and_never_unplugs_a_busy_swap_disk(guest_factory,
                                                           libvirtd):
    # 16 MiB for 5 s (time to hot-plug the disk), then 200 MiB in a guest
    # ballooned to 160 MiB: it swaps on the hot-plugged disk
    # (alloc='d': the 200 MiB mapping is made only then, once there is
    # swap; without swap the guest refuses it, ENOMEM)
    steps = [workloads.Step(16, 5), workloads.Step(200, 10)]
    g = guest_factory(memory_mib=256, current_mib=160, schedule=steps,
                      alloc='d', stat_period=1)
    assert g.wait_stat(lambda d: True)['swaptotal_kb'] == 0
    ms = guest_factory.memstore_server()
    conf = common.private_conf(
        libvirt=libvirtd.memmut_options(),
        memstore={'enabled': True, 'socket_dir': ms.socket_dir,
                  'swap_size_mb': 256, 'export_quota_mb': 32,
                  'histogram_bucket_pages': 64, 'reconnect_delay': 10})
    drv = driver.LibvirtDriver(conf)
    drv.connect()
    mgr = swapdisk.SwapDiskManager(conf, drv)
    vm = next(v for v in drv.list_vms() if v.uuid == g.uuid)

    mark = g.mark()
    assert mgr.ensure(vm)
    dom = g.dom
    assert mgr.is_attached(g.uuid) == (True, True)
    config = dom.XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE)
    if dom.connect().getLibVersion() < lv_swapdisk.LIBVIRT_NBD_RECONNECT:
        # libvirt 9.0 (Debian 12): QEMU passthrough with the delay
        assert lv_swapdisk.find_passthrough(config)
        args = [a.get('value') for a in ET.fromstring(config).iter(
            '{%s}arg' % lv_swapdisk.QEMU_NS)]
        assert json.loads(args[args.index('-blockdev') + 1])[
            'reconnect-delay'] == 10
        nodes = lv_swapdisk.qmp(dom, 'query-named-block-nodes')
        assert [n['drv'] for n in nodes
                if n['node-name'] == lv_swapdisk.PASSTHROUGH_NODE] == ['nbd']
    else:
        disk = lv_swapdisk.find_disk(config, ms.socket_path(g.uuid))
        assert disk.find('source/reconnect').get('delay') == '10'
    g.wait_for(r'MEMMUT-GUEST SWAP dev=/dev/vd\w size_kb=262144', 30,
               after=mark)
    assert mgr.ensure(vm)                   # idempotent: no second disk
    assert 'swap disk' not in g.log()[mark:].replace(
        'SWAP dev', '', 1).lower()

    g.wait_stat(lambda d: d['pswpout'] > 8 * 256, 90, after=mark)
    with pytest.raises(swapdisk.SwapDiskBusy):
        mgr.detach(vm)
    assert mgr.is_attached(g.uuid) == (True, True)
    mon = wait_until(lambda: mgr.monitor(g.uuid, reset=False),
                     lambda m: m is not None and m.swap_in_pages > 0, 60,
                     'swap-ins on the hot-plugged disk')
    assert mon.swap_out_pages > 8 * 256
    done = g.wait_done(timeout=120)
    assert done['errors'] == 0
    drv.close()
    mgr.client.close()
