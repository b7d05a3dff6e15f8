"""The agent's side of memmut-memstore: every adopted VM gets a swap disk.

When ``[memstore] enabled`` is set, the agent owns a
:class:`SwapDiskManager` whose :meth:`~SwapDiskManager.ensure` (called when
the agent adopts a VM) makes sure that the VM has

* an export on the local memmut-memstore, named after the VM's UUID, of
  ``[memstore] swap_size_mb`` with a RAM quota of ``export_quota_mb``;
* a virtio disk in its domain served by that export over NBD on a unix
  socket, with ``<reconnect delay=.../>`` so that QEMU waits for a
  restarted memstore instead of failing guest I/O.  The disk is added to
  the persistent definition (cold plug: it is there at the next boot) and
  hot-plugged into the running domain; both are skipped when already done.

The reconnect delay is what lets a killed and restarted memstore lose no
page; libvirt gained ``<reconnect delay=.../>`` for NBD disks only in 9.2
(libvirt 9.0, Debian 12's, ignores the element silently).  With
``[memstore] attach_mode = auto`` the agent uses the libvirt ``<disk>``
on libvirt >= 9.2 and otherwise QEMU passthrough: ``-blockdev``/``-device``
arguments in the definition's ``<qemu:commandline>`` (cold) and QMP
``blockdev-add`` + ``device_add`` through libvirt (hot), both with the
same node name, device id and PCI slot (``PASSTHROUGH_PCI_ADDR`` on the
root bus of an i440fx machine).

Detaching is the dangerous direction: libvirt lets a disk the guest is
swapping on be unplugged without complaint, and the guest then loses the
pages.  :meth:`SwapDiskManager.detach` therefore refuses a live detach
while the export holds any page the guest wrote and has not discarded, or
had I/O in the last ``IDLE_BEFORE_DETACH`` seconds; a shut-off domain's
definition can always be edited.

:meth:`SwapDiskManager.monitor` reads the export's swap-traffic monitor
(swap-outs, swap-ins, Geiger reuse-distance histogram and m_ghost) for
the WSS estimators.  Every failure is logged with the VM and the reason.
"""

import json
import os
import time
import xml.etree.ElementTree as ET

from oslo_log import log as logging

from memmut.memstore import client as clientmod
from memmut.memstore import reuse
from memmut.virt import driver as virt_driver

try:
    import libvirt
    import libvirt_qemu
except ImportError:     # the libvirt driver is optional
    libvirt = libvirt_qemu = None

LOG = logging.getLogger(__name__)

MIB = 1024 * 1024
SERIAL = 'memmut-swap'
IDLE_BEFORE_DETACH = 60.0

QEMU_NS = 'http://libvirt.org/schemas/domain/qemu/1.0'
ET.register_namespace('qemu', QEMU_NS)
# libvirt 9.2.0 added <reconnect delay=.../> to NBD disk sources
LIBVIRT_NBD_RECONNECT = 9002000
PASSTHROUGH_NODE = 'memmut-swap'
PASSTHROUGH_ID = 'memmut-swap0'
PASSTHROUGH_BUS = 'pci.0'
PASSTHROUGH_PCI_ADDR = '0x1e'


class SwapDiskError(Exception):
    """The swap disk cannot be created, attached or detached."""


class SwapDiskBusy(SwapDiskError):
    """The guest may still be swapping on the disk: it stays attached."""


def disk_xml(socket_path, export, target='vdz', reconnect_delay=10):
    """libvirt <disk> XML of a memstore swap disk."""
    disk = ET.Element('disk', type='network', device='disk')
    ET.SubElement(disk, 'driver', name='qemu', type='raw')
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
            'bus': PASSTHROUGH_BUS, 'addr': PASSTHROUGH_PCI_ADDR}


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


