"""The agent's swap-disk manager against a real memmut-memstore and a
recording stand-in for a libvirt domain (the real-libvirt path is covered
by tests/functional/test_memstore.py)."""

import json
import logging
import types
import xml.etree.ElementTree as ET

import pytest

from memmut.agent.swap import swapdisk
from memmut.virt import driver as virt_driver
from tests.common import private_conf
from tests.unit.memstore import nbdclient as nbd

try:
    import libvirt
except ImportError:
    # The unit env need not build libvirt-python: the few names swapdisk
    # uses, with libvirt's values.
    libvirt = types.SimpleNamespace(
        VIR_DOMAIN_AFFECT_LIVE=1, VIR_DOMAIN_AFFECT_CONFIG=2,
        VIR_DOMAIN_XML_SECURE=1, VIR_DOMAIN_XML_INACTIVE=2,
        libvirtError=type('libvirtError', (Exception,), {}))


@pytest.fixture(autouse=True)
def _libvirt_names(monkeypatch):
    if swapdisk.libvirt is None:
        monkeypatch.setattr(swapdisk, 'libvirt', libvirt)


DOMAIN = '''<domain type='qemu'><name>vm</name><devices>
<disk type='file' device='disk'><source file='/x.img'/>
<target dev='vda' bus='virtio'/></disk>%s</devices></domain>'''


class Conn:
    def __init__(self, dom, version):
        self.dom, self.version = dom, version

    def getLibVersion(self):
        return self.version

    def defineXML(self, xml):
        self.dom.calls.append(('define', None))
        self.dom.defined = xml


class Domain:
    """Keeps a live and a persistent device list like libvirt does; QMP
    commands (passthrough mode) are recorded and answered."""

    def __init__(self, active=True, persistent=True, version=9002000):
        self.active, self.persistent = active, persistent
        self.live, self.config = [], []
        self.calls = []
        self.conn = Conn(self, version)
        self.defined = None
        self.qmp = []
        self.peripherals = []

    def connect(self):
        return self.conn

    def monitor(self, command):
        msg = json.loads(command)
        self.qmp.append(msg)
        cmd = msg['execute']
        if cmd == 'qom-list':
            return json.dumps({'return': [{'name': n, 'type': 'x'}
                                          for n in self.peripherals]})
        if cmd == 'device_add':
            self.peripherals.append(msg['arguments']['id'])
        if cmd == 'device_del':
            self.peripherals.remove(msg['arguments']['id'])
        return json.dumps({'return': {}})

    def isActive(self):
        return self.active

    def isPersistent(self):
        return self.persistent

    def XMLDesc(self, flags=0):
        if flags & libvirt.VIR_DOMAIN_XML_INACTIVE and self.defined:
            return self.defined
        disks = self.config if flags & libvirt.VIR_DOMAIN_XML_INACTIVE \
            else self.live
        return DOMAIN % ''.join(disks)

    def attachDeviceFlags(self, xml, flags):
        self.calls.append(('attach', flags))
        if flags & libvirt.VIR_DOMAIN_AFFECT_LIVE:
            self.live.append(xml)
        if flags & libvirt.VIR_DOMAIN_AFFECT_CONFIG:
            self.config.append(xml)

    def detachDeviceFlags(self, xml, flags):
        self.calls.append(('detach', flags))
        if flags & libvirt.VIR_DOMAIN_AFFECT_LIVE:
            self.live = []
        if flags & libvirt.VIR_DOMAIN_AFFECT_CONFIG:
            self.config = []


class Driver:
    name = 'libvirt'

    def __init__(self):
        self.domains = {}

    def _domain(self, uuid):
        try:
            return self.domains[uuid]
        except KeyError:
            raise virt_driver.VMNotFound(uuid)


def vm(uuid='0b5c6a64-0000-4000-8000-000000000001'):
    return virt_driver.VMInfo(uuid=uuid, name='web-1', state='running',
                              booked_kb=1 << 20, balloon_kb=1 << 20,
                              memory_stats={}, cpu_time_ns=0)


@pytest.fixture
def manager(memstore):
    return _manager(memstore)


