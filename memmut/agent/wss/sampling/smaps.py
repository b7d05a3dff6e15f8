"""The ``smaps`` back-end: clear_refs + Referenced of the guest RAM mapping.

``echo 1 > /proc/PID/clear_refs`` clears the accessed bits of every page
table entry of the QEMU process; one interval later the ``Referenced:``
field of the guest RAM mapping in ``/proc/PID/smaps`` is how much of it was
touched since. Every page is read, so this is the sampling technique with n
= all pages and no sampling error.

What it can see:

* Under TCG (libvirt domain type ``qemu``) QEMU's own threads execute the
  guest's loads and stores through the host page tables: guest accesses set
  the bits clear_refs clears. Usable.
* Under KVM the guest runs on secondary page tables (EPT/NPT, or shadow
  page tables without them). Its accesses set accessed bits there, which
  clear_refs neither clears nor reads (it does not call the MMU notifiers
  that idle page tracking uses): Referenced would count only what QEMU
  itself touched (device emulation, migration), a number that looks like a
  small working set. Refused.
* hugetlbfs-backed guest RAM keeps no per-page accessed state. Refused.
* Transparent huge pages (anonymous guest RAM; QEMU asks for them with
  MADV_HUGEPAGE) are referenced per 2 MiB: one touched 4 KiB page counts
  2 MiB, about +56 MiB over the true working set on a 6.1 guest. It is
  reported (``huge_kb``), warned about once per VM, and ``[badis]
  referenced_offset_kb`` is subtracted only while the mapping has huge
  pages. memfd-backed RAM (``<memoryBacking><source type='memfd'/>``) is
  mapped with 4 KiB pages and needs no correction.
"""

import time

from oslo_log import log as logging

from memmut.agent.wss.sampling import base

LOG = logging.getLogger(__name__)


class SmapsSampler(base.Sampler):
    name = 'smaps'
    auto_rank = 10

    @classmethod
    def from_conf(cls, conf, driver):
        return cls(offset_kb=conf.badis.referenced_offset_kb)

    def __init__(self, offset_kb=0, proc_root='/proc', clock=time.monotonic):
        self.offset_kb = offset_kb
        self.proc_root = proc_root
        self.clock = clock
        self._started = {}          # uuid -> monotonic time of clear_refs
        self._thp_warned = set()

    def capability(self, vm, pid):
        dtype = vm.domain_type
        if dtype == 'kvm':
            return base.Capability(
                self.name, False,
                'domain type kvm: guest accesses set the accessed bits of '
                'the EPT/NPT (or shadow) page tables, which clear_refs does '
                'not clear, so Referenced would only count QEMU\'s own '
                'accesses; use page_idle or the kernel helper')
        if dtype != 'qemu':
            return base.Capability(
                self.name, False,
                'domain type %r: smaps sees guest accesses only under TCG '
                '(domain type qemu)' % (dtype,))
        if not pid:
            return base.Capability(self.name, False,
                                   'no QEMU process found for the VM')
        try:
            maps = base.parse_smaps(base.read_text(
                base.proc_path(self.proc_root, pid, 'smaps')))
            ram = base.find_guest_ram(maps, vm.booked_kb)
        except base.SamplerError as e:
            return base.Capability(self.name, False, str(e))
        if base.hugetlb(ram):
            return base.Capability(
                self.name, False, 'guest RAM is on hugetlbfs pages, which '
                'keep no per-page accessed state')
        return base.Capability(self.name, True,
                               'TCG guest, RAM mapping %s' % (
                                   ram.name or 'anonymous'), exact=True)

    def begin(self, vm, pid):
        path = base.proc_path(self.proc_root, pid, 'clear_refs')
        try:
            with open(path, 'w') as f:
                f.write('1')
        except OSError as e:
            raise base.SamplerError('cannot write %s: %s'
                                    % (path, e.strerror or e))
        self._started[vm.uuid] = self.clock()

    # Referenced is cumulative since clear_refs: reading smaps again
    # reads the interval so far (cost: one smaps walk, as end()).
    can_peek = True

    def peek(self, vm, pid):
        started = self._started.get(vm.uuid)
        if started is None:
            return None
        return self._read(vm, pid, started)

    def end(self, vm, pid):
        started = self._started.pop(vm.uuid, None)
        if started is None:
            return None
        return self._read(vm, pid, started)

    def _read(self, vm, pid, started):
        maps = base.parse_smaps(base.read_text(
            base.proc_path(self.proc_root, pid, 'smaps')))
        ram = base.find_guest_ram(maps, vm.booked_kb)
        if 'Referenced' not in ram.fields:
            raise base.SamplerError('no Referenced field in smaps')
        huge = base.thp_kb(ram)
        offset = self.offset_kb if huge else 0
        if huge and vm.uuid not in self._thp_warned:
            self._thp_warned.add(vm.uuid)
            LOG.warning(
                'VM %s (%s): %d MiB of its guest RAM is on transparent huge '
                'pages, referenced per 2 MiB: the smaps back-end '
                'over-estimates the working set (about 56 MiB measured); '
                'subtracting [badis] referenced_offset_kb = %d KiB. '
                'memfd-backed guest RAM avoids this.', vm.name, vm.uuid,
                huge // 1024, self.offset_kb)
        ref = ram.fields['Referenced']
        return base.AccessSample(
            backend=self.name, accessed=ref // base.PAGE_KB,
            sampled=ram.size_kb // base.PAGE_KB, span_kb=ram.size_kb,
            interval_s=self.clock() - started, referenced_kb=ref,
            huge_kb=huge, offset_kb=offset)

    def forget(self, uuid):
        self._started.pop(uuid, None)
        self._thp_warned.discard(uuid)
