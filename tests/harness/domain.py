"""Domain XML for the test guests, built from a dataclass of options."""

import dataclasses
import os
import typing
import uuid as uuidlib
import xml.etree.ElementTree as ET

NOVA_NS = 'http://openstack.org/xmlns/libvirt/nova/1.1'
QEMU_NS = 'http://libvirt.org/schemas/domain/qemu/1.0'
ET.register_namespace('nova', NOVA_NS)
ET.register_namespace('qemu', QEMU_NS)


def default_domain_type():
    # No usable KVM on the CI machines: TCG ('qemu') unless told otherwise.
    return os.environ.get('MEMMUT_DOMAIN_TYPE', 'qemu')


@dataclasses.dataclass
class SwapDisk:
    """A virtio disk the guest's /init turns into swap.

    Either ``file`` (a raw image) or ``nbd_socket`` (an NBD server on a unix
    socket, e.g. nbdkit or memmut-memstore).  The guest names it vda,
    vdb... by probe order, whatever ``target`` says.
    """
    file: typing.Optional[str] = None
    nbd_socket: typing.Optional[str] = None
    nbd_export: typing.Optional[str] = None
    target: str = 'vdb'
    cache: typing.Optional[str] = None      # libvirt driver cache mode
    # libvirt error_policy/rerror_policy (None: QEMU's default, which
    # pauses the VM on ENOSPC)
    error_policy: typing.Optional[str] = None
    # NBD only: seconds QEMU waits for a restarted server (<reconnect/>)
    reconnect_delay: typing.Optional[int] = None

    def element(self):
        if bool(self.file) == bool(self.nbd_socket):
            raise ValueError('a swap disk needs exactly one of file and '
                             'nbd_socket')
        disk = ET.Element('disk', type='file' if self.file else 'network',
                          device='disk')
        driver = ET.SubElement(disk, 'driver', name='qemu', type='raw')
        if self.cache:
            driver.set('cache', self.cache)
        if self.error_policy:
            driver.set('error_policy', self.error_policy)
            driver.set('rerror_policy', self.error_policy)
        if self.file:
            ET.SubElement(disk, 'source', file=self.file)
        else:
            src = ET.SubElement(disk, 'source', protocol='nbd')
            if self.nbd_export:
                src.set('name', self.nbd_export)
            ET.SubElement(src, 'host', transport='unix',
                          socket=self.nbd_socket)
            if self.reconnect_delay:
                ET.SubElement(src, 'reconnect',
                              delay=str(self.reconnect_delay))
        ET.SubElement(disk, 'target', dev=self.target, bus='virtio')
        return disk

    def xml(self):
        """Device XML, e.g. for ``dom.attachDeviceFlags`` (hot-plug)."""
        return ET.tostring(self.element(), encoding='unicode')


@dataclasses.dataclass
class NovaMetadata:
    """The subset of nova's <nova:instance> metadata memmut reads."""
    name: str = 'test-server'
    flavor: str = 'm1.tiny'
    project: str = 'demo'
    user: str = 'demo'
    vcpus: int = 1
    memory_mib: typing.Optional[int] = None   # defaults to the domain's
    extra_specs: typing.Optional[dict] = None   # flavor extra specs

    def element(self, memory_mib):
        def sub(parent, tag, text=None, **attrs):
            e = ET.SubElement(parent, '{%s}%s' % (NOVA_NS, tag), **attrs)
            if text is not None:
                e.text = str(text)
            return e

        inst = ET.Element('{%s}instance' % NOVA_NS)
        sub(inst, 'package', version='34.0.0')
        sub(inst, 'name', self.name)
        sub(inst, 'creationTime', '2025-01-01 00:00:00')
        flavor = sub(inst, 'flavor', name=self.flavor)
        sub(flavor, 'memory', self.memory_mib or memory_mib)
        sub(flavor, 'disk', 0)
        sub(flavor, 'swap', 0)
        sub(flavor, 'ephemeral', 0)
        sub(flavor, 'vcpus', self.vcpus)
        if self.extra_specs:
            specs = sub(flavor, 'extraSpecs')
            for k, v in self.extra_specs.items():
                sub(specs, 'extraSpec', v, name=k)
        owner = sub(inst, 'owner')
        sub(owner, 'user', self.user, uuid=str(uuidlib.uuid4()))
        sub(owner, 'project', self.project, uuid=str(uuidlib.uuid4()))
        return inst


