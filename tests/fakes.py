"""Test doubles shared by the unit tests."""

from memmut.virt import driver


class NullDriver(driver.Driver):
    """A driver with no hypervisor behind it: no VMs, every call a no-op.
    Tests subclass it and override what they record."""
    name = 'fake'

    def connect(self):
        pass

    def host_info(self):
        raise NotImplementedError

    def list_vms(self):
        return []

    def set_stats_period(self, uuid, seconds):
        pass

    def _floor_inputs(self, uuid):
        return 1 << 40, None, None

    def _set_balloon(self, uuid, kib):
        pass
