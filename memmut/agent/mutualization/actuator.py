"""Balloon actuation of local memory mutualization.

:class:`Actuator` turns a :class:`~.algorithm1.Plan` into
``driver.set_balloon`` calls and keeps :class:`~.books.Books` equal
to what the host really holds. The rules, in the order a round applies
them:

1. **Reclaim before grant.** Every reclaim (balloon inflation) of the plan
   is issued first. The books count a VM whose balloon is inflating at
   max(target, actual): memory moves to the pool only once the guest has
   released it (the hypervisor's ``actual`` balloon size reached the
   target). The round waits up to ``reclaim_wait`` seconds for that.
2. **Grants only from the pool.** A grant (deflation) is booked *before*
   the call (pool -> VM, counted at the target at once, since the guest may
   touch the memory as soon as the balloon deflates) and only for what the
   pool holds. Grants up to Mem_init (the guarantee) go first; grants beyond
   Mem_init share what is left in proportion to their planned size. So the
   host never hands out memory that a guest has not released: sum of
   allocations + pool + reservoir uses + reserve = host memory, at every
   step, and no VM is ever counted below what it may be using.
3. **Rate limit.** Like the single-VM loop (``[badis] max_step_fraction``),
   a VM's balloon moves at most ``max_step_fraction`` x booked memory per
   ``round_interval`` seconds: a VM changed ``dt`` seconds ago may move
   ``min(1, dt / round_interval)`` of that step. A reclaim cut by the limit
   leaves less in the pool, and the grants shrink accordingly; the next
   round continues.
4. **Failures.** A failed reclaim books nothing (the VM keeps its
   allocation). A failed grant is rolled back in the books (the memory
   returns to the pool). Either way the VM is read again from the driver
   at the start of the next round (:meth:`Actuator.reconcile`).
5. **Reconciliation.** At the start of every round the books follow what
   the driver reports: ``actual`` for a settled balloon, max(target,
   actual) while a change is in flight. A change that does not settle within
   ``settle_timeout`` seconds is taken at ``actual`` (with a warning);
   changes made outside memmut are adopted the same way.

Balloon targets are whole 4 KiB pages (the balloon's unit). Algorithm 1
plans in whole pages, so a plan's targets are set as they are; a target
cut by the rate limit or by what the pool holds (or a plan made in KiB) is
rounded, a reclaim up and a grant down, so rounding never takes memory
the plan did not free.

Every balloon change is logged with the VM's name, UUID and the plan's
reason.
"""

import dataclasses
import time
import typing

from oslo_log import log as logging

from memmut.agent.wss import badis
from memmut.agent.mutualization import algorithm1
from memmut.agent.mutualization import books as bookmod
from memmut.virt import driver as virt_driver

LOG = logging.getLogger(__name__)

PAGE_KB = algorithm1.PAGE_KB
_mib = badis.fmt_kb


