"""The libvirt driver: real VMs on a KVM (or QEMU/TCG) host.

Only libvirt is used to see and act on domains; the QEMU PID is read from
libvirtd's pid files (or /proc) for the host-side collectors of later issues.
Nova instances are recognised by nova's domain metadata; nova names the
libvirt domain with the instance UUID, so the domain UUID is the instance
UUID.  memmut-memstore swap disks are attached and detached with the domain
XML and QMP helpers of :mod:`memmut.virt.libvirt.swapdisk`.
"""

import dataclasses
import os
import xml.etree.ElementTree as ET

from oslo_log import log as logging

from memmut.virt import balloon_floor
from memmut.virt import driver
from memmut.virt.libvirt import swapdisk

try:
    import libvirt
except ImportError:  # pragma: no cover - exercised on hosts without libvirt
    libvirt = None

LOG = logging.getLogger(__name__)

NOVA_NS = 'http://openstack.org/xmlns/libvirt/nova/1.1'
# memmut's own per-VM settings in a domain's <metadata> (VMs nova does not
# own; set with ``virsh metadata``).
MEMMUT_NS = 'urn:memmut:libvirt:1.0'
FLAVOR_FLOOR_SPEC = 'memmut:balloon_floor_mb'
_STATES = {
    0: 'nostate', 1: 'running', 2: 'blocked', 3: 'paused', 4: 'shutdown',
    5: 'shutoff', 6: 'crashed', 7: 'pmsuspended',
}


def parse_nova_metadata(xml_text):
    """Return the nova display name from nova's instance metadata, or None.

    libvirt returns the element looked up by namespace with the namespace
    stripped (``<instance><name>...``); a document that keeps it is accepted
    too.
    """
    if not xml_text:
        return None
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError:
        return None
    if root.tag not in ('instance', '{%s}instance' % NOVA_NS):
        return None
    name = root.find('name')
    if name is None:
        name = root.find('{%s}name' % NOVA_NS)
    return (name.text or '').strip() or None if name is not None else None


def vm_floor_kb(domain_xml):
    """A VM's own balloon floor from its domain XML: nova's flavor extra
    spec ``memmut:balloon_floor_mb``, else memmut's metadata element
    ``<memmut:vm><memmut:balloon-floor-mb>``; None when neither is set."""
    try:
        root = ET.fromstring(domain_xml)
    except (ET.ParseError, TypeError):
        return None
    for spec in root.iter('{%s}extraSpec' % NOVA_NS):
        if spec.get('name') == FLAVOR_FLOOR_SPEC:
            return balloon_floor.parse_floor_mb(spec.text)
    el = root.find('./metadata/{%s}vm/{%s}balloon-floor-mb'
                   % (MEMMUT_NS, MEMMUT_NS))
    return balloon_floor.parse_floor_mb(el.text) if el is not None else None


def find_qemu_pid(uuid, proc='/proc'):
    """Find the QEMU process of a domain by its ``-uuid`` argument."""
    for entry in os.listdir(proc):
        if not entry.isdigit():
            continue
        try:
            with open(os.path.join(proc, entry, 'cmdline'), 'rb') as f:
                args = f.read().split(b'\0')
        except OSError:
            continue
        if not args or b'qemu' not in os.path.basename(args[0]):
            continue
        for i, arg in enumerate(args[:-1]):
            if arg == b'-uuid' and args[i + 1].decode() == uuid:
                return int(entry)
    return None


