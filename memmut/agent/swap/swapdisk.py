"""The agent's side of memmut-memstore: every adopted VM gets a swap disk.

When ``[memstore] enabled`` is set, the agent owns a
:class:`SwapDiskManager` whose :meth:`~SwapDiskManager.ensure` (called when
the agent adopts a VM) makes sure that the VM has

* an export on the local memmut-memstore, named after the VM's UUID, of
  ``[memstore] swap_size_mb`` with a RAM quota of ``export_quota_mb``;
* the export bound to the pid of the VM's QEMU (``[memstore]
  bind_qemu_pid``): memstore then lets no other peer but its own user and
  root open it (:meth:`~SwapDiskManager.bind`, re-checked at every poll);
* a virtio disk served by that export over NBD on a unix socket, with a
  reconnect delay of ``[memstore] reconnect_delay`` so that QEMU waits for
  a restarted memstore instead of failing guest I/O (that is what lets a
  killed and restarted memstore lose no page).  The disk is added to the
  persistent definition (cold plug: it is there at the next boot) and
  hot-plugged into the running VM; both are skipped when already done.

The hypervisor side (domain XML, QMP, ``[memstore] attach_mode`` and the
libvirt-version check behind ``auto``) is the driver's:
:meth:`memmut.virt.driver.Driver.attach_swap_disk`,
:meth:`~memmut.virt.driver.Driver.swap_disk_attached` and
:meth:`~memmut.virt.driver.Driver.detach_swap_disk`, implemented for
libvirt in :mod:`memmut.virt.libvirt.swapdisk`; a driver without swap
disks (``sim``) raises SwapDisksUnsupported, logged like any failure.

Detaching is the dangerous direction: a hypervisor lets a disk the guest
is swapping on be unplugged without complaint, and the guest then loses
the pages.  :meth:`SwapDiskManager.detach` therefore refuses a live detach
while the export holds any page the guest wrote and has not discarded, or
had I/O in the last ``IDLE_BEFORE_DETACH`` seconds; a shut-off domain's
definition can always be edited.

:meth:`SwapDiskManager.monitor` reads the export's swap-traffic monitor
(swap-outs, swap-ins, Geiger reuse-distance histogram and m_ghost) for
the WSS estimators.  Every failure is logged with the VM and the reason.
"""

import os
import time

from oslo_log import log as logging

from memmut.memstore import client as clientmod
from memmut.memstore import reuse
from memmut.virt import driver as virt_driver

LOG = logging.getLogger(__name__)

MIB = 1024 * 1024
IDLE_BEFORE_DETACH = 60.0


class SwapDiskError(Exception):
    """The swap disk cannot be created, attached or detached."""


class SwapDiskBusy(SwapDiskError):
    """The guest may still be swapping on the disk: it stays attached."""


