"""Shared by the mutualization functional test and benchmark: a
controller side that records GMC_inform messages, and what the guests may
hold."""

from memmut import objects


class RecordingController:
    """The controller side of GMC_inform, checking each message's schema
    as the RPC server would."""

    def __init__(self):
        self.informs = []

    def gmc_inform(self, inform, timeout=None):
        self.informs.append(objects.ReservoirInform.from_primitive(
            inform.to_primitive()))


def held_kb(ctl, vms):
    """What the VMs may be using: per VM the larger of the balloon size the
    hypervisor reports and any target still being reached."""
    total = 0
    for vm in vms:
        p = ctl.actuator.pending.get(vm.uuid) if ctl.actuator else None
        total += max(vm.balloon_kb, p.target_kb if p else 0)
    return total
