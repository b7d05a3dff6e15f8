"""A scripted hypervisor for actuator and local-controller unit tests.

Balloons behave like virtio balloons seen through libvirt: ``set_balloon``
sets a target at once; the ``actual`` size a guest reports moves toward it
by at most ``release_kb`` per ``list_vms()`` call when inflating (a guest
takes time to free pages), at once when deflating. Calls can be made to
fail, and every call is recorded.
"""

import dataclasses

from memmut.virt import driver as virt_driver

MiB = 1024


@dataclasses.dataclass
class Guest:
    uuid: str
    name: str
    booked_kb: int
    actual_kb: int
    target_kb: int = None
    state: str = 'running'
    release_kb: int = None      # None: inflates at once
    floor_kb: int = None        # the VM's own balloon floor

    def __post_init__(self):
        if self.target_kb is None:
            self.target_kb = self.actual_kb


class BalloonHost(virt_driver.Driver):
    name = 'scripted'
    # A low hard floor, so that the planners' own floors are what the
    # scripted cases exercise (the floor has tests of its own).
    balloon_floor_kb = 4 * MiB
    guest_reserve_kb = 0

    def __init__(self, total_kb=4096 * MiB):
        self.total_kb = total_kb
        self.guests = {}
        self.calls = []             # (uuid, kib) of every set_balloon
        self.fail = {}              # uuid -> exception to raise once
        self.unavailable = False

    def add(self, uuid, booked_mib, actual_mib, name=None, release_mib=None):
        g = Guest(uuid, name or 'vm-' + uuid, booked_mib * MiB,
                  actual_mib * MiB,
                  release_kb=None if release_mib is None
                  else release_mib * MiB)
        self.guests[uuid] = g
        return g

    def connect(self):
        if self.unavailable:
            raise virt_driver.HypervisorUnavailable('scripted outage')

    def host_info(self):
        self.connect()
        return virt_driver.HostInfo(self.total_kb, self.total_kb // 2, 2, 0.1)

    def list_vms(self):
        self.connect()
        out = []
        for g in self.guests.values():
            if g.actual_kb > g.target_kb:
                step = g.actual_kb - g.target_kb
                if g.release_kb is not None:
                    step = min(step, g.release_kb)
                g.actual_kb -= step
            elif g.actual_kb < g.target_kb:
                g.actual_kb = g.target_kb
            out.append(virt_driver.VMInfo(
                uuid=g.uuid, name=g.name, state=g.state,
                booked_kb=g.booked_kb, balloon_kb=g.actual_kb,
                memory_stats={'actual': g.actual_kb}, cpu_time_ns=1))
        return out

    def set_stats_period(self, uuid, seconds):
        pass

    def _floor_inputs(self, uuid):
        g = self.guests.get(uuid)
        if g is None:
            return 1 << 40, None, None
        return g.booked_kb, None, g.floor_kb

    def _set_balloon(self, uuid, kib):
        self.connect()
        self.calls.append((uuid, kib))
        if uuid in self.fail:
            raise self.fail.pop(uuid)
        if uuid not in self.guests:
            raise virt_driver.VMNotFound(uuid)
        g = self.guests[uuid]
        if not 0 < kib <= g.booked_kb:
            raise virt_driver.InvalidBalloonTarget(kib)
        g.target_kb = kib
        if g.release_kb is None and kib < g.actual_kb:
            g.actual_kb = kib
