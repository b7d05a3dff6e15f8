"""The libvirt side of memmut-memstore swap disks: domain XML and QMP.

:class:`memmut.virt.libvirt.driver.LibvirtDriver` implements the Driver's
swap-disk methods with the functions here; the agent's
:mod:`memmut.agent.swap.swapdisk` keeps the memstore side and the safety
policy and never sees a domain.

A swap disk is a virtio disk served by a memstore export over NBD on a unix
socket, with a reconnect delay so that QEMU waits for a restarted memstore
instead of failing guest I/O.  libvirt gained ``<reconnect delay=.../>``
for NBD disks only in 9.2 (9.0, Debian 12's, drops the element silently),
so it is attached in one of two modes:

``libvirt``
    a libvirt ``<disk>`` (:func:`disk_xml`) through attachDeviceFlags, live
    and/or config;
``qemu-passthrough``
    ``-blockdev``/``-device`` arguments in the definition's
    ``<qemu:commandline>`` (cold) and QMP ``blockdev-add`` + ``device_add``
    through libvirt (hot), both with the same node name, device id and PCI
    slot (``PASSTHROUGH_PCI_ADDR`` on the root bus of an i440fx machine).

``auto`` (:func:`choose_mode`) takes ``libvirt`` on libvirt >= 9.2 or when
there is no reconnect delay, else ``qemu-passthrough``.  Deciding whether a
live detach is safe is the caller's business: :func:`detach` unplugs from
the running domain only when told to.
"""

import json
import time
import xml.etree.ElementTree as ET

from memmut.virt import driver

try:
    import libvirt
    import libvirt_qemu
except ImportError:  # pragma: no cover - exercised on hosts without libvirt
    libvirt = libvirt_qemu = None

SERIAL = 'memmut-swap'
QEMU_NS = 'http://libvirt.org/schemas/domain/qemu/1.0'
ET.register_namespace('qemu', QEMU_NS)
# libvirt 9.2.0 added <reconnect delay=.../> to NBD disk sources
LIBVIRT_NBD_RECONNECT = 9002000
PASSTHROUGH_NODE = 'memmut-swap'
PASSTHROUGH_ID = 'memmut-swap0'
PASSTHROUGH_BUS = 'pci.0'
PASSTHROUGH_PCI_ADDR = '0x1e'
MODES = ('libvirt', 'qemu-passthrough')
# What QEMU does with an I/O error of the swap disk (memstore full: ENOSPC)
ERROR_POLICY = 'report'


# -- pure XML / QMP argument helpers -----------------------------------------

def disk_xml(socket_path, export, target='vdz', reconnect_delay=10):
    """libvirt <disk> XML of a memstore swap disk."""
    disk = ET.Element('disk', type='network', device='disk')
    # Errors go to the guest, whose swap keeps a page it could not write in
    # RAM: QEMU's default would pause the whole VM when memstore is full.
    ET.SubElement(disk, 'driver', name='qemu', type='raw',
                  error_policy=ERROR_POLICY, rerror_policy=ERROR_POLICY)
    src = ET.SubElement(disk, 'source', protocol='nbd', name=export)
    ET.SubElement(src, 'host', transport='unix', socket=socket_path)
    if reconnect_delay:
        ET.SubElement(src, 'reconnect', delay=str(int(reconnect_delay)))
    ET.SubElement(disk, 'target', dev=target, bus='virtio')
    ET.SubElement(disk, 'serial').text = SERIAL
    return ET.tostring(disk, encoding='unicode')


def blockdev(socket_path, export, reconnect_delay):
    """QEMU -blockdev / blockdev-add arguments of the swap disk."""
    node = {'driver': 'nbd', 'node-name': PASSTHROUGH_NODE,
            'server': {'type': 'unix', 'path': socket_path},
            'export': export}
    if reconnect_delay:
        node['reconnect-delay'] = int(reconnect_delay)
    return node


def frontend():
    """QEMU device_add arguments of the swap disk's virtio-blk device."""
    return {'driver': 'virtio-blk-pci', 'drive': PASSTHROUGH_NODE,
            'id': PASSTHROUGH_ID, 'serial': SERIAL,
            'bus': PASSTHROUGH_BUS, 'addr': PASSTHROUGH_PCI_ADDR,
            'werror': ERROR_POLICY, 'rerror': ERROR_POLICY}