@dataclasses.dataclass
class DomainSpec:
    name: str
    kernel: str
    initrd: str
    serial_log: str
    memory_mib: int = 512                     # maximum (booked) memory
    current_mib: typing.Optional[int] = None  # balloon target at boot
    uuid: str = dataclasses.field(default_factory=lambda: str(uuidlib.uuid4()))
    vcpus: int = 1
    # Host CPUs the guest's vCPUs (and, libvirt's default, its emulator
    # threads) run on, e.g. '0': two guests compared side by side each
    # on their own core instead of sharing both as the scheduler likes.
    cpuset: typing.Optional[str] = None
    domain_type: str = dataclasses.field(default_factory=default_domain_type)
    machine: str = 'pc'        # i440fx: ACPI PCI hot-plug on the root bus
    cmdline: str = ''          # appended to the base kernel command line
    swap: typing.Optional[SwapDisk] = None
    memfd: bool = False        # shared memfd backing (host-side sampling)
    tb_cache_mib: typing.Optional[int] = None   # TCG only; lowers QEMU RSS
    stats_period: int = 1
    free_page_reporting: bool = True
    nova: typing.Optional[NovaMetadata] = None
    # extra QEMU arguments (<qemu:commandline>), e.g. memstore's swap disk
    # with a reconnect delay on libvirt < 9.2
    qemu_args: typing.List[str] = dataclasses.field(default_factory=list)

    # quiet: a short console log; panic=-1 + on_reboot=destroy: a guest
    # that panics stops at once instead of hanging until a test timeout.
    BASE_CMDLINE = 'console=ttyS0 quiet panic=-1'

    def kernel_cmdline(self):
        return ('%s %s' % (self.BASE_CMDLINE, self.cmdline)).strip()

    def element(self):
        dom = ET.Element('domain', type=self.domain_type)
        ET.SubElement(dom, 'name').text = self.name
        ET.SubElement(dom, 'uuid').text = self.uuid
        if self.nova:
            meta = ET.SubElement(dom, 'metadata')
            meta.append(self.nova.element(self.memory_mib))
        ET.SubElement(dom, 'memory', unit='MiB').text = str(self.memory_mib)
        ET.SubElement(dom, 'currentMemory', unit='MiB').text = str(
            self.current_mib or self.memory_mib)
        if self.memfd:
            mb = ET.SubElement(dom, 'memoryBacking')
            ET.SubElement(mb, 'source', type='memfd')
            ET.SubElement(mb, 'access', mode='shared')
        vcpu = ET.SubElement(dom, 'vcpu')
        vcpu.text = str(self.vcpus)
        if self.cpuset:
            vcpu.set('placement', 'static')
            vcpu.set('cpuset', self.cpuset)
        os_ = ET.SubElement(dom, 'os')
        ET.SubElement(os_, 'type', arch='x86_64',
                      machine=self.machine).text = 'hvm'
        ET.SubElement(os_, 'kernel').text = self.kernel
        ET.SubElement(os_, 'initrd').text = self.initrd
        ET.SubElement(os_, 'cmdline').text = self.kernel_cmdline()
        features = ET.SubElement(dom, 'features')
        ET.SubElement(features, 'acpi')      # poweroff and PCI hot-plug
        if self.tb_cache_mib:
            if self.domain_type != 'qemu':
                raise ValueError('tb_cache_mib needs domain type qemu (TCG)')
            tcg = ET.SubElement(features, 'tcg')
            ET.SubElement(tcg, 'tb-cache', unit='MiB').text = str(
                self.tb_cache_mib)
        ET.SubElement(dom, 'clock', offset='utc')
        for event in ('on_poweroff', 'on_reboot', 'on_crash'):
            ET.SubElement(dom, event).text = 'destroy'
        dev = ET.SubElement(dom, 'devices')
        if self.swap:
            dev.append(self.swap.element())
        ET.SubElement(dev, 'controller', type='usb', model='none')
        serial = ET.SubElement(dev, 'serial', type='file')
        ET.SubElement(serial, 'source', path=self.serial_log)
        ET.SubElement(serial, 'target', port='0')
        balloon = ET.SubElement(dev, 'memballoon', model='virtio')
        if self.free_page_reporting:
            balloon.set('freePageReporting', 'on')
        ET.SubElement(balloon, 'stats', period=str(self.stats_period))
        if self.qemu_args:
            cl = ET.SubElement(dom, '{%s}commandline' % QEMU_NS)
            for a in self.qemu_args:
                ET.SubElement(cl, '{%s}arg' % QEMU_NS, value=a)
        return dom

    def xml(self):
        return ET.tostring(self.element(), encoding='unicode')