def _manager(memstore, **opts):
    conf = private_conf(memstore={
        'enabled': True, 'socket_dir': memstore.socket_dir,
        'swap_size_mb': 8, 'export_quota_mb': 1, 'host_quota_mb': 32,
        'histogram_bucket_pages': 4, 'reconnect_delay': 7, **opts})
    mgr = swapdisk.SwapDiskManager(conf, Driver())
    mgr.monitor_command = lambda dom, cmd, flags: dom.monitor(cmd)
    return mgr


def test_disk_xml():
    xml = swapdisk.disk_xml('/run/s/vm.sock', 'vm', 'vdz', 5)
    d = ET.fromstring(xml)
    assert d.get('type') == 'network'
    src = d.find('source')
    assert (src.get('protocol'), src.get('name')) == ('nbd', 'vm')
    assert src.find('host').attrib == {'transport': 'unix',
                                       'socket': '/run/s/vm.sock'}
    assert src.find('reconnect').get('delay') == '5'
    assert d.find('target').attrib == {'dev': 'vdz', 'bus': 'virtio'}
    assert swapdisk.find_disk(DOMAIN % xml, '/run/s/vm.sock') is not None
    assert swapdisk.find_disk(DOMAIN % xml, '/other.sock') is None
    assert ET.fromstring(swapdisk.disk_xml('/s', 'v', reconnect_delay=0)
                         ).find('source/reconnect') is None


def test_ensure_cold_and_hot_plug_once(manager, memstore):
    assert manager.opts.attach_mode == 'auto'
    v = vm()
    dom = manager.driver.domains[v.uuid] = Domain()
    assert manager.ensure(v)
    assert dom.calls == [('attach', libvirt.VIR_DOMAIN_AFFECT_LIVE
                          | libvirt.VIR_DOMAIN_AFFECT_CONFIG)]
    info = manager.client.get_export(v.uuid)
    assert info['size'] == 8 << 20 and info['quota'] == 1 << 20
    assert manager.client.hello()['host_quota'] == 32 << 20
    disk = swapdisk.find_disk(dom.XMLDesc(0), memstore.socket_path(v.uuid))
    assert disk.find('source/reconnect').get('delay') == '7'
    # adopted again (agent restart): nothing new
    assert manager.ensure(v)
    assert len(dom.calls) == 1
    # a shut-off persistent domain: definition only
    v2 = vm('0b5c6a64-0000-4000-8000-000000000002')
    dom2 = manager.driver.domains[v2.uuid] = Domain(active=False)
    assert manager.ensure(v2)
    assert dom2.calls == [('attach', libvirt.VIR_DOMAIN_AFFECT_CONFIG)]
    # a transient running domain: live only
    v3 = vm('0b5c6a64-0000-4000-8000-000000000003')
    dom3 = manager.driver.domains[v3.uuid] = Domain(persistent=False)
    assert manager.ensure(v3)
    assert dom3.calls == [('attach', libvirt.VIR_DOMAIN_AFFECT_LIVE)]


def test_failures_are_logged_with_the_vm(manager, memstore, caplog):
    caplog.set_level(logging.ERROR)
    assert not manager.ensure(vm())           # no such domain
    assert 'web-1' in caplog.text and 'no memstore swap disk' in caplog.text
    caplog.clear()
    memstore.kill()
    v = vm('0b5c6a64-0000-4000-8000-00000000000a')
    manager.driver.domains[v.uuid] = Domain()
    assert not manager.ensure(v)
    assert v.uuid in caplog.text and 'cannot connect' in caplog.text


def test_never_detaches_a_disk_in_use(manager, memstore):
    v = vm()
    dom = manager.driver.domains[v.uuid] = Domain()
    assert manager.ensure(v)
    c = nbd.NBDClient(memstore.socket_path(v.uuid)).connect()
    assert c.write(0, b's' * 4096) == 0            # the guest swapped
    with pytest.raises(swapdisk.SwapDiskBusy, match='swapped out'):
        manager.detach(v)
    assert len(dom.live) == 1
    # discarded again (swapoff with discard): still busy, recent I/O
    assert c.simple(nbd.CMD_TRIM, 0, 4096) == 0
    with pytest.raises(swapdisk.SwapDiskBusy, match='I/O on it'):
        manager.detach(v)
    manager.clock = lambda: 4e9                    # ... long after
    manager.detach(v)
    assert dom.live == [] and dom.config == []
    c.close()


