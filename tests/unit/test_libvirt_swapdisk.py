"""The libvirt side of memstore swap disks (memmut/virt/libvirt/swapdisk.py):
the pure domain XML / QEMU argument helpers, the attach / inspect / detach
operations against a recording stand-in for a libvirt domain, and the
LibvirtDriver methods wrapping them (the real-libvirt path is covered by
tests/functional/test_memstore.py)."""

import json
import types
import xml.etree.ElementTree as ET

import pytest

from memmut.virt import driver as virt_driver
from memmut.virt.libvirt import driver as lv_driver
from memmut.virt.libvirt import swapdisk
from tests import common

try:
    import libvirt
except ImportError:
    # The unit env need not build libvirt-python: the few names the
    # libvirt modules use here, with libvirt's values.
    libvirt = types.SimpleNamespace(
        VIR_DOMAIN_AFFECT_LIVE=1, VIR_DOMAIN_AFFECT_CONFIG=2,
        VIR_DOMAIN_XML_SECURE=1, VIR_DOMAIN_XML_INACTIVE=2,
        VIR_ERR_NO_DOMAIN=42,
        registerErrorHandler=lambda handler, ctx: None,
        libvirtError=type('libvirtError', (Exception,), {}))


class Error(libvirt.libvirtError):
    """A libvirt error with a code and a message."""

    def __init__(self, message, code=0):
        Exception.__init__(self, message)
        self.code = code

    def get_error_code(self):
        return self.code

    def get_error_message(self):
        return str(self)


@pytest.fixture(autouse=True)
def _libvirt_names(monkeypatch):
    if swapdisk.libvirt is None:
        monkeypatch.setattr(swapdisk, 'libvirt', libvirt)
    if lv_driver.libvirt is None:
        monkeypatch.setattr(lv_driver, 'libvirt', libvirt)


SOCK = '/run/m/u.sock'
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
        self.refuse = {}            # QMP command -> error description
        self.linger = False         # device_del leaves the device

    def connect(self):
        return self.conn

    def monitor(self, dom, command, flags):
        assert dom is self and flags == 0
        msg = json.loads(command)
        self.qmp.append(msg)
        cmd = msg['execute']
        if cmd in self.refuse:
            return json.dumps({'error': {'class': 'GenericError',
                                         'desc': self.refuse[cmd]}})
        if cmd == 'qom-list':
            return json.dumps({'return': [{'name': n, 'type': 'x'}
                                          for n in self.peripherals]})
        if cmd == 'device_add':
            self.peripherals.append(msg['arguments']['id'])
        if cmd == 'device_del' and not self.linger:
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


def disk(dom):
    return swapdisk.DomainSwapDisk(dom, SOCK, monitor=dom.monitor)


# -- pure helpers -------------------------------------------------------------

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
    assert d.find('serial').text == 'memmut-swap'
    # memstore full (ENOSPC) is the guest's write error, not a paused VM
    assert d.find('driver').get('error_policy') == 'report'
    assert d.find('driver').get('rerror_policy') == 'report'
    assert swapdisk.find_disk(DOMAIN % xml, '/run/s/vm.sock') is not None
    assert swapdisk.find_disk(DOMAIN % xml, '/other.sock') is None
    assert ET.fromstring(swapdisk.disk_xml('/s', 'v', reconnect_delay=0)
                         ).find('source/reconnect') is None


def test_passthrough_args_round_trip():
    args = swapdisk.passthrough_args('/run/m/u.sock', 'u', 30)
    assert args[0] == '-blockdev' and args[2] == '-device'
    node = json.loads(args[1])
    assert node == {'driver': 'nbd', 'node-name': 'memmut-swap',
                    'server': {'type': 'unix', 'path': '/run/m/u.sock'},
                    'export': 'u', 'reconnect-delay': 30}
    # I/O errors are reported to the guest, never a paused VM
    assert args[3] == ('virtio-blk-pci,drive=memmut-swap,id=memmut-swap0,'
                       'serial=memmut-swap,bus=pci.0,addr=0x1e,'
                       'werror=report,rerror=report')
    assert 'reconnect-delay' not in swapdisk.blockdev('/s', 'u', 0)
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


