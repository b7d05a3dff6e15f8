"""Memory units, named so that no size is ambiguous.

memmut counts memory in KiB everywhere it can (libvirt's unit): a name
ending in ``_kb`` is KiB, ``_mb``/``_mib`` MiB, ``_bytes`` bytes. The
constants say how many of the smaller unit one of the larger holds:
``KIB_PER_MIB`` KiB in a MiB, ``BYTES_PER_MIB`` bytes in a MiB.
"""

BYTES_PER_KIB = 1024
KIB_PER_MIB = 1024
KIB_PER_GIB = 1024 * KIB_PER_MIB
BYTES_PER_MIB = BYTES_PER_KIB * KIB_PER_MIB
PAGE_BYTES = 4096
PAGE_KIB = PAGE_BYTES // BYTES_PER_KIB


def kib_to_mib(kb):
    """KiB -> MiB (a float)."""
    return kb / float(KIB_PER_MIB)


def mib_to_kib(mb):
    """MiB -> KiB (an int)."""
    return int(mb * KIB_PER_MIB)


def fmt_kb(kb):
    """A size in KiB for log lines: whole MiB when it is one, else KiB."""
    kb = int(kb)
    if kb % KIB_PER_MIB == 0:
        return '%d MiB' % (kb // KIB_PER_MIB)
    return '%d KiB' % kb
