"""The hypervisor driver interface: what the agent needs from a host.

Drivers are thin adapters; every decision is taken by the agent's
algorithms. Two implementations ship: ``libvirt`` (real VMs) and ``sim``
(simulated VMs for the embedded default and fast tests). Everything
hypervisor-specific (libvirt calls, domain XML, QMP) stays behind this
interface: the agent only calls the public methods below, and a driver
that cannot do something optional (swap disks, simulated access sampling)
says so with a typed error rather than by missing a method.
"""

import abc
import dataclasses
import typing

from oslo_log import log as logging

from memmut import plugins
from memmut.virt import balloon_floor

LOG = logging.getLogger(__name__)


class HypervisorUnavailable(Exception):
    """The hypervisor cannot be reached now; the agent will retry."""


class HostReadFailed(HypervisorUnavailable):
    """One read of the host (its memory, CPU, domain list) failed while the
    connection stays up: this poll is skipped, the hypervisor is not down."""


class VMNotFound(Exception):
    """The VM is not (or no longer) on this host."""


class VMOperationFailed(Exception):
    """The hypervisor refused or failed one operation on one VM (a lock
    held by a migration, a busy monitor): that VM's, retried later."""


class InvalidBalloonTarget(ValueError):
    """A balloon size outside what the VM can take."""


class SwapDisksUnsupported(Exception):
    """This driver cannot give VMs a swap disk served over NBD."""


class SwapDiskRefused(Exception):
    """The hypervisor refused to attach, inspect or detach a swap disk."""


@dataclasses.dataclass
class VMInfo:
    uuid: str
    name: str
    state: str
    booked_kb: int          # maximum memory the VM was created with
    balloon_kb: int         # current balloon target ("actual")
    memory_stats: dict      # libvirt memoryStats() keys, KiB or counts
    cpu_time_ns: int
    nova_instance: bool = False
    domain_type: typing.Optional[str] = None
    # The hypervisor could not be read for this VM in this listing (e.g. a
    # migration holds its lock): the fields are the last ones read, the
    # state is 'unknown', and the agent keeps the VM without acting on it.
    stale: bool = False


@dataclasses.dataclass
class SwapDiskAttachment:
    """What :meth:`Driver.attach_swap_disk` did."""
    mode: str               # how the disk is attached (driver-specific)
    hot_plugged: bool       # plugged into the running VM now
    defined: bool           # added to the VM's persistent definition now


@dataclasses.dataclass
class HostInfo:
    memory_total_kb: int
    memory_free_kb: int
    cpu_count: int
    cpu_util: float         # 0..1 over all CPUs since the previous call


class Driver(abc.ABC):
    """Operations the agent performs on its hypervisor."""

    name = None

    # The hard balloon floor (see :mod:`memmut.virt.balloon_floor`); a
    # driver built from configuration takes them from ``[agent]``.
    balloon_floor_kb = 64 * 1024
    guest_reserve_kb = 32 * 1024

    def configure_floor(self, conf):
        self.balloon_floor_kb = conf.agent.balloon_floor_kb
        self.guest_reserve_kb = conf.agent.guest_reserve_kb

    @abc.abstractmethod
    def connect(self):
        """(Re)connect; raise HypervisorUnavailable on failure."""

    def close(self):
        """Release the connection."""

    @abc.abstractmethod
    def host_info(self) -> HostInfo:
        """Memory and CPU of the host."""

    @abc.abstractmethod
    def list_vms(self) -> typing.List[VMInfo]:
        """Every running VM the agent should manage."""

    @abc.abstractmethod
    def set_stats_period(self, uuid, seconds):
        """Ask the balloon driver to refresh its statistics every N s."""

    def set_balloon(self, uuid, kib):
        """Set the VM's balloon target (live), never below its hard floor;
        returns the target applied (KiB). Every balloon change of every
        planner goes through here."""
        booked_kb, reserved_kb, vm_floor_kb = self._floor_inputs(uuid)
        floor = balloon_floor.floor_for(booked_kb, self.balloon_floor_kb,
                                        vm_floor_kb, reserved_kb,
                                        self.guest_reserve_kb)
        applied, raised = balloon_floor.clamp(kib, floor)
        if raised:
            key = (uuid, floor)
            logged = self.__dict__.setdefault('_floor_logged', {})
            if logged.get(uuid) != key:
                LOG.info('Balloon target %d MiB for VM %s raised to its '
                         'floor %d MiB (%s)', kib // 1024, uuid,
                         floor.kb // 1024, floor.reason)
                logged[uuid] = key
        self._set_balloon(uuid, applied)
        return applied

    @abc.abstractmethod
    def _floor_inputs(self, uuid):
        """``(booked_kb, boot reservation KiB or None, vm_floor_kb or
        None)`` of a VM: what its hard floor is computed from."""

    @abc.abstractmethod
    def _set_balloon(self, uuid, kib):
        """Apply a balloon target already checked against the floor."""

    def qemu_pid(self, uuid):
        """PID of the process holding the guest's RAM, if there is one."""
        return None

    # -- swap disks (memmut-memstore) -------------------------------------
    # A swap disk is a virtio disk served by an NBD export on a unix
    # socket; the socket path identifies it.  Drivers that cannot attach
    # such disks keep these defaults.

    def _no_swap_disks(self):
        raise SwapDisksUnsupported(
            'the %s driver cannot attach disks (memstore swap disks need '
            'the libvirt driver)' % self.name)

    def attach_swap_disk(self, uuid, socket_path, export, target,
                         reconnect_delay, attach_mode='auto'):
        """Give the VM the swap disk served on ``socket_path`` (NBD export
        ``export``, guest-visible ``target``): hot-plugged into the running
        VM and added to its persistent definition, each only where it is
        not already.  The NBD client waits ``reconnect_delay`` seconds for a
        restarted server (0: no reconnection).  ``attach_mode`` is
        ``[memstore] attach_mode``.  Returns a :class:`SwapDiskAttachment`;
        raises SwapDisksUnsupported, SwapDiskRefused, VMNotFound or
        HypervisorUnavailable."""
        self._no_swap_disks()

    def swap_disk_attached(self, uuid, socket_path):
        """``(live, persistent)``: is the swap disk served on
        ``socket_path`` in the running VM, in its persistent definition?"""
        self._no_swap_disks()

    def detach_swap_disk(self, uuid, socket_path, live, unplug_timeout=15):
        """Remove the swap disk served on ``socket_path`` from the VM's
        persistent definition and, only when ``live`` is true, from the
        running VM (waiting up to ``unplug_timeout`` s for the guest to
        release it).  The caller decides whether a live unplug is safe.
        Returns whether anything was removed."""
        self._no_swap_disks()

    # -- simulated access sampling (the ``sim`` sampling back-end) --------

    # True when :meth:`access_sample` answers.
    simulates_access_sampling = False

    def access_sample(self, uuid, pages):
        """``(accessed, sampled, span_kb)`` of ``pages`` random pages of the
        VM's RAM, for drivers that simulate access sampling."""
        raise NotImplementedError('the %s driver does not simulate access '
                                  'sampling' % self.name)


def load_driver(name, conf):
    """Instantiate a driver registered under ``memmut.virt.drivers``."""
    return plugins.load(plugins.VIRT_DRIVERS, name)(conf)