def test_choose_mode():
    def version(v):
        def read():
            read.calls += 1
            return v
        read.calls = 0
        return read
    old, new = version(9000000), version(9002000)
    assert swapdisk.choose_mode('auto', 10, old) == 'qemu-passthrough'
    assert swapdisk.choose_mode('auto', 10, new) == 'libvirt'
    # no delay to honour: a plain libvirt disk, libvirt not asked
    fresh = version(9000000)
    assert swapdisk.choose_mode('auto', 0, fresh) == 'libvirt'
    for mode in swapdisk.MODES:
        assert swapdisk.choose_mode(mode, 10, fresh) == mode
    assert fresh.calls == 0


# -- operations on a domain ---------------------------------------------------

def test_libvirt_mode_cold_and_hot_plugs_once():
    dom = Domain()
    done = disk(dom).attach('u', 'vdz', 7, 'auto')
    assert done == virt_driver.SwapDiskAttachment('libvirt', True, True)
    assert dom.calls == [('attach', libvirt.VIR_DOMAIN_AFFECT_LIVE
                          | libvirt.VIR_DOMAIN_AFFECT_CONFIG)]
    d = swapdisk.find_disk(dom.XMLDesc(0), SOCK)
    assert d.find('source/reconnect').get('delay') == '7'
    assert d.find('source').get('name') == 'u'
    assert disk(dom).attached() == (True, True)
    # again (agent restart): nothing new
    assert disk(dom).attach('u', 'vdz', 7, 'auto') == \
        virt_driver.SwapDiskAttachment('libvirt', False, False)
    assert len(dom.calls) == 1 and dom.qmp == []
    # a shut-off persistent domain: definition only
    off = Domain(active=False)
    assert disk(off).attach('u', 'vdz', 7, 'auto').defined
    assert off.calls == [('attach', libvirt.VIR_DOMAIN_AFFECT_CONFIG)]
    assert disk(off).attached() == (False, True)
    # a transient running domain: live only
    transient = Domain(persistent=False)
    assert disk(transient).attach('u', 'vdz', 7, 'auto').hot_plugged
    assert transient.calls == [('attach', libvirt.VIR_DOMAIN_AFFECT_LIVE)]
    assert disk(transient).attached() == (True, False)


def test_libvirt_mode_detach():
    dom = Domain()
    disk(dom).attach('u', 'vdz', 7, 'libvirt')
    # not told it may unplug from the running domain: definition only
    assert disk(dom).detach(live=False)
    assert dom.calls[-1] == ('detach', libvirt.VIR_DOMAIN_AFFECT_CONFIG)
    assert dom.live and not dom.config
    assert disk(dom).detach(live=True)
    assert dom.calls[-1] == ('detach', libvirt.VIR_DOMAIN_AFFECT_LIVE)
    assert not disk(dom).detach(live=True)      # nothing left
    assert disk(dom).attached() == (False, False)


def test_auto_mode_uses_passthrough_on_old_libvirt():
    dom = Domain(version=9000000)
    done = disk(dom).attach('u', 'vdz', 7, 'auto')
    assert done == virt_driver.SwapDiskAttachment('qemu-passthrough', True,
                                                  True)
    assert [m['execute'] for m in dom.qmp] == ['qom-list', 'blockdev-add',
                                               'device_add']
    add = dom.qmp[1]['arguments']
    assert add['reconnect-delay'] == 7 and add['export'] == 'u'
    assert add['server']['path'] == SOCK
    assert dom.qmp[2]['arguments'] == swapdisk.frontend()
    assert swapdisk.find_passthrough(dom.defined)
    assert disk(dom).attached() == (True, True)
    n = len(dom.qmp)
    assert not disk(dom).attach('u', 'vdz', 7, 'auto').hot_plugged
    assert [m['execute'] for m in dom.qmp[n:]] == ['qom-list']
    assert dom.calls == [('define', None)]
    # not told it may unplug: the running domain keeps the device
    assert disk(dom).detach(live=False)
    assert dom.peripherals == ['memmut-swap0']
    assert not swapdisk.find_passthrough(dom.defined)
    # told it may: device_del, wait for the guest, blockdev-del
    n = len(dom.qmp)
    assert disk(dom).detach(live=True)
    assert [m['execute'] for m in dom.qmp[n:]] == [
        'qom-list', 'device_del', 'qom-list', 'blockdev-del']
    assert dom.qmp[-1]['arguments'] == {'node-name': 'memmut-swap'}
    assert disk(dom).attached() == (False, False)
    # reconnect delay 0 or attach_mode=libvirt: a plain libvirt disk
    dom2 = Domain(version=9000000)
    assert disk(dom2).attach('u', 'vdz', 0, 'auto').mode == 'libvirt'
    assert dom2.qmp == [] and dom2.live