def test_detach_of_a_stopped_domain(manager, memstore):
    v = vm()
    dom = manager.driver.domains[v.uuid] = Domain(active=False)
    assert manager.ensure(v)
    c = nbd.NBDClient(memstore.socket_path(v.uuid)).connect()
    assert c.write(0, b's' * 4096) == 0
    c.disconnect()
    manager.detach(v)                              # not running: allowed
    assert dom.calls[-1] == ('detach', libvirt.VIR_DOMAIN_AFFECT_CONFIG)


def test_monitor(manager, memstore):
    v = vm()
    manager.driver.domains[v.uuid] = Domain()
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
    off = agent_manager.AgentManager(private_conf(), Driver(), None)
    assert off.swapdisks is None
    on_conf = private_conf(memstore={'enabled': True,
                                     'socket_dir': memstore.socket_dir,
                                     'swap_size_mb': 4})
    driver = Driver()
    on = agent_manager.AgentManager(on_conf, driver, None)
    v = vm()
    driver.domains[v.uuid] = Domain()
    on._adopt(v)
    assert driver.domains[v.uuid].live
    assert on._memstore_read(v) is not None


def test_passthrough_args_round_trip():
    args = swapdisk.passthrough_args('/run/m/u.sock', 'u', 30)
    assert args[0] == '-blockdev' and args[2] == '-device'
    node = json.loads(args[1])
    assert node == {'driver': 'nbd', 'node-name': 'memmut-swap',
                    'server': {'type': 'unix', 'path': '/run/m/u.sock'},
                    'export': 'u', 'reconnect-delay': 30}
    assert args[3] == ('virtio-blk-pci,drive=memmut-swap,id=memmut-swap0,'
                       'serial=memmut-swap,bus=pci.0,addr=0x1e')
    base = DOMAIN % ''
    xml = swapdisk.add_passthrough(base, args)
    assert swapdisk.find_passthrough(xml)
    assert 'xmlns:qemu="%s"' % swapdisk.QEMU_NS in xml
    back = swapdisk.remove_passthrough(xml)
    assert not swapdisk.find_passthrough(back)
    assert 'commandline' not in back
    # other passthrough arguments are kept
    other = swapdisk.add_passthrough(base, ['-msg', 'timestamp=on'])
    both = swapdisk.add_passthrough(other, args)
    kept = swapdisk.remove_passthrough(both)
    assert 'timestamp=on' in kept and not swapdisk.find_passthrough(kept)


def test_auto_mode_uses_passthrough_on_old_libvirt(memstore):
    mgr = _manager(memstore)
    v = vm()
    dom = mgr.driver.domains[v.uuid] = Domain(version=9000000)
    assert mgr.ensure(v)
    assert [m['execute'] for m in dom.qmp] == ['qom-list', 'blockdev-add',
                                               'device_add']
    add = dom.qmp[1]['arguments']
    assert add['reconnect-delay'] == 7
    assert add['server']['path'] == memstore.socket_path(v.uuid)
    assert swapdisk.find_passthrough(dom.defined)
    assert mgr.is_attached(v.uuid) == (True, True)
    assert mgr.ensure(v)                      # idempotent
    assert [m['execute'] for m in dom.qmp[4:]] == ['qom-list']
    assert dom.calls == [('define', None)]
    # busy: nothing changes
    c = nbd.NBDClient(memstore.socket_path(v.uuid)).connect()
    assert c.write(0, b'x' * 4096) == 0
    c.disconnect()
    with pytest.raises(swapdisk.SwapDiskBusy):
        mgr.detach(v)
    assert dom.peripherals == ['memmut-swap0']
    # a stopped domain: only the definition is edited
    dom.active = False
    mgr.detach(v)
    assert not swapdisk.find_passthrough(dom.defined)
    # reconnect delay 0 or attach_mode=libvirt: a plain libvirt disk
    mgr0 = _manager(memstore, reconnect_delay=0)
    v2 = vm('0b5c6a64-0000-4000-8000-000000000002')
    dom2 = mgr0.driver.domains[v2.uuid] = Domain(version=9000000)
    assert mgr0.ensure(v2)
    assert dom2.qmp == [] and dom2.live
