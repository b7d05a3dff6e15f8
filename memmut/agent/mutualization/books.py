"""Per-host memory books of the local memory controller (LMC).

Every KiB of the host's memory is in exactly one account::

    total = reserve                      host OS, hypervisor, QEMU overhead
          + sum of VM allocations        each VM's balloon size (Mem_act)
          + pool                         free: reclaimed or never assigned,
                                         not granted yet
          + sum of exports               lent to other hosts (memstore
                                         remote exports, GMC/LMC_alloc)
          + local_store                  reservoir RAM holding local VMs'
                                         swapped pages (memstore)

``budget = total - reserve`` is what VMs and the reservoir share;
``reservoir = pool + exports + local_store`` is the reservoir of seed 004
ch.4. Algorithm 1 (:mod:`~.algorithm1`) moves memory only
between VM allocations and the pool; the global protocol moves it between
the pool and exports.

The seed's other quantities are *views* of these accounts, computed, never
stored, so nothing is counted twice:

* ``granted_within_init``: sum of min(Mem_act, Mem_init) -- the capacity
  VMs hold of their own initial allocation;
* ``lent_local``: sum of max(0, Mem_act - Mem_init) -- what Client VMs
  hold beyond their initial allocation (lent to local VMs);
* ``reclaimed``: sum of max(0, Mem_init - Mem_act) -- what Server VMs gave;
* ``unassigned``: budget - sum of Mem_init -- memory no VM started with.

They satisfy ``pool + exports + local_store + lent_local = reclaimed +
unassigned`` (a consequence of the sum above).

:meth:`Books.check` verifies the invariant and raises :class:`BooksError`
with the full breakdown. Every operation validates first and changes
nothing when it refuses.
"""

import dataclasses


class BooksError(Exception):
    """The books do not add up, or an operation would break them."""


@dataclasses.dataclass
class VMAccount:
    uuid: str
    init_kb: int        # Mem_init: the initial allocation, guaranteed
    alloc_kb: int       # Mem_act: the current balloon size
    booked_kb: int      # the most the VM can ever have

    @property
    def role(self):
        """``server`` gave memory, ``client`` owes memory, else neutral."""
        if self.alloc_kb < self.init_kb:
            return 'server'
        if self.alloc_kb > self.init_kb:
            return 'client'
        return 'neutral'


def _kb(name, value):
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise BooksError('%s must be a non-negative integer KiB, got %r'
                         % (name, value))
    return value