def _page_up(kb):
    return -(-kb // PAGE_KB) * PAGE_KB


def _page_down(kb):
    return kb // PAGE_KB * PAGE_KB


@dataclasses.dataclass
class Pending:
    """A balloon change issued and not yet reached by the guest."""
    target_kb: int
    since: float
    kind: str


@dataclasses.dataclass(frozen=True)
class Action:
    """One balloon change the actuator attempted."""
    uuid: str
    name: str
    kind: str                   # reclaim / grant
    from_kb: int                # the books' allocation before the call
    to_kb: int                  # the balloon target set (or tried)
    planned_to_kb: int          # what the plan asked for
    ok: bool
    reason: str
    error: typing.Optional[str] = None

    @property
    def amount_kb(self):
        return abs(self.to_kb - self.from_kb)


@dataclasses.dataclass(frozen=True)
class Resync:
    """The books followed the hypervisor for one VM."""
    uuid: str
    from_kb: int
    to_kb: int
    why: str


class Actuator:
    """Applies plans to one host's balloons and keeps its books."""

    def __init__(self, driver, books, max_step_fraction=0.25,
                 round_interval=60.0, reclaim_wait=5.0, settle_timeout=60.0,
                 clock=time.time, sleep=time.sleep, poll_interval=0.25):
        if not 0 < max_step_fraction <= 1:
            raise ValueError('max_step_fraction must be in (0, 1]')
        if round_interval <= 0 or settle_timeout <= 0 or reclaim_wait < 0:
            raise ValueError('intervals must be positive')
        self.driver = driver
        self.books = books
        self.max_step_fraction = max_step_fraction
        self.round_interval = round_interval
        self.reclaim_wait = reclaim_wait
        self.settle_timeout = settle_timeout
        self.clock = clock
        self.sleep = sleep
        self.poll_interval = poll_interval
        self.pending = {}           # uuid -> Pending
        self.last_change = {}       # uuid -> time of the last change
        self.names = {}             # uuid -> VM name, for log lines

    # -- helpers ------------------------------------------------------------

    def _label(self, uuid):
        name = self.names.get(uuid)
        return '%s (%s)' % (name, uuid) if name and name != uuid else uuid

    def forget(self, uuid):
        """The VM left the host."""
        self.pending.pop(uuid, None)
        self.last_change.pop(uuid, None)
        self.names.pop(uuid, None)

    def allowance_kb(self, uuid, booked_kb, now):
        """How far the VM's balloon may move now (the rate limit)."""
        step = max(PAGE_KB, int(self.max_step_fraction * booked_kb))
        last = self.last_change.get(uuid)
        if last is None:
            return step
        return int(step * min(1.0, max(0.0, now - last) /
                              self.round_interval))

    def counted_kb(self, uuid, actual_kb, now):
        """What the books must count for a VM whose balloon is at
        ``actual_kb``: the larger of target and actual while a change is in
        flight. Clears settled and expired changes."""
        p = self.pending.get(uuid)
        if p is None:
            return actual_kb
        settled = (actual_kb <= p.target_kb if p.kind ==
                   algorithm1.MOVE_RECLAIM else actual_kb >= p.target_kb)
        if settled:
            del self.pending[uuid]
            return actual_kb
        if now - p.since >= self.settle_timeout:
            LOG.warning('VM %s did not reach its balloon target %s within '
                        '%.0f s (at %s): counting it at %s',
                        self._label(uuid), _mib(p.target_kb),
                        self.settle_timeout, _mib(actual_kb),
                        _mib(actual_kb))
            del self.pending[uuid]
            return actual_kb
        return max(p.target_kb, actual_kb)

    def _set_books(self, uuid, kb):
        """Set one VM's allocation in the books; False if they refuse (the
        VM holds more than the pool can cover: overcommitted from outside).
        """
        try:
            self.books.set_allocation(uuid, kb)
            return True
        except bookmod.BooksError as e:
            LOG.error('VM %s holds %s but the books cannot count it: %s',
                      self._label(uuid), _mib(kb), e)
            return False

    # -- reconciliation -----------------------------------------------------

    def reconcile(self, vms, now):
        """Make the books follow the driver's view of the VMs in them.

        ``vms``: VMInfo list from ``driver.list_vms()``. Returns the
        :class:`Resync` records and the UUIDs the books could not follow.
        """
        resyncs, refused = [], []
        for vm in vms:
            if vm.uuid not in self.books.vms:
                continue
            self.names[vm.uuid] = vm.name
            account = self.books.vms[vm.uuid]
            was_pending = vm.uuid in self.pending
            counted = self.counted_kb(vm.uuid, vm.balloon_kb, now)
            if counted == account.alloc_kb:
                continue
            if was_pending:
                why = ('balloon change in flight: target %s, actual %s'
                       % (_mib(self.pending[vm.uuid].target_kb)
                          if vm.uuid in self.pending else _mib(counted),
                          _mib(vm.balloon_kb)))
            else:
                why = 'balloon at %s (changed outside this round)' % (
                    _mib(vm.balloon_kb))
            before = account.alloc_kb
            if self._set_books(vm.uuid, counted):
                LOG.info('Books: VM %s counted %s -> %s: %s',
                         self._label(vm.uuid), _mib(before), _mib(counted),
                         why)
                resyncs.append(Resync(vm.uuid, before, counted, why))
            else:
                refused.append(vm.uuid)
        return resyncs, refused

    # -- applying a plan ----------------------------------------------------

    def _call(self, uuid, target_kb):
        """set_balloon; returns ``(applied_kb, None)`` or ``(None, error
        text)``. The driver may raise the target to the VM's hard floor."""
        try:
            return self.driver.set_balloon(uuid, target_kb), None
        except (virt_driver.VMNotFound, virt_driver.HypervisorUnavailable,
                virt_driver.InvalidBalloonTarget,
                virt_driver.VMOperationFailed) as e:
            return None, '%s: %s' % (type(e).__name__, e)
        except Exception as e:      # a driver error we do not know
            LOG.exception('Balloon change of VM %s failed unexpectedly',
                          self._label(uuid))
            return None, '%s: %s' % (type(e).__name__, e)

    def _reclaim(self, move, now):
        account = self.books.vms[move.uuid]
        cur = account.alloc_kb
        limit = self.allowance_kb(move.uuid, account.booked_kb, now)
        base = cur
        p = self.pending.get(move.uuid)
        if p is not None and p.kind == algorithm1.MOVE_RECLAIM:
            # Still inflating toward p.target: never raise that target.
            base = min(cur, p.target_kb)
        target = _page_up(max(move.to_kb, base - limit))
        if target >= cur or (p is not None and target == p.target_kb):
            return None
        reason = move.reason
        if target > _page_up(move.to_kb):
            reason += '; rate-limited to %s this round' % _mib(cur - target)
        applied, error = self._call(move.uuid, target)
        if error:
            LOG.warning('Balloon VM %s: %s FAILED (%s); books unchanged, '
                        'the VM is read again next round',
                        self._label(move.uuid), reason, error)
            self.pending.pop(move.uuid, None)
        elif applied != target:
            reason += '; raised to the VM\'s floor %s' % _mib(applied)
            target = applied
            if applied > cur:
                # The VM sat below its floor: the driver grew it.
                self._set_books(move.uuid, applied)
        return self._outcome(move, cur, target, reason, error, now)

    def _wait_released(self, actions):
        """Wait (bounded) for inflating balloons, then book what they
        released."""
        waiting = {a.uuid: a.to_kb for a in actions if a.ok}
        if not waiting:
            return
        deadline = self.clock() + self.reclaim_wait
        actual = {}
        while True:
            try:
                infos = self.driver.list_vms()
            except virt_driver.HypervisorUnavailable as e:
                LOG.warning('Cannot read balloons after reclaiming (%s): '
                            'reclaimed memory stays counted with its VMs',
                            e)
                break
            actual = {i.uuid: i.balloon_kb for i in infos
                      if i.uuid in waiting}
            if all(actual.get(u, t + 1) <= t for u, t in waiting.items()):
                break
            if self.clock() >= deadline:
                late = sorted(self._label(u) for u, t in waiting.items()
                              if actual.get(u, t + 1) > t)
                LOG.info('Balloons of %s still inflating after %.1f s: '
                         'their memory is granted in a later round',
                         ', '.join(late), self.reclaim_wait)
                break
            self.sleep(self.poll_interval)
        now = self.clock()
        for uuid in waiting:
            if uuid in actual and uuid in self.books.vms:
                self._set_books(uuid, self.counted_kb(uuid, actual[uuid],
                                                      now))

    def _grant(self, move, amount_kb, now):
        account = self.books.vms[move.uuid]
        cur = account.alloc_kb
        target = _page_down(min(move.to_kb, cur + amount_kb))
        if target <= cur:
            return None
        reason = move.reason
        if target < _page_down(move.to_kb):
            reason += '; limited to %s this round (%s)' % (
                _mib(target - cur), 'rate limit or memory not yet released')
        self.books.grant(move.uuid, target - cur)     # reserve first
        applied, error = self._call(move.uuid, target)
        if applied is not None and applied != target:
            # Only a reclaim can go below the floor; a grant never is
            # raised. Keep the books true whatever the driver applied.
            self._set_books(move.uuid, applied)
            target = applied
        if error:
            self.books.reclaim(move.uuid, target - cur)   # roll back
            LOG.warning('Balloon VM %s: %s FAILED (%s); the grant is rolled '
                        'back in the books', self._label(move.uuid), reason,
                        error)
        return self._outcome(move, cur, target, reason, error, now)

    def _outcome(self, move, cur, target, reason, error, now):
        """The Action of a balloon call; a successful one is pending until
        the guest reaches its target."""
        if not error:
            LOG.info('Balloon VM %s: %s', self._label(move.uuid), reason)
            self.pending[move.uuid] = Pending(target, now, move.kind)
            self.last_change[move.uuid] = now
        return Action(move.uuid, self.names.get(move.uuid, ''), move.kind,
                      cur, target, move.to_kb, not error, reason,
                      error or None)

    def apply(self, plan, now=None):
        """Apply ``plan``'s moves; returns the :class:`Action` list."""
        now = self.clock() if now is None else now
        actions = []
        reclaims = [m for m in plan.moves
                    if m.kind == algorithm1.MOVE_RECLAIM]
        grants = [m for m in plan.moves
                  if m.kind == algorithm1.MOVE_GRANT]
        for move in reclaims:
            if move.uuid not in self.books.vms:
                continue
            a = self._reclaim(move, now)
            if a:
                actions.append(a)
        self._wait_released(actions)

        # Wanted grant per VM after the rate limit; guarantee grants first.
        wants = []
        for move in grants:
            if move.uuid not in self.books.vms:
                continue
            account = self.books.vms[move.uuid]
            want = min(move.to_kb - account.alloc_kb,
                       self.allowance_kb(move.uuid, account.booked_kb, now))
            if want > 0:
                wants.append((move, want, account.init_kb))
        within = [(m, w) for m, w, init in wants if m.to_kb <= init]
        beyond = [(m, w) for m, w, init in wants if m.to_kb > init]
        for move, want in within:
            a = self._grant(move, min(want, self.books.pool_kb), now)
            if a:
                actions.append(a)
        total = sum(w for _, w in beyond)
        pool = self.books.pool_kb
        for move, want in beyond:
            share = want if total <= pool else want * pool // total
            a = self._grant(move, min(share, self.books.pool_kb), now)
            if a:
                actions.append(a)
        self.books.check()
        return actions
