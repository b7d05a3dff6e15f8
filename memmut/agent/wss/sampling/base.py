"""The interface of access-sampling back-ends, and what they share.

An access sampler implements the host side of the "VMware" technique of
seed 004 §2.4.3: at the start of an interval it resets the accessed state of
(some of) the guest's pages, at the end it counts which were accessed. One
sampler object serves every VM of a host; per VM it keeps what it needs
between :meth:`Sampler.begin` and :meth:`Sampler.end`.

Each back-end states what it can see (:meth:`Sampler.capability`): a
back-end that cannot see a VM's guest accesses must be refused for that VM,
never used to report a number that only looks like an estimate (clear_refs
under KVM reports how much QEMU itself touched, not the guest).

The guest RAM of a QEMU process is one mapping; :func:`find_guest_ram`
picks it out of ``/proc/PID/smaps`` by its name (``pc.ram``, a memfd) or its
size (the booked memory).
"""

import abc
import dataclasses
import os
import re
import typing

from memmut.agent.wss import techniques

PAGE_KB = 4
HUGE_KB = 2048


class SamplerError(Exception):
    """The back-end cannot sample this VM now (reason in the message)."""


@dataclasses.dataclass(frozen=True)
class Capability:
    """Whether a back-end can see a VM's guest memory accesses."""
    backend: str
    usable: bool
    reason: str
    exact: bool = False          # reads every page (no sampling error)


@dataclasses.dataclass(frozen=True)
class AccessSample:
    """What one interval of sampling saw for one VM.

    ``accessed`` of ``sampled`` units were accessed; the sampled units
    represent ``span_kb`` of guest memory (the guest RAM mapping, whose size
    is the booked memory: ballooned-out pages are in it but never touched).
    ``referenced_kb`` is set by back-ends that read a referenced size
    directly (then ``accessed``/``sampled`` are that size and the span in
    4 KiB pages). ``huge_kb`` is how much of the mapping was backed by huge
    pages, whose accessed state is per 2 MiB; ``offset_kb`` what the
    back-end subtracts for it.
    """
    backend: str
    accessed: int
    sampled: int
    span_kb: int
    interval_s: float
    referenced_kb: typing.Optional[int] = None
    huge_kb: int = 0
    offset_kb: int = 0

    def estimate(self, m_cur_kb):
        """The sampled WSS (a :class:`techniques.TechniqueEstimate`), capped
        at
        ``m_cur_kb``: sampling cannot see a WSS above the allocation."""
        if self.referenced_kb is not None:
            return techniques.vmware_referenced(
                self.referenced_kb, m_cur_kb, self.offset_kb)
        wss = techniques.vmware_sampling(self.accessed, self.sampled,
                                         self.span_kb)
        return techniques.TechniqueEstimate(
            min(wss.wss_kb, m_cur_kb), wss.source,
            min(wss.low_kb, m_cur_kb))


class Sampler(abc.ABC):
    """One access-sampling back-end for all VMs of a host."""

    name = None
    # Place in the ``auto`` order (lower first); None: never chosen by
    # ``auto``.
    auto_rank = None

    @classmethod
    def from_conf(cls, conf, driver):
        """The back-end as the configuration asks for it."""
        return cls()

    @abc.abstractmethod
    def capability(self, vm, pid):
        """A :class:`Capability` for this VM (``pid``: its QEMU process,
        or None). Must not raise."""

    @abc.abstractmethod
    def begin(self, vm, pid):
        """Start an interval: reset the accessed state the back-end reads.
        Raises :class:`SamplerError`."""

    @abc.abstractmethod
    def end(self, vm, pid):
        """Finish the interval started by :meth:`begin` and return its
        :class:`AccessSample`, or None when no interval was started.
        Raises :class:`SamplerError`."""

    # Whether :meth:`peek` can read the running interval without ending
    # it (the working-set curve of :mod:`memmut.agent.wss.ws_curve`).
    can_peek = False

    def peek(self, vm, pid):
        """What the running interval has seen so far, cumulative since
        :meth:`begin`, without ending it (an :class:`AccessSample`), or
        None when no interval runs. Re-reads the same pages as
        :meth:`end` would. Raises :class:`SamplerError`."""
        raise SamplerError('%s cannot read an interval without ending it'
                           % self.name)

    # Whether the back-end keeps a second, short-cycle set of pages
    # (:mod:`memmut.agent.wss.short_set`) beside the interval's without
    # disturbing the interval's reads: only back-ends that clear and read
    # chosen pages (page_idle, kmod). smaps clears the whole process, so
    # a second clear would erase the interval it is reading.
    can_short = False

    def begin_short(self, vm, pid, pages):
        """Clear a second set of ``pages`` random guest pages, disjoint
        from the running interval's (and from the 2 MiB regions of its
        pages mapped by huge pages: a huge page's accessed state is one
        for all its 4 KiB pages), and start its interval. :meth:`begin`
        of the main interval drops it (the agent starts it again after
        every :meth:`begin`). Raises :class:`SamplerError`."""
        raise SamplerError('%s cannot keep a second set of pages'
                           % self.name)

    def peek_short(self, vm, pid):
        """What the short set has seen since :meth:`begin_short`
        (an :class:`AccessSample`), or None. Raises
        :class:`SamplerError`."""
        raise SamplerError('%s cannot keep a second set of pages'
                           % self.name)

    def forget(self, uuid):
        """Drop what is kept for a VM (it left, or sampling is off)."""