def passthrough_args(socket_path, export, reconnect_delay=10):
    """QEMU command-line arguments of the swap disk (cold plug)."""
    dev = frontend()
    return ['-blockdev', json.dumps(blockdev(socket_path, export,
                                             reconnect_delay),
                                    separators=(',', ':')),
            '-device', ','.join([dev.pop('driver')] + [
                '%s=%s' % kv for kv in dev.items()])]


def _commandline(root):
    return root.find('{%s}commandline' % QEMU_NS)


def find_passthrough(domain_xml):
    """Does ``domain_xml``'s <qemu:commandline> carry the swap disk?"""
    cl = _commandline(ET.fromstring(domain_xml))
    return cl is not None and any(
        '"node-name":"%s"' % PASSTHROUGH_NODE in (a.get('value') or '')
        for a in cl.findall('{%s}arg' % QEMU_NS))


def add_passthrough(domain_xml, args):
    """``domain_xml`` with ``args`` appended to its <qemu:commandline>."""
    root = ET.fromstring(domain_xml)
    cl = _commandline(root)
    if cl is None:
        cl = ET.SubElement(root, '{%s}commandline' % QEMU_NS)
    for a in args:
        ET.SubElement(cl, '{%s}arg' % QEMU_NS, value=a)
    return ET.tostring(root, encoding='unicode')


def remove_passthrough(domain_xml):
    """``domain_xml`` without the swap disk's <qemu:arg> pairs."""
    root = ET.fromstring(domain_xml)
    cl = _commandline(root)
    if cl is not None:
        args = cl.findall('{%s}arg' % QEMU_NS)
        drop = set()
        for i, a in enumerate(args):
            v = a.get('value') or ''
            if ('"node-name":"%s"' % PASSTHROUGH_NODE in v
                    or 'id=%s,' % PASSTHROUGH_ID in v + ','):
                drop.update((i - 1, i))
        for i in sorted(drop):
            if 0 <= i < len(args):
                cl.remove(args[i])
        if not list(cl):
            root.remove(cl)
    return ET.tostring(root, encoding='unicode')


def find_disk(domain_xml, socket_path):
    """The <disk> of ``domain_xml`` served on ``socket_path``, or None."""
    root = ET.fromstring(domain_xml)
    for disk in root.findall('./devices/disk'):
        src = disk.find('source')
        host = src.find('host') if src is not None else None
        if (disk.get('type') == 'network' and src.get('protocol') == 'nbd'
                and host is not None
                and host.get('socket') == socket_path):
            return disk
    return None


def choose_mode(attach_mode, reconnect_delay, lib_version):
    """The mode ``[memstore] attach_mode`` means on libvirt
    ``lib_version`` (``virConnectGetLibVersion``: major * 1e6 + minor *
    1e3 + release; a callable, read only for ``auto`` with a delay)."""
    if attach_mode != 'auto':
        return attach_mode
    if not reconnect_delay:
        return 'libvirt'
    return ('libvirt' if lib_version() >= LIBVIRT_NBD_RECONNECT
            else 'qemu-passthrough')


# -- operations on a libvirt domain ------------------------------------------

def monitor_command(dom, command, flags=0):
    """A QMP command through libvirt (libvirt-qemu)."""
    return libvirt_qemu.qemuMonitorCommand(dom, command, flags)


def qmp(dom, command, monitor=None, **arguments):
    """Run QMP ``command`` (through ``monitor``, default
    :func:`monitor_command`); its ``return``.  QEMU's refusal raises
    SwapDiskRefused."""
    msg = {'execute': command}
    if arguments:
        msg['arguments'] = arguments
    reply = json.loads((monitor or monitor_command)(dom, json.dumps(msg), 0))
    if 'error' in reply:
        raise driver.SwapDiskRefused('QEMU refused %s: %s' % (
            command, reply['error'].get('desc', reply['error'])))
    return reply.get('return')