class Books:
    """The memory accounts of one host."""

    def __init__(self, total_kb, reserve_kb):
        _kb('total_kb', total_kb)
        _kb('reserve_kb', reserve_kb)
        if reserve_kb > total_kb:
            raise BooksError('host reserve %d KiB exceeds host memory %d KiB'
                             % (reserve_kb, total_kb))
        self.total_kb = total_kb
        self.reserve_kb = reserve_kb
        self.vms = {}
        self.pool_kb = total_kb - reserve_kb
        self.exports = {}
        self.local_store_kb = 0
        self.check()

    @classmethod
    def open(cls, total_kb, reserve_kb, vms=()):
        """Books for a host whose VMs already run.

        ``vms`` are (uuid, init_kb, alloc_kb, booked_kb) tuples or
        :class:`VMAccount`; raises :class:`BooksError` when they hold more
        than the budget (an overcommitted host).
        """
        books = cls(total_kb, reserve_kb)
        for vm in vms:
            if isinstance(vm, VMAccount):
                vm = (vm.uuid, vm.init_kb, vm.alloc_kb, vm.booked_kb)
            books.add_vm(*vm)
        return books

    # -- views -------------------------------------------------------------

    @property
    def budget_kb(self):
        return self.total_kb - self.reserve_kb

    @property
    def allocated_kb(self):
        return sum(vm.alloc_kb for vm in self.vms.values())

    @property
    def exported_kb(self):
        return sum(self.exports.values())

    @property
    def reservoir_kb(self):
        return self.pool_kb + self.exported_kb + self.local_store_kb

    @property
    def granted_within_init_kb(self):
        return sum(min(vm.alloc_kb, vm.init_kb) for vm in self.vms.values())

    @property
    def lent_local_kb(self):
        return sum(max(0, vm.alloc_kb - vm.init_kb)
                   for vm in self.vms.values())

    @property
    def reclaimed_kb(self):
        return sum(max(0, vm.init_kb - vm.alloc_kb)
                   for vm in self.vms.values())

    @property
    def unassigned_kb(self):
        return self.budget_kb - sum(vm.init_kb for vm in self.vms.values())

    def summary(self):
        return {
            'total_kb': self.total_kb,
            'reserve_kb': self.reserve_kb,
            'allocated_kb': self.allocated_kb,
            'pool_kb': self.pool_kb,
            'exported_kb': self.exported_kb,
            'local_store_kb': self.local_store_kb,
            'reservoir_kb': self.reservoir_kb,
            'granted_within_init_kb': self.granted_within_init_kb,
            'lent_local_kb': self.lent_local_kb,
            'reclaimed_kb': self.reclaimed_kb,
            'unassigned_kb': self.unassigned_kb,
        }

    def check(self):
        """Raise :class:`BooksError` unless every KiB is counted once."""
        problems = []
        for name in ('total_kb', 'reserve_kb', 'pool_kb', 'local_store_kb'):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                problems.append('%s is %r' % (name, value))
        for uuid, vm in self.vms.items():
            if uuid != vm.uuid:
                problems.append('VM filed under %s is %s' % (uuid, vm.uuid))
            if min(vm.alloc_kb, vm.init_kb) < 0 or vm.booked_kb <= 0:
                problems.append('VM %s has negative sizes' % uuid)
            if vm.alloc_kb > vm.booked_kb:
                problems.append('VM %s holds %d KiB, above its booked %d KiB'
                                % (uuid, vm.alloc_kb, vm.booked_kb))
            if vm.init_kb > vm.booked_kb:
                problems.append('VM %s: Mem_init %d KiB above booked %d KiB'
                                % (uuid, vm.init_kb, vm.booked_kb))
        for ident, size in self.exports.items():
            if not isinstance(size, int) or size <= 0:
                problems.append('export %s has size %r' % (ident, size))
        counted = (self.reserve_kb + self.allocated_kb + self.pool_kb +
                   self.exported_kb + self.local_store_kb)
        if counted != self.total_kb:
            problems.append(
                'accounts sum to %d KiB but the host has %d KiB (off by '
                '%+d)' % (counted, self.total_kb, counted - self.total_kb))
        if problems:
            raise BooksError('memory books inconsistent: %s; books: %s'
                             % ('; '.join(problems), self.summary()))

    # -- VMs ----------------------------------------------------------------

    def _vm(self, uuid):
        try:
            return self.vms[uuid]
        except KeyError:
            raise BooksError('VM %s is not in the books' % uuid) from None

    def _take(self, kb, what):
        if kb > self.pool_kb:
            raise BooksError('%s needs %d KiB but the pool has %d KiB'
                             % (what, kb, self.pool_kb))

    def add_vm(self, uuid, init_kb, alloc_kb, booked_kb):
        """A VM arrives holding ``alloc_kb``, taken from the pool."""
        if uuid in self.vms:
            raise BooksError('VM %s is already in the books' % uuid)
        for name, v in (('init_kb', init_kb), ('alloc_kb', alloc_kb),
                        ('booked_kb', booked_kb)):
            _kb(name, v)
        if init_kb > booked_kb or alloc_kb > booked_kb:
            raise BooksError('VM %s: Mem_init %d and allocation %d KiB must '
                             'not exceed booked %d KiB'
                             % (uuid, init_kb, alloc_kb, booked_kb))
        self._take(alloc_kb, 'VM %s' % uuid)
        self.vms[uuid] = VMAccount(uuid, init_kb, alloc_kb, booked_kb)
        self.pool_kb -= alloc_kb
        self.check()

    def remove_vm(self, uuid):
        """A VM left: its allocation returns to the pool."""
        vm = self._vm(uuid)
        del self.vms[uuid]
        self.pool_kb += vm.alloc_kb
        self.check()
        return vm.alloc_kb

    def reclaim(self, uuid, kb):
        """Balloon inflated by ``kb``: VM -> pool."""
        vm = self._vm(uuid)
        _kb('reclaim', kb)
        if kb > vm.alloc_kb:
            raise BooksError('cannot reclaim %d KiB from VM %s holding %d KiB'
                             % (kb, uuid, vm.alloc_kb))
        vm.alloc_kb -= kb
        self.pool_kb += kb
        self.check()

    def grant(self, uuid, kb):
        """Balloon deflated by ``kb``: pool -> VM."""
        vm = self._vm(uuid)
        _kb('grant', kb)
        self._take(kb, 'grant to VM %s' % uuid)
        if vm.alloc_kb + kb > vm.booked_kb:
            raise BooksError('granting %d KiB would put VM %s above its '
                             'booked %d KiB' % (kb, uuid, vm.booked_kb))
        vm.alloc_kb += kb
        self.pool_kb -= kb
        self.check()

    def set_allocation(self, uuid, alloc_kb):
        """Record an allocation observed on the hypervisor (resync)."""
        vm = self._vm(uuid)
        _kb('alloc_kb', alloc_kb)
        if alloc_kb >= vm.alloc_kb:
            self.grant(uuid, alloc_kb - vm.alloc_kb)
        else:
            self.reclaim(uuid, vm.alloc_kb - alloc_kb)

    def apply(self, plan):
        """Apply a :class:`~.algorithm1.Plan`'s moves."""
        for move in plan.moves:
            if move.kind == 'reclaim':
                self.reclaim(move.uuid, move.amount_kb)
            elif move.kind == 'grant':
                self.grant(move.uuid, move.amount_kb)
            else:
                raise BooksError('unknown move kind %r' % (move.kind,))

    # -- reservoir uses -------------------------------------------------------

    def export(self, ident, kb):
        """Lend ``kb`` of the pool to another host (LMC_alloc)."""
        if ident in self.exports:
            raise BooksError('export %s already exists' % ident)
        if _kb('export', kb) == 0:
            raise BooksError('export %s: size must be positive' % ident)
        self._take(kb, 'export %s' % ident)
        self.exports[ident] = kb
        self.pool_kb -= kb
        self.check()

    def release_export(self, ident):
        """An export ended (LMC_release / reclaimed): back to the pool."""
        try:
            kb = self.exports.pop(ident)
        except KeyError:
            raise BooksError('no export %s' % ident) from None
        self.pool_kb += kb
        self.check()
        return kb

    def store_local(self, kb):
        """Reservoir RAM now holds ``kb`` more of local VMs' swap."""
        _kb('store', kb)
        self._take(kb, 'local store')
        self.local_store_kb += kb
        self.pool_kb -= kb
        self.check()

    def release_local(self, kb):
        _kb('release', kb)
        if kb > self.local_store_kb:
            raise BooksError('cannot release %d KiB of local store holding '
                             '%d KiB' % (kb, self.local_store_kb))
        self.local_store_kb -= kb
        self.pool_kb += kb
        self.check()