REGION_KB = 2048


def short_pages(rng, npages, count, avoid_pages=(), huge_pages=()):
    """``count`` page indices (sorted) of ``npages``, drawn at random
    without replacement, none of them in ``avoid_pages`` (the main
    interval's page indices) or in the 2 MiB region of one of
    ``huge_pages`` (those of its pages mapped by a huge page, whose
    accessed state is one for the whole region): a second set of pages
    that neither disturbs nor is disturbed by the first. What is left out
    was drawn independently of the guest's accesses, so the draw stays
    uniform over a random part of the memory. Fewer than ``count`` when
    fewer are left."""
    per = REGION_KB // PAGE_KB
    avoid = set(avoid_pages)
    regions = {p // per for p in huge_pages}
    free = npages - len({p for p in avoid if p // per not in regions}) - sum(
        min(per, npages - r * per) for r in regions if r * per < npages)
    count = max(0, min(count, free))
    out = set()
    while len(out) < count:
        p = rng.randrange(npages)
        if p not in avoid and p // per not in regions:
            out.add(p)
    return sorted(out)


# ---------------------------------------------------------------------------
# /proc/PID/smaps


@dataclasses.dataclass
class Mapping:
    start: int
    end: int
    perms: str
    name: str
    fields: dict            # 'Rss', 'Referenced', ... in KiB
    flags: tuple = ()       # VmFlags

    @property
    def size_kb(self):
        return (self.end - self.start) // 1024


_HEADER = re.compile(r'^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$')
_FIELD = re.compile(r'^(\w+):\s+(\d+) kB$')


def parse_smaps(text):
    """Mappings of a ``/proc/PID/smaps`` text, in order."""
    maps = []
    for line in text.splitlines():
        m = _HEADER.match(line)
        if m:
            maps.append(Mapping(int(m.group(1), 16), int(m.group(2), 16),
                                m.group(3), m.group(4).strip(), {}))
            continue
        if not maps:
            continue
        f = _FIELD.match(line)
        if f:
            maps[-1].fields[f.group(1)] = int(f.group(2))
        elif line.startswith('VmFlags:'):
            maps[-1].flags = tuple(line.split()[1:])
    return maps


def _is_ram_name(name):
    return 'pc.ram' in name or name.startswith('/memfd:') or (
        'memory-backend' in name)


def find_guest_ram(maps, booked_kb):
    """The guest RAM mapping among a QEMU process's mappings.

    A mapping named after guest RAM (``pc.ram``, a memfd, a memory
    backend) of at least the booked size wins; otherwise the one private
    anonymous read-write mapping whose size is exactly the booked memory.
    Raises :class:`SamplerError` when none or several match (guessing would
    sample the wrong memory).
    """
    named = [m for m in maps if _is_ram_name(m.name) and
             m.size_kb >= booked_kb and 'rw' in m.perms]
    if len(named) == 1:
        return named[0]
    exact = [m for m in maps if m.size_kb == booked_kb and
             m.perms.startswith('rw') and not m.name]
    if len(exact) == 1 and not named:
        return exact[0]
    if not named and not exact:
        raise SamplerError('no mapping of %d KiB (the booked memory) or '
                           'named pc.ram/memfd in the QEMU process'
                           % booked_kb)
    raise SamplerError('%d candidate guest RAM mappings of %d KiB; '
                       'refusing to guess' % (len(named) or len(exact),
                                              booked_kb))


def hugetlb(mapping):
    """Whether the mapping is hugetlbfs-backed (no per-page accessed state
    for either back-end)."""
    return ('ht' in mapping.flags or mapping.fields.get(
        'KernelPageSize', PAGE_KB) > PAGE_KB)


def thp_kb(mapping):
    """KiB of the mapping backed by transparent huge pages."""
    f = mapping.fields
    return (f.get('AnonHugePages', 0) + f.get('ShmemPmdMapped', 0) +
            f.get('FilePmdMapped', 0))


def read_text(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        raise SamplerError('cannot read %s: %s' % (path, e.strerror or e))


def proc_path(proc_root, pid, name):
    return os.path.join(proc_root, str(pid), name)