class DomainSwapDisk:
    """The swap disk served on ``socket_path`` as seen in libvirt domain
    ``dom``.  ``monitor`` sends a QMP command (default
    :func:`monitor_command`; tests replace it)."""

    def __init__(self, dom, socket_path, monitor=None):
        self.dom = dom
        self.socket_path = socket_path
        self.monitor = monitor

    def qmp(self, command, **arguments):
        return qmp(self.dom, command, monitor=self.monitor, **arguments)

    def live_passthrough(self):
        """Is the passthrough device in the running domain?"""
        return any(d.get('name') == PASSTHROUGH_ID for d in self.qmp(
            'qom-list', path='/machine/peripheral'))

    def config_xml(self):
        return self.dom.XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE
                                | libvirt.VIR_DOMAIN_XML_SECURE)

    def attach(self, export, target, reconnect_delay, attach_mode):
        """Cold- and hot-plug where missing; a SwapDiskAttachment."""
        dom, socket_path = self.dom, self.socket_path
        mode = choose_mode(attach_mode, reconnect_delay,
                           lambda: dom.connect().getLibVersion())
        done = driver.SwapDiskAttachment(mode=mode, hot_plugged=False,
                                         defined=False)
        if mode == 'qemu-passthrough':
            if dom.isActive() and not self.live_passthrough():
                try:
                    self.qmp('blockdev-add', **blockdev(
                        socket_path, export, reconnect_delay))
                except driver.SwapDiskRefused as e:
                    if 'Duplicate' not in str(e):   # left by a failed try
                        raise
                self.qmp('device_add', **frontend())
                done.hot_plugged = True
            if dom.isPersistent():
                cfg = self.config_xml()
                if not find_passthrough(cfg):
                    dom.connect().defineXML(add_passthrough(
                        cfg, passthrough_args(socket_path, export,
                                              reconnect_delay)))
                    done.defined = True
        else:
            flags = 0
            if dom.isActive() and find_disk(dom.XMLDesc(0),
                                            socket_path) is None:
                flags |= libvirt.VIR_DOMAIN_AFFECT_LIVE
                done.hot_plugged = True
            if dom.isPersistent() and find_disk(self.config_xml(),
                                                socket_path) is None:
                flags |= libvirt.VIR_DOMAIN_AFFECT_CONFIG
                done.defined = True
            if flags:
                dom.attachDeviceFlags(disk_xml(
                    socket_path, export, target, reconnect_delay), flags)
        return done

    def attached(self):
        """(live, persistent), in either mode."""
        dom = self.dom
        live = cfg = False
        if dom.isActive():
            live = (find_disk(dom.XMLDesc(0), self.socket_path) is not None
                    or self.live_passthrough())
        if dom.isPersistent():
            x = self.config_xml()
            cfg = (find_disk(x, self.socket_path) is not None
                   or find_passthrough(x))
        return live, cfg

    def detach(self, live, unplug_timeout=15):
        """Remove the disk from the definition and, when ``live``, from the
        running domain; whether anything was removed."""
        dom, socket_path = self.dom, self.socket_path
        live_disk = cold = None
        live_pt = cold_pt = False
        if live and dom.isActive():
            live_disk = find_disk(dom.XMLDesc(0), socket_path)
            live_pt = self.live_passthrough()
        if dom.isPersistent():
            cfg = self.config_xml()
            cold = find_disk(cfg, socket_path)
            cold_pt = find_passthrough(cfg)
        flags = 0
        if live_disk is not None:
            flags |= libvirt.VIR_DOMAIN_AFFECT_LIVE
        if cold is not None:
            flags |= libvirt.VIR_DOMAIN_AFFECT_CONFIG
        if flags:
            disk = live_disk if live_disk is not None else cold
            dom.detachDeviceFlags(ET.tostring(disk, encoding='unicode'),
                                  flags)
        if live_pt:
            self.qmp('device_del', id=PASSTHROUGH_ID)
            deadline = time.monotonic() + unplug_timeout
            while self.live_passthrough():
                if time.monotonic() > deadline:
                    raise driver.SwapDiskRefused(
                        'the guest did not release the swap disk within '
                        '%s s' % unplug_timeout)
                time.sleep(0.2)
            self.qmp('blockdev-del', **{'node-name': PASSTHROUGH_NODE})
        if cold_pt:
            dom.connect().defineXML(remove_passthrough(cfg))
        return bool(flags or live_pt or cold_pt)
