"""The hypervisor driver interface: what the agent needs from a host.

Drivers are thin adapters; every decision is taken by the agent's
algorithms. Two implementations ship: ``libvirt`` (real VMs) and ``sim``
(simulated VMs for the embedded default and fast tests).
"""

import abc
import dataclasses
import typing

from memmut import plugins


class HypervisorUnavailable(Exception):
    """The hypervisor cannot be reached now; the agent will retry."""


class VMNotFound(Exception):
    """The VM is not (or no longer) on this host."""


class InvalidBalloonTarget(ValueError):
    """A balloon size outside what the VM can take."""


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


@dataclasses.dataclass
class HostInfo:
    memory_total_kb: int
    memory_free_kb: int
    cpu_count: int
    cpu_util: float         # 0..1 over all CPUs since the previous call


class Driver(abc.ABC):
    """Operations the agent performs on its hypervisor."""

    name = None

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

    @abc.abstractmethod
    def set_balloon(self, uuid, kib):
        """Set the VM's balloon target (live)."""

    def qemu_pid(self, uuid):
        """PID of the process holding the guest's RAM, if there is one."""
        return None


def load_driver(name, conf):
    """Instantiate a driver registered under ``memmut.virt.drivers``."""
    return plugins.load(plugins.VIRT_DRIVERS, name)(conf)