class SwapDiskManager:
    """Exports and disks of one agent's VMs."""

    def __init__(self, conf, driver, client=None, clock=time.time):
        self.opts = conf.memstore
        self.driver = driver
        self.clock = clock
        self.client = client or clientmod.ControlClient(
            os.path.join(self.opts.socket_dir, 'control.sock'),
            self.opts.call_timeout)
        self._host_quota_set = False

    # -- helpers -----------------------------------------------------------

    @staticmethod
    def export_name(uuid):
        return uuid

    def _domain(self, uuid):
        lookup = getattr(self.driver, '_domain', None)
        if lookup is None or libvirt is None:
            raise SwapDiskError('the %s driver cannot attach disks (memstore '
                                'swap disks need the libvirt driver)'
                                % getattr(self.driver, 'name', '?'))
        return lookup(uuid)

    def _ensure_host_quota(self):
        if not self._host_quota_set:
            self.client.set_host_quota(self.opts.host_quota_mb * MIB)
            self._host_quota_set = True
            LOG.info('memmut-memstore host RAM quota set to %d MiB',
                     self.opts.host_quota_mb)

    # -- attach ------------------------------------------------------------

    def ensure(self, vm):
        """Export + disk for ``vm`` (a VMInfo); True when the VM has its
        swap disk.  Failures are logged, never raised."""
        name = self.export_name(vm.uuid)
        try:
            self._ensure_host_quota()
            info, created = self.client.create_export(
                name, self.opts.swap_size_mb * MIB,
                quota=self.opts.export_quota_mb * MIB,
                bucket_pages=self.opts.histogram_bucket_pages)
            if created:
                LOG.info('VM %s (%s): created memstore export %s (%d MiB, '
                         'RAM quota %d MiB)', vm.name, vm.uuid, name,
                         self.opts.swap_size_mb, self.opts.export_quota_mb)
            self._attach(vm, info['socket'], name)
            return True
        except (clientmod.MemstoreError, SwapDiskError,
                virt_driver.VMNotFound,
                virt_driver.HypervisorUnavailable) as e:
            LOG.error('VM %s (%s): no memstore swap disk: %s', vm.name,
                      vm.uuid, e)
        except Exception as e:
            if libvirt is None or not isinstance(e, libvirt.libvirtError):
                raise
            LOG.error('VM %s (%s): no memstore swap disk: libvirt refused '
                      'the disk: %s', vm.name, vm.uuid,
                      e.get_error_message())
        return False

    def _mode(self, dom):
        mode = self.opts.attach_mode
        if mode != 'auto':
            return mode
        if not self.opts.reconnect_delay:
            return 'libvirt'
        version = dom.connect().getLibVersion()
        return ('libvirt' if version >= LIBVIRT_NBD_RECONNECT
                else 'qemu-passthrough')

    def _qmp(self, dom, command, **arguments):
        msg = {'execute': command}
        if arguments:
            msg['arguments'] = arguments
        reply = json.loads(self.monitor_command(dom, json.dumps(msg), 0))
        if 'error' in reply:
            raise SwapDiskError('QEMU refused %s: %s' % (
                command, reply['error'].get('desc', reply['error'])))
        return reply.get('return')

    @staticmethod
    def monitor_command(dom, command, flags):
        return libvirt_qemu.qemuMonitorCommand(dom, command, flags)

    def _live_passthrough(self, dom):
        return any(d.get('name') == PASSTHROUGH_ID for d in self._qmp(
            dom, 'qom-list', path='/machine/peripheral'))

    @staticmethod
    def _config_xml(dom):
        return dom.XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE
                           | libvirt.VIR_DOMAIN_XML_SECURE)

    def _attach(self, vm, socket_path, export):
        dom = self._domain(vm.uuid)
        mode = self._mode(dom)
        delay = self.opts.reconnect_delay
        where = []
        if mode == 'qemu-passthrough':
            if dom.isActive() and not self._live_passthrough(dom):
                try:
                    self._qmp(dom, 'blockdev-add',
                              **blockdev(socket_path, export, delay))
                except SwapDiskError as e:
                    if 'Duplicate' not in str(e):   # left by a failed try
                        raise
                self._qmp(dom, 'device_add', **frontend())
                where.append('hot-plugged')
            if dom.isPersistent():
                cfg = self._config_xml(dom)
                if not find_passthrough(cfg):
                    dom.connect().defineXML(add_passthrough(
                        cfg, passthrough_args(socket_path, export, delay)))
                    where.append('added to the definition')
        else:
            flags = 0
            if dom.isActive() and find_disk(dom.XMLDesc(0),
                                            socket_path) is None:
                flags |= libvirt.VIR_DOMAIN_AFFECT_LIVE
                where.append('hot-plugged')
            if dom.isPersistent() and find_disk(self._config_xml(dom),
                                                socket_path) is None:
                flags |= libvirt.VIR_DOMAIN_AFFECT_CONFIG
                where.append('added to the definition')
            if flags:
                dom.attachDeviceFlags(disk_xml(
                    socket_path, export, self.opts.disk_target, delay), flags)
        if where:
            LOG.info('VM %s (%s): memstore swap disk %s (%s, %s, reconnect '
                     'delay %d s)', vm.name, vm.uuid, ' and '.join(where),
                     socket_path, mode, delay)
        else:
            LOG.debug('VM %s (%s): memstore swap disk already attached',
                      vm.name, vm.uuid)

    def is_attached(self, vm_uuid):
        """(live, config): is the swap disk in the running domain, in its
        definition?"""
        dom = self._domain(vm_uuid)
        socket_path = os.path.join(self.opts.socket_dir,
                                   self.export_name(vm_uuid) + '.sock')
        live = cfg = False
        if dom.isActive():
            live = (find_disk(dom.XMLDesc(0), socket_path) is not None
                    or self._live_passthrough(dom))
        if dom.isPersistent():
            x = self._config_xml(dom)
            cfg = find_disk(x, socket_path) is not None or find_passthrough(x)
        return live, cfg

    # -- detach ------------------------------------------------------------

    def in_use(self, uuid):
        """(busy, reason): may the guest still be swapping on the disk?"""
        st = self.client.stats(self.export_name(uuid))
        export = st['export']
        if export['stored_bytes']:
            return True, ('its export holds %d KiB the guest swapped out '
                          'and has not discarded'
                          % (export['stored_bytes'] // 1024))
        if export['last_io'] and (self.clock() - export['last_io']
                                  < IDLE_BEFORE_DETACH):
            return True, 'the guest did I/O on it %.0f s ago' % (
                self.clock() - export['last_io'])
        return False, 'no stored page, no recent I/O'

    def detach(self, vm, unplug_timeout=15):
        """Remove the swap disk from ``vm``'s domain; raises SwapDiskBusy
        (and changes nothing) while the running guest may be using it."""
        name = self.export_name(vm.uuid)
        try:
            info = self.client.get_export(name)
            if info is None:
                raise SwapDiskError('no memstore export %s' % name)
            dom = self._domain(vm.uuid)
            live_disk = cold = None
            live_pt = cold_pt = False
            if dom.isActive():
                live_disk = find_disk(dom.XMLDesc(0), info['socket'])
                live_pt = self._live_passthrough(dom)
            if live_disk is not None or live_pt:
                busy, why = self.in_use(vm.uuid)
                if busy:
                    raise SwapDiskBusy('not detaching the swap disk of '
                                       'running VM %s (%s): %s'
                                       % (vm.name, vm.uuid, why))
            if dom.isPersistent():
                cfg = self._config_xml(dom)
                cold = find_disk(cfg, info['socket'])
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
                self._qmp(dom, 'device_del', id=PASSTHROUGH_ID)
                deadline = time.monotonic() + unplug_timeout
                while self._live_passthrough(dom):
                    if time.monotonic() > deadline:
                        raise SwapDiskError('the guest did not release the '
                                            'swap disk within %s s'
                                            % unplug_timeout)
                    time.sleep(0.2)
                self._qmp(dom, 'blockdev-del', **{
                    'node-name': PASSTHROUGH_NODE})
            if cold_pt:
                dom.connect().defineXML(remove_passthrough(cfg))
            if flags or live_pt or cold_pt:
                LOG.info('VM %s (%s): memstore swap disk detached',
                         vm.name, vm.uuid)
        except SwapDiskBusy as e:
            LOG.warning('%s', e)
            raise
        except (clientmod.MemstoreError, SwapDiskError,
                virt_driver.VMNotFound,
                virt_driver.HypervisorUnavailable) as e:
            LOG.error('VM %s (%s): cannot detach the memstore swap disk: '
                      '%s', vm.name, vm.uuid, e)
            raise SwapDiskError(str(e))
        except Exception as e:
            if libvirt is None or not isinstance(e, libvirt.libvirtError):
                raise
            LOG.error('VM %s (%s): libvirt refused to detach the memstore '
                      'swap disk: %s', vm.name, vm.uuid,
                      e.get_error_message())
            raise SwapDiskError(e.get_error_message())

    # -- monitor -----------------------------------------------------------

    def monitor(self, uuid, reset=True):
        """One reading of the VM's swap-traffic monitor
        (:class:`memmut.memstore.reuse.ReuseReading`); ``reset`` starts a
        new histogram interval.  None (logged) when it cannot be read."""
        try:
            return reuse.ReuseReading.from_stats(self.client.stats(
                self.export_name(uuid), reset=reset,
                percentile=self.opts.ghost_percentile))
        except clientmod.MemstoreError as e:
            LOG.warning('VM %s: cannot read its memstore swap monitor: %s',
                        uuid, e)
            return None