def test_passthrough_failures():
    dom = Domain(version=9000000)
    # a node left by a failed earlier try is reused
    dom.refuse['blockdev-add'] = "Duplicate nodes with node-name='x'"
    assert disk(dom).attach('u', 'vdz', 7, 'qemu-passthrough').hot_plugged
    assert dom.peripherals == ['memmut-swap0']
    # any other refusal is QEMU's, with its reason
    dom2 = Domain(version=9000000)
    dom2.refuse['blockdev-add'] = 'Could not open socket'
    with pytest.raises(virt_driver.SwapDiskRefused,
                       match='QEMU refused blockdev-add: Could not open'):
        disk(dom2).attach('u', 'vdz', 7, 'auto')
    # a guest that does not release the device
    dom.linger = True
    with pytest.raises(virt_driver.SwapDiskRefused,
                       match='did not release the swap disk within 0.3 s'):
        disk(dom).detach(live=True, unplug_timeout=0.3)
    assert 'blockdev-del' not in [m['execute'] for m in dom.qmp]


# -- the LibvirtDriver methods -----------------------------------------------

class LookupConn:
    def __init__(self, domains):
        self.domains = domains

    def lookupByUUIDString(self, uuid):
        try:
            return self.domains[uuid]
        except KeyError:
            raise Error('Domain not found: %s' % uuid,
                        libvirt.VIR_ERR_NO_DOMAIN)


class BrokenDomain(Domain):
    def attachDeviceFlags(self, xml, flags):
        raise Error('unsupported configuration: no slot')

    def detachDeviceFlags(self, xml, flags):
        raise Error('operation failed: busy')


def test_libvirt_driver_swap_disk_methods(monkeypatch):
    dom = Domain()
    drv = lv_driver.LibvirtDriver(common.private_conf())
    drv._conn = LookupConn({'u1': dom, 'u2': BrokenDomain()})
    monkeypatch.setattr(swapdisk, 'monitor_command', dom.monitor)
    assert drv.attach_swap_disk('u1', SOCK, 'u1', 'vdz', 7, 'libvirt') == \
        virt_driver.SwapDiskAttachment('libvirt', True, True)
    assert drv.swap_disk_attached('u1', SOCK) == (True, True)
    assert drv.detach_swap_disk('u1', SOCK, live=True)
    assert drv.swap_disk_attached('u1', SOCK) == (False, False)
    with pytest.raises(virt_driver.VMNotFound):
        drv.attach_swap_disk('nope', SOCK, 'nope', 'vdz', 7)
    # libvirt's refusals come out typed, with libvirt's reason
    with pytest.raises(virt_driver.SwapDiskRefused,
                       match='libvirt refused the disk: unsupported'):
        drv.attach_swap_disk('u2', SOCK, 'u2', 'vdz', 7, 'libvirt')
    drv._conn.domains['u2'].config.append(swapdisk.disk_xml(SOCK, 'u2'))
    with pytest.raises(virt_driver.SwapDiskRefused,
                       match='libvirt refused to detach it: operation'):
        drv.detach_swap_disk('u2', SOCK, live=False)
