"""The agent's swap-disk manager against a real memmut-memstore and a fake
driver implementing the Driver's swap-disk methods (the libvirt side is
tested in tests/unit/test_libvirt_swapdisk.py, the real-libvirt path by
tests/functional/test_memstore.py)."""

import dataclasses
import logging

import pytest

from memmut.agent.swap import swapdisk
from memmut.virt import driver as virt_driver
from memmut.virt import simulated
from tests.common import private_conf
from tests.harness import nbdclient as nbd
from tests import fakes


@dataclasses.dataclass
class FakeVM:
    active: bool = True
    persistent: bool = True
    live: bool = False          # the disk is in the running VM
    config: bool = False        # ... in its persistent definition


class FakeDriver(fakes.NullDriver):
    """Keeps, per VM, whether the swap disk is live and defined, the way
    the libvirt driver reports it; every swap-disk call is recorded."""
    def __init__(self):
        self.vms = {}
        self.calls = []
        self.refuse = None          # a SwapDiskRefused to raise
        self.pids = {}              # uuid -> QEMU pid (or an exception)

    def qemu_pid(self, uuid):
        pid = self.pids.get(uuid)
        if isinstance(pid, Exception):
            raise pid
        return pid

    def _vm(self, uuid):
        if self.refuse is not None:
            raise self.refuse
        try:
            return self.vms[uuid]
        except KeyError:
            raise virt_driver.VMNotFound(uuid)

    def attach_swap_disk(self, uuid, socket_path, export, target,
                         reconnect_delay, attach_mode='auto'):
        vm = self._vm(uuid)
        self.calls.append(('attach', uuid, socket_path, export, target,
                           reconnect_delay, attach_mode))
        hot = vm.active and not vm.live
        cold = vm.persistent and not vm.config
        vm.live |= hot
        vm.config |= cold
        return virt_driver.SwapDiskAttachment(
            mode='libvirt' if attach_mode == 'auto' else attach_mode,
            hot_plugged=hot, defined=cold)

    def swap_disk_attached(self, uuid, socket_path):
        vm = self._vm(uuid)
        return vm.live and vm.active, vm.config and vm.persistent

    def detach_swap_disk(self, uuid, socket_path, live, unplug_timeout=15):
        vm = self._vm(uuid)
        self.calls.append(('detach', uuid, socket_path, live))
        removed = vm.config or (live and vm.live)
        vm.config = False
        if live:
            vm.live = False
        return removed


def vm(uuid='0b5c6a64-0000-4000-8000-000000000001'):
    return virt_driver.VMInfo(uuid=uuid, name='web-1', state='running',
                              booked_kb=1 << 20, balloon_kb=1 << 20,
                              memory_stats={}, cpu_time_ns=0)


@pytest.fixture
def manager(memstore):
    return _manager(memstore)


def _manager(memstore, driver=None, **opts):
    conf = private_conf(memstore={
        'enabled': True, 'socket_dir': memstore.socket_dir,
        'swap_size_mb': 8, 'export_quota_mb': 1, 'host_quota_mb': 32,
        'histogram_bucket_pages': 4, 'reconnect_delay': 7, **opts})
    return swapdisk.SwapDiskManager(conf, driver or FakeDriver())


def test_ensure_creates_the_export_and_attaches_once(manager, memstore,
                                                     caplog):
    caplog.set_level(logging.DEBUG)
    assert manager.opts.attach_mode == 'auto'
    v = vm()
    drv = manager.driver
    fake = drv.vms[v.uuid] = FakeVM()
    assert manager.ensure(v)
    sock = memstore.socket_path(v.uuid)
    assert drv.calls == [('attach', v.uuid, sock, v.uuid, 'vdz', 7,
                          'auto')]
    assert (fake.live, fake.config) == (True, True)
    assert ('memstore swap disk hot-plugged and added to the definition '
            '(%s, libvirt, reconnect delay 7 s)' % sock) in caplog.text
    info = manager.client.get_export(v.uuid)
    assert info['size'] == 8 << 20 and info['quota'] == 1 << 20
    assert info['socket'] == sock == manager.socket_path(v.uuid)
    assert manager.client.hello()['host_quota'] == 32 << 20
    assert manager.is_attached(v.uuid) == (True, True)
    # adopted again (agent restart): the driver has nothing to do
    caplog.clear()
    assert manager.ensure(v)
    assert 'already attached' in caplog.text
    # the mode the driver chose is logged; options are passed through
    mgr = _manager(memstore, attach_mode='qemu-passthrough',
                   reconnect_delay=0, disk_target='vdy')
    mgr.driver.vms[v.uuid] = FakeVM(active=False)
    caplog.clear()
    assert mgr.ensure(v)
    assert mgr.driver.calls == [('attach', v.uuid, sock, v.uuid, 'vdy', 0,
                                 'qemu-passthrough')]
    assert ('memstore swap disk added to the definition (%s, '
            'qemu-passthrough, reconnect delay 0 s)' % sock) in caplog.text