class LibvirtDriver(driver.Driver):
    name = 'libvirt'

    def __init__(self, conf):
        if libvirt is None:
            raise driver.HypervisorUnavailable(
                'the libvirt driver needs the libvirt-python binding '
                '(pip install libvirt-python matching the installed libvirt)')
        self._conf = conf.libvirt
        self.configure_floor(conf)
        self._conn = None
        self._nova = {}            # uuid -> nova display name or None
        self._types = {}           # uuid -> domain type (read once)
        self._last = {}            # uuid -> last VMInfo read
        # the guest's boot reservation, from settled balloon statistics
        self._readings = {}        # uuid -> last (actual, available)
        self._reserved = {}        # uuid -> reservation KiB
        self._unreadable_logged = {}   # uuid -> libvirt error code logged
        self._last_cpu = None
        # libvirt prints every error to stderr by default; we log instead.
        libvirt.registerErrorHandler(lambda ctx, err: None, None)

    # -- connection -------------------------------------------------------

    def connect(self):
        if self._conn is not None:
            try:
                if self._conn.isAlive():
                    return
            except libvirt.libvirtError:
                pass
            self.close()
        try:
            self._conn = libvirt.open(self._conf.connection_uri)
        except libvirt.libvirtError as e:
            raise driver.HypervisorUnavailable(
                'cannot connect to libvirt at %s: %s'
                % (self._conf.connection_uri, e.get_error_message()))
        LOG.info('Connected to libvirt at %s', self._conf.connection_uri)

    def close(self):
        if self._conn is not None:
            try:
                self._conn.close()
            except libvirt.libvirtError:
                pass
            self._conn = None

    def _connection(self):
        if self._conn is None:
            self.connect()
        return self._conn

    def _call(self, fn, *args):
        """Run a libvirt call, turning a lost connection into a retryable
        HypervisorUnavailable and a vanished domain into VMNotFound."""
        try:
            return fn(*args)
        except libvirt.libvirtError as e:
            code = e.get_error_code()
            if code == libvirt.VIR_ERR_NO_DOMAIN:
                raise driver.VMNotFound(str(e))
            if code in (libvirt.VIR_ERR_SYSTEM_ERROR,
                        libvirt.VIR_ERR_INTERNAL_ERROR,
                        libvirt.VIR_ERR_RPC,
                        libvirt.VIR_ERR_NO_CONNECT,
                        libvirt.VIR_ERR_INVALID_CONN):
                self.close()
                raise driver.HypervisorUnavailable(
                    'libvirt call failed: %s' % e.get_error_message())
            raise driver.VMOperationFailed('libvirt error %s: %s' % (
                code, e.get_error_message()))

    def _host_call(self, fn, *args):
        """A call about the host, not a VM: any failure but a lost
        connection is a failed read of the host."""
        try:
            return self._call(fn, *args)
        except (driver.VMOperationFailed, driver.VMNotFound) as e:
            raise driver.HostReadFailed(str(e))

    def _domain(self, uuid):
        return self._call(self._connection().lookupByUUIDString, uuid)

    # -- reading ----------------------------------------------------------

    def host_info(self):
        conn = self._connection()
        mem = self._host_call(conn.getMemoryStats,
                              libvirt.VIR_NODE_MEMORY_STATS_ALL_CELLS, 0)
        cpu = self._host_call(conn.getCPUStats,
                              libvirt.VIR_NODE_CPU_STATS_ALL_CPUS, 0)
        ncpu = self._host_call(conn.getInfo)[2]
        busy = sum(v for k, v in cpu.items() if k != 'idle'
                   and k != 'iowait')
        total = busy + cpu.get('idle', 0) + cpu.get('iowait', 0)
        util = 0.0
        if self._last_cpu is not None and total > self._last_cpu[1]:
            util = (busy - self._last_cpu[0]) / (total - self._last_cpu[1])
        self._last_cpu = (busy, total)
        free = mem.get('free', 0) + mem.get('buffers', 0) + mem.get(
            'cached', 0)
        return driver.HostInfo(memory_total_kb=mem['total'],
                               memory_free_kb=free, cpu_count=ncpu,
                               cpu_util=max(0.0, min(1.0, util)))

    def _nova_name(self, dom, uuid):
        if uuid not in self._nova:
            try:
                meta = dom.metadata(libvirt.VIR_DOMAIN_METADATA_ELEMENT,
                                    NOVA_NS)
            except libvirt.libvirtError:
                meta = None   # no nova metadata: not a nova instance
            # A nova instance without a display name keeps its domain name.
            self._nova[uuid] = (parse_nova_metadata(meta) or dom.name()
                                if meta else None)
        return self._nova[uuid]

    def _check_type(self, dom, uuid):
        """The domain's type (``kvm``, ``qemu``), read from its XML once
        per domain and returned at every later listing (the sampling
        back-ends decide from it whenever they choose again); warned about
        once when it is not ``[libvirt] domain_type``."""
        if uuid in self._types:
            return self._types[uuid]
        dtype = ET.fromstring(dom.XMLDesc(0)).get('type')
        if dtype != self._conf.domain_type:
            LOG.warning('Domain %s (%s) is of type %s but [libvirt] '
                        'domain_type is %s: access-sampling back-ends chosen '
                        'for %s may not see its memory accesses',
                        dom.name(), uuid, dtype, self._conf.domain_type,
                        self._conf.domain_type)
        self._types[uuid] = dtype
        return dtype

    def list_vms(self):
        conn = self._connection()
        doms = self._host_call(conn.listAllDomains,
                               libvirt.VIR_CONNECT_LIST_DOMAINS_ACTIVE)
        vms = []
        live = set()
        for dom in doms:
            try:
                uuid = dom.UUIDString()
                live.add(uuid)
                nova_name = self._nova_name(dom, uuid)
                if self._conf.nova_instances_only and nova_name is None:
                    continue
                state, maxmem, mem, _ncpu, cputime = dom.info()
                stats = dom.memoryStats()
                dtype = self._check_type(dom, uuid)
            except libvirt.libvirtError as e:
                if e.get_error_code() in (libvirt.VIR_ERR_NO_DOMAIN,
                                          libvirt.VIR_ERR_OPERATION_INVALID):
                    # it went away (or stopped) while we were looking
                    continue
                stale = self._unreadable(conn, uuid, e)
                if stale is not None:
                    vms.append(stale)
                continue
            info = driver.VMInfo(
                uuid=uuid, name=nova_name or dom.name(),
                state=_STATES.get(state, 'unknown'), booked_kb=maxmem,
                balloon_kb=stats.get('actual', mem),
                memory_stats={k: int(v) for k, v in stats.items()},
                cpu_time_ns=cputime, nova_instance=nova_name is not None,
                domain_type=dtype)
            self._last[uuid] = info
            self._unreadable_logged.pop(uuid, None)
            pair, reserved = balloon_floor.settled_reserved_kb(
                self._readings.get(uuid), info.memory_stats)
            self._readings[uuid] = pair
            if reserved is not None:
                self._reserved[uuid] = reserved
            vms.append(info)
        for cache in (self._nova, self._types, self._last,
                      self._unreadable_logged, self._readings,
                      self._reserved):
            for gone in set(cache) - live:
                cache.pop(gone, None)
        return vms

    def _unreadable(self, conn, uuid, error):
        """One domain could not be read. A dead connection fails the whole
        listing (retried); any other error is that VM's alone: it is
        listed stale from its last reading (or left out until it has one),
        logged once per VM and error code."""
        try:
            alive = conn.isAlive()
        except libvirt.libvirtError:
            alive = False
        if not alive:
            self.close()
            raise driver.HypervisorUnavailable(
                'reading domain failed: %s' % error.get_error_message())
        code = error.get_error_code()
        if self._unreadable_logged.get(uuid) != code:
            self._unreadable_logged[uuid] = code
            LOG.warning('Domain %s could not be read (libvirt error %s: %s); '
                        'kept with its last reading and not acted on until '
                        'it can be', uuid, code, error.get_error_message())
        last = self._last.get(uuid)
        if last is None:
            return None
        return dataclasses.replace(last, state='unknown', stale=True)

    def qemu_pid(self, uuid):
        dom = self._domain(uuid)
        path = os.path.join(self._conf.qemu_pid_dir, dom.name() + '.pid')
        try:
            with open(path) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            return find_qemu_pid(uuid)

    # -- acting -----------------------------------------------------------

    def set_stats_period(self, uuid, seconds):
        dom = self._domain(uuid)
        self._call(dom.setMemoryStatsPeriod, int(seconds),
                   libvirt.VIR_DOMAIN_AFFECT_LIVE)

    def _floor_inputs(self, uuid):
        dom = self._domain(uuid)
        reserved = self._reserved.get(uuid)
        if reserved is None:
            # not seen settled yet: the reading of now, the best known
            reserved = balloon_floor.boot_reserved_kb(
                self._call(dom.memoryStats))
        return (self._call(dom.maxMemory), reserved,
                vm_floor_kb(self._call(dom.XMLDesc, 0)))

    def _set_balloon(self, uuid, kib):
        dom = self._domain(uuid)
        maxmem = self._call(dom.maxMemory)
        if not 0 < kib <= maxmem:
            raise driver.InvalidBalloonTarget(
                'balloon target %d KiB for %s is outside 1..%d KiB'
                % (kib, uuid, maxmem))
        self._call(dom.setMemoryFlags, int(kib),
                   libvirt.VIR_DOMAIN_AFFECT_LIVE)

    # -- swap disks (memmut-memstore) -----------------------------------------

    def _swap_disk(self, uuid, socket_path):
        return swapdisk.DomainSwapDisk(self._domain(uuid), socket_path)

    def attach_swap_disk(self, uuid, socket_path, export, target,
                         reconnect_delay, attach_mode='auto'):
        disk = self._swap_disk(uuid, socket_path)
        try:
            return disk.attach(export, target, reconnect_delay, attach_mode)
        except libvirt.libvirtError as e:
            raise driver.SwapDiskRefused('libvirt refused the disk: %s'
                                         % e.get_error_message())

    def swap_disk_attached(self, uuid, socket_path):
        disk = self._swap_disk(uuid, socket_path)
        try:
            return disk.attached()
        except libvirt.libvirtError as e:
            raise driver.SwapDiskRefused('libvirt cannot tell whether the '
                                         'disk is attached: %s'
                                         % e.get_error_message())

    def detach_swap_disk(self, uuid, socket_path, live, unplug_timeout=15):
        disk = self._swap_disk(uuid, socket_path)
        try:
            return disk.detach(live, unplug_timeout)
        except libvirt.libvirtError as e:
            raise driver.SwapDiskRefused('libvirt refused to detach it: %s'
                                         % e.get_error_message())
