"""The balloon's hard floor: the least memory any VM is ever left with.

Planners (Badis targets, Algorithm 1, the baselines) have their own
planning floor (``[badis] floor_kb``), but none of them is the safety net:
the floor below is applied once, by the driver, to every balloon target
whatever asked for it. It is the largest of

* ``[agent] balloon_floor_kb``, the configured floor for every VM;
* the VM's own floor, from its flavor (extra spec
  ``memmut:balloon_floor_mb``) or from memmut's domain metadata (for VMs
  nova does not own);
* the guest's own minimum that memmut measures: the memory its kernel
  reserved at boot (balloon ``actual`` minus the guest's ``MemTotal``,
  which the virtio balloon lowers page by page as it inflates) plus
  ``[agent] guest_reserve_kb`` for what the balloon statistics cannot see
  (unreclaimable slab, page tables, the kernel's free-page reserve);

and never more than the VM's booked memory. Pure functions: the drivers
feed them what they read.
"""

import dataclasses
import typing

PAGE_KB = 4


def _page_up(kb):
    return -(-int(kb) // PAGE_KB) * PAGE_KB


def boot_reserved_kb(memory_stats):
    """What the guest kernel keeps outside ``MemTotal`` (``actual`` -
    ``available``), or None when the statistics do not tell."""
    actual = memory_stats.get('actual')
    available = memory_stats.get('available')
    if not actual or not available or available > actual:
        return None
    return actual - available


def guest_minimum_kb(reserved_kb, reserve_kb):
    """The guest's own minimum: its boot reservation (None: unknown) plus
    ``reserve_kb``."""
    return (reserved_kb or 0) + reserve_kb


def settled_reserved_kb(previous, memory_stats):
    """The boot reservation from a reading, if it can be trusted: the
    balloon's ``actual`` comes from QEMU at once, ``available`` from the
    guest's last statistics, so while the balloon moves their difference
    is off (too small during a shrink). A reading equal to the previous
    one (``previous``, an ``(actual, available)`` pair) is settled.
    Returns ``(pair to keep, reservation or None)``."""
    pair = (memory_stats.get('actual'), memory_stats.get('available'))
    if previous != pair:
        return pair, None
    return pair, boot_reserved_kb(memory_stats)


@dataclasses.dataclass(frozen=True)
class Floor:
    """A VM's hard floor and the part that set it (for the log)."""
    kb: int
    reason: str


def floor_for(booked_kb, configured_kb, vm_floor_kb, reserved_kb,
              reserve_kb):
    """The hard floor of one VM (KiB, whole pages, at most booked);
    ``reserved_kb`` is the guest's boot reservation (None: unknown)."""
    parts = [(configured_kb, 'configured floor'),
             (guest_minimum_kb(reserved_kb, reserve_kb),
              'guest minimum (boot reservation + reserve)')]
    if vm_floor_kb:
        parts.append((vm_floor_kb, 'the VM\'s own floor'))
    kb, reason = max(parts, key=lambda p: p[0])
    if kb >= booked_kb:
        return Floor(booked_kb, '%s, capped at booked memory' % reason)
    return Floor(_page_up(kb), reason)


def clamp(target_kb, floor):
    """``(applied_kb, raised)``: the target raised to the floor if below."""
    if target_kb < floor.kb:
        return floor.kb, True
    return int(target_kb), False


def parse_floor_mb(value) -> typing.Optional[int]:
    """A per-VM floor in MiB (flavor extra spec or metadata text) -> KiB;
    None for a missing, malformed or non-positive value."""
    try:
        mb = int(str(value).strip())
    except (TypeError, ValueError):
        return None
    return mb * 1024 if 0 < mb < 1 << 30 else None