# What attaching or detaching may fail with (memstore, the driver: a driver
# without swap disks, the hypervisor's refusal, a vanished VM, a lost
# connection); every one is logged with the VM.
FAILURES = (clientmod.MemstoreError, SwapDiskError,
            virt_driver.SwapDisksUnsupported, virt_driver.SwapDiskRefused,
            virt_driver.VMNotFound, virt_driver.HypervisorUnavailable)


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
        self._bound = {}            # uuid -> pid memstore was told
        self._exports = set()       # uuids whose export ensure() made

    # -- binding -----------------------------------------------------------

    def bind(self, vm):
        """Bind ``vm``'s export to its QEMU's pid (unbind when it has
        none), telling memstore only when that changed; True when memstore
        agrees.  Failures are logged, never raised."""
        if not self.opts.bind_qemu_pid:
            return True
        name = self.export_name(vm.uuid)
        try:
            pid = self.driver.qemu_pid(vm.uuid)
        except Exception as e:      # any driver error: keep what memstore has
            LOG.warning('VM %s (%s): cannot find its QEMU pid (export %s '
                        'keeps its binding): %s', vm.name, vm.uuid, name, e)
            return False
        if vm.uuid in self._bound and self._bound[vm.uuid] == pid:
            return True
        try:
            self.client.bind_export(name, pid)
        except clientmod.MemstoreError as e:
            LOG.warning('VM %s (%s): cannot bind memstore export %s to '
                        'pid %s: %s', vm.name, vm.uuid, name, pid, e)
            return False
        self._bound[vm.uuid] = pid
        if pid is None:
            LOG.info('VM %s (%s): memstore export %s unbound (no QEMU '
                     'process)', vm.name, vm.uuid, name)
        else:
            LOG.info('VM %s (%s): memstore export %s bound to QEMU pid %d',
                     vm.name, vm.uuid, name, pid)
        return True

    def follow(self, vm):
        """At every poll: re-bind when ``vm``'s QEMU pid changed (a
        restarted VM has a new QEMU), for VMs that have their export."""
        if vm.uuid in self._exports:
            self.bind(vm)

    def forget(self, uuid):
        """``uuid`` left the host (shut off, or migrated away): its QEMU is
        gone, so the export is unbound (the VM's next QEMU must be able to
        connect at boot, before the agent sees its pid) and no longer
        followed."""
        pid = self._bound.pop(uuid, None)
        self._exports.discard(uuid)
        if pid is not None and self.opts.bind_qemu_pid:
            try:
                self.client.bind_export(self.export_name(uuid), None)
                LOG.info('VM %s left: memstore export %s unbound (its QEMU '
                         'pid %d is gone)', uuid, self.export_name(uuid), pid)
            except clientmod.MemstoreError as e:
                LOG.warning('VM %s left: cannot unbind memstore export %s '
                            '(a restart of the VM on this host is refused '
                            'until the agent binds its new QEMU): %s', uuid,
                            self.export_name(uuid), e)

    # -- helpers -----------------------------------------------------------

    @staticmethod
    def export_name(uuid):
        return uuid

    def socket_path(self, uuid):
        """Where memstore serves the VM's export."""
        return os.path.join(self.opts.socket_dir,
                            self.export_name(uuid) + '.sock')

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
            # before the disk is plugged: its QEMU is the first to connect
            self._bound.pop(vm.uuid, None)
            self._exports.add(vm.uuid)
            self.bind(vm)
            self._attach(vm, info['socket'], name)
            return True
        except FAILURES as e:
            LOG.error('VM %s (%s): no memstore swap disk: %s', vm.name,
                      vm.uuid, e)
        return False

    def _attach(self, vm, socket_path, export):
        delay = self.opts.reconnect_delay
        done = self.driver.attach_swap_disk(
            vm.uuid, socket_path, export, target=self.opts.disk_target,
            reconnect_delay=delay, attach_mode=self.opts.attach_mode)
        where = []
        if done.hot_plugged:
            where.append('hot-plugged')
        if done.defined:
            where.append('added to the definition')
        if where:
            LOG.info('VM %s (%s): memstore swap disk %s (%s, %s, reconnect '
                     'delay %d s)', vm.name, vm.uuid, ' and '.join(where),
                     socket_path, done.mode, delay)
        else:
            LOG.debug('VM %s (%s): memstore swap disk already attached',
                      vm.name, vm.uuid)

    def is_attached(self, vm_uuid):
        """(live, config): is the swap disk in the running domain, in its
        definition?  The driver's errors (SwapDisksUnsupported, ...) are
        raised."""
        return self.driver.swap_disk_attached(vm_uuid,
                                              self.socket_path(vm_uuid))

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
            live, _persistent = self.driver.swap_disk_attached(
                vm.uuid, info['socket'])
            if live:
                busy, why = self.in_use(vm.uuid)
                if busy:
                    raise SwapDiskBusy('not detaching the swap disk of '
                                       'running VM %s (%s): %s'
                                       % (vm.name, vm.uuid, why))
            # unplugged from the running VM only when the check above ran
            if self.driver.detach_swap_disk(vm.uuid, info['socket'],
                                            live=live,
                                            unplug_timeout=unplug_timeout):
                LOG.info('VM %s (%s): memstore swap disk detached',
                         vm.name, vm.uuid)
        except SwapDiskBusy as e:
            LOG.warning('%s', e)
            raise
        except FAILURES as e:
            LOG.error('VM %s (%s): cannot detach the memstore swap disk: '
                      '%s', vm.name, vm.uuid, e)
            raise SwapDiskError(str(e))

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