def test_failures_are_logged_with_the_vm(manager, memstore, caplog):
    caplog.set_level(logging.ERROR)
    assert not manager.ensure(vm())           # no such VM
    assert 'web-1' in caplog.text and 'no memstore swap disk' in caplog.text
    caplog.clear()
    v = vm('0b5c6a64-0000-4000-8000-000000000009')
    manager.driver.vms[v.uuid] = FakeVM()
    manager.driver.refuse = virt_driver.SwapDiskRefused(
        'libvirt refused the disk: no PCI slot')
    assert not manager.ensure(v)
    assert ('%s): no memstore swap disk: libvirt refused the disk: no PCI '
            'slot' % v.uuid) in caplog.text
    manager.driver.refuse = None
    caplog.clear()
    memstore.kill()
    v = vm('0b5c6a64-0000-4000-8000-00000000000a')
    manager.driver.vms[v.uuid] = FakeVM()
    assert not manager.ensure(v)
    assert v.uuid in caplog.text and 'cannot connect' in caplog.text


def test_a_driver_without_swap_disks_is_logged(memstore, caplog):
    caplog.set_level(logging.ERROR)
    conf = private_conf(simulated_hypervisor={'vms': ['a:512:W1']})
    sim = simulated.SimDriver(conf)
    a = sim.list_vms()[0]
    mgr = _manager(memstore, driver=sim)
    assert not mgr.ensure(a)
    assert ('VM a (%s): no memstore swap disk: the sim driver cannot attach '
            'disks (memstore swap disks need the libvirt driver)'
            % a.uuid) in caplog.text
    with pytest.raises(virt_driver.SwapDisksUnsupported):
        mgr.is_attached(a.uuid)
    caplog.clear()
    with pytest.raises(swapdisk.SwapDiskError, match='cannot attach disks'):
        mgr.detach(a)
    assert 'cannot detach the memstore swap disk' in caplog.text


def test_never_detaches_a_disk_in_use(manager, memstore, caplog):
    caplog.set_level(logging.INFO)
    v = vm()
    drv = manager.driver
    fake = drv.vms[v.uuid] = FakeVM()
    assert manager.ensure(v)
    c = nbd.NBDClient(memstore.socket_path(v.uuid)).connect()
    assert c.write(0, b's' * 4096) == 0            # the guest swapped
    with pytest.raises(swapdisk.SwapDiskBusy, match='swapped out'):
        manager.detach(v)
    assert 'not detaching the swap disk of running VM web-1' in caplog.text
    assert fake.live and [k[0] for k in drv.calls] == ['attach']
    # discarded again (swapoff with discard): still busy, recent I/O
    assert c.simple(nbd.CMD_TRIM, 0, 4096) == 0
    with pytest.raises(swapdisk.SwapDiskBusy, match='I/O on it'):
        manager.detach(v)
    assert [k[0] for k in drv.calls] == ['attach']
    manager.clock = lambda: 4e9                    # ... long after
    caplog.clear()
    manager.detach(v)
    assert drv.calls[-1] == ('detach', v.uuid,
                             memstore.socket_path(v.uuid), True)
    assert not fake.live and not fake.config
    assert 'memstore swap disk detached' in caplog.text
    c.close()


def test_detach_of_a_stopped_domain(manager, memstore):
    v = vm()
    fake = manager.driver.vms[v.uuid] = FakeVM(active=False)
    assert manager.ensure(v)
    c = nbd.NBDClient(memstore.socket_path(v.uuid)).connect()
    assert c.write(0, b's' * 4096) == 0
    c.disconnect()
    manager.detach(v)                              # not running: allowed
    assert manager.driver.calls[-1] == (
        'detach', v.uuid, memstore.socket_path(v.uuid), False)
    assert not fake.config
    # a driver's refusal becomes a logged SwapDiskError
    manager.driver.refuse = virt_driver.SwapDiskRefused('nope')
    with pytest.raises(swapdisk.SwapDiskError, match='nope'):
        manager.detach(v)
    # no export: nothing asked of the driver
    with pytest.raises(swapdisk.SwapDiskError, match='no memstore export'):
        manager.detach(vm('0b5c6a64-0000-4000-8000-00000000000b'))


def test_monitor(manager, memstore):
    v = vm()
    manager.driver.vms[v.uuid] = FakeVM()
    assert manager.ensure(v)
    c = nbd.NBDClient(memstore.socket_path(v.uuid)).connect()
    for p in range(16):
        assert c.write(p * 4096, bytes(4096)) == 0
    assert c.read(0, 4096)[0] == 0                 # D = 15 -> bucket 3
    c.disconnect()
    m = manager.monitor(v.uuid)
    assert (m.swap_out_pages, m.swap_in_pages) == (16, 1)
    assert m.histogram == {3: 1} and m.bucket_pages == 4
    assert m.extra_bytes == 16 * 4096
    assert manager.monitor(v.uuid).interval_swap_ins == 0   # was reset
    assert manager.monitor('nope') is None


def test_agent_gives_adopted_vms_a_swap_disk_only_when_enabled(memstore):
    from memmut.agent import manager as agent_manager
    off = agent_manager.AgentManager(private_conf(), FakeDriver(), None)
    assert off.swapdisks is None
    on_conf = private_conf(memstore={'enabled': True,
                                     'socket_dir': memstore.socket_dir,
                                     'swap_size_mb': 4})
    driver = FakeDriver()
    on = agent_manager.AgentManager(on_conf, driver, None)
    v = vm()
    driver.vms[v.uuid] = FakeVM()
    on._adopt(v)
    assert driver.vms[v.uuid].live
    assert on._memstore_read(v) is not None


def test_the_export_follows_the_qemu_pid(manager, memstore, caplog):
    import os
    import subprocess
    caplog.set_level(logging.INFO)
    v = vm()
    drv = manager.driver
    drv.vms[v.uuid] = FakeVM()
    qemu = subprocess.Popen(['sleep', '60'])
    try:
        drv.pids[v.uuid] = qemu.pid
        assert manager.ensure(v)
        assert manager.client.get_export(v.uuid)['pid'] == qemu.pid
        assert ('memstore export %s bound to QEMU pid %d'
                % (v.uuid, qemu.pid)) in caplog.text
        caplog.clear()
        manager.follow(v)                         # unchanged: no call
        assert 'bound' not in caplog.text
        drv.pids[v.uuid] = os.getpid()            # a restarted QEMU
        manager.follow(v)
        assert manager.client.get_export(v.uuid)['pid'] == os.getpid()
        drv.pids[v.uuid] = None                   # shut off: next boot
        manager.follow(v)
        assert manager.client.get_export(v.uuid)['pid'] is None
        assert 'unbound (no QEMU process)' in caplog.text
        drv.pids[v.uuid] = RuntimeError('pid file unreadable')
        assert not manager.bind(v)
        assert 'keeps its binding' in caplog.text
        drv.pids[v.uuid] = qemu.pid
        assert manager.bind(v)
        assert manager.client.get_export(v.uuid)['pid'] == qemu.pid
        # the VM left the host (shut off: no longer listed): unbound, so
        # its next QEMU can connect at boot
        manager.forget(v.uuid)
        assert manager.client.get_export(v.uuid)['pid'] is None
        assert 'unbound (its QEMU pid %d is gone)' % qemu.pid in caplog.text
        manager.follow(v)                         # forgotten: not followed
        assert manager.client.get_export(v.uuid)['pid'] is None
        # [memstore] bind_qemu_pid = false: never bound
        off = _manager(memstore, driver=drv, bind_qemu_pid=False)
        assert off.ensure(v)
        assert off.client.get_export(v.uuid)['pid'] is None
    finally:
        qemu.kill()
        qemu.wait()


def test_the_agent_rebinds_at_every_poll(memstore):
    import os
    import subprocess
    from memmut.agent import manager as agent_manager

    class PollDriver(FakeDriver):
        def host_info(self):
            return virt_driver.HostInfo(memory_total_kb=8 << 20,
                                        memory_free_kb=4 << 20,
                                        cpu_count=2, cpu_util=0.1)

        def list_vms(self):
            return [vm(u) for u in self.vms]

    conf = private_conf(memstore={'enabled': True,
                                  'socket_dir': memstore.socket_dir,
                                  'swap_size_mb': 4})
    driver = PollDriver()
    v = vm()
    driver.vms[v.uuid] = FakeVM()
    qemu = subprocess.Popen(['sleep', '60'])
    try:
        driver.pids[v.uuid] = qemu.pid
        agent = agent_manager.AgentManager(conf, driver, None)
        agent.poll_once()                              # adopts: ensure
        ctl = agent.swapdisks.client
        assert ctl.get_export(v.uuid)['pid'] == qemu.pid
        driver.pids[v.uuid] = os.getpid()              # QEMU restarted
        agent.poll_once()
        assert ctl.get_export(v.uuid)['pid'] == os.getpid()
    finally:
        qemu.kill()
        qemu.wait()
