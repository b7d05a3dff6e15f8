"""The local memory controller's mutualization round (seed 004 ch.3, §4.3).

:class:`LocalController` is what the agent (LMC) runs every poll when
``[mutualization] enabled`` is set::

    result = local_controller.step(driver.list_vms(), estimates, now)

One round:

1. open the host's :class:`~.books.Books` on the first call
   (host memory from the driver, the budget from ``[mutualization]
   host_reserve_kb`` / ``budget_kb``); add VMs that arrived, remove VMs
   that left;
2. make the books follow what the driver reports
   (:meth:`memmut.agent.mutualization.actuator.Actuator.reconcile`);
3. run Algorithm 1 (:func:`~.algorithm1.distribute`) over the
   running VMs that have an estimate; the others keep their allocation;
4. apply the plan through the :class:`~.actuator.Actuator`
   (reclaims first, grants only from released memory, rate-limited);
5. GMC_inform (§4.3.1): tell the controller the reservoir size whenever it
   changed since the last size the controller acknowledged (a failed call
   is retried next round).

Estimates are duck-typed: any object with ``demand_kb`` (what the VM should
get before headroom; :class:`memmut.agent.wss.pipeline.Estimate`), else
``max_avg_kb`` (WSS^max_avg), else ``wss_kb``. Headroom (``[badis]
headroom_kb`` / ``headroom_fraction``) and the floor (``[badis] floor_kb``)
are added here, as for the single-VM loop.

Mem_init is the booked size, or with ``[mutualization] init_source =
adopted`` the balloon size the VM had when the controller first saw it.
"""

import dataclasses
import time
import typing

import oslo_messaging as messaging
from oslo_log import log as logging

from memmut import objects
from memmut.agent.mutualization import actuator as actuator_mod
from memmut.agent.wss import badis
from memmut.agent.mutualization import algorithm1
from memmut.agent.mutualization import books as bookmod

LOG = logging.getLogger(__name__)

_mib = badis.fmt_kb


@dataclasses.dataclass(frozen=True)
class VMStatus:
    """A VM's place in the mutualization, as reported to the controller."""
    uuid: str
    role: str                   # server / client / neutral
    mem_init_kb: int
    alloc_kb: int
    lent_kb: int                # Server: given to the pool (init - alloc)
    borrowed_kb: int            # Client: held beyond Mem_init


@dataclasses.dataclass
class StepResult:
    """What one round did."""
    timestamp: float
    plan: typing.Optional[algorithm1.Distribution]
    actions: list               # actuator.Action, in the order made
    resyncs: list               # actuator.Resync
    skipped: dict               # uuid -> why it took no part
    reservoir_kb: int
    reservoir_changed: bool
    informed: bool              # GMC_inform sent and acknowledged
    vms: dict                   # uuid -> VMStatus
    books: dict                 # Books.summary()

    @property
    def failed(self):
        return [a for a in self.actions if not a.ok]


class LocalController:
    """Algorithm 1 with actuation and reporting, for one host."""

    def __init__(self, conf, driver, controller_api, clock=time.time,
                 sleep=time.sleep, host=None):
        self.conf = conf
        self.driver = driver
        self.controller = controller_api
        self.clock = clock
        self.sleep = sleep
        self.host = host or conf.host
        m = conf.mutualization
        self.policy = algorithm1.load_policy(m.policy)
        self.books = None
        self.actuator = None
        self.init_kb = {}           # uuid -> Mem_init
        self.names = {}
        self.informed_kb = None     # last reservoir size the GMC acknowledged
        self.last_plan = None

    # -- views -------------------------------------------------------------

    @property
    def reservoir_kb(self):
        return self.books.reservoir_kb if self.books is not None else 0

    def vm_status(self, uuid):
        """:class:`VMStatus` of a VM in the books, else None."""
        if self.books is None or uuid not in self.books.vms:
            return None
        a = self.books.vms[uuid]
        return VMStatus(uuid=uuid, role=a.role, mem_init_kb=a.init_kb,
                        alloc_kb=a.alloc_kb,
                        lent_kb=max(0, a.init_kb - a.alloc_kb),
                        borrowed_kb=max(0, a.alloc_kb - a.init_kb))

    # -- the round ---------------------------------------------------------

    def _open_books(self):
        m = self.conf.mutualization
        total = self.driver.host_info().memory_total_kb
        reserve = min(total, m.host_reserve_kb)
        if m.budget_kb:
            reserve = max(reserve, total - min(total, m.budget_kb))
        self.books = bookmod.Books(total, reserve)
        b = self.conf.badis
        self.actuator = actuator_mod.Actuator(
            self.driver, self.books,
            max_step_fraction=b.max_step_fraction,
            round_interval=b.round_interval,
            reclaim_wait=m.reclaim_wait,
            settle_timeout=m.settle_timeout,
            clock=self.clock, sleep=self.sleep)
        LOG.info('Mutualization on host %s: %s policy, budget %s of host '
                 'memory %s (reserve %s)', self.host, self.policy.name,
                 _mib(self.books.budget_kb), _mib(total), _mib(reserve))

    def _membership(self, vms, skipped):
        live = {vm.uuid for vm in vms}
        for uuid in list(self.books.vms):
            if uuid not in live:
                freed = self.books.remove_vm(uuid)
                LOG.info('VM %s left: its %s return to the pool',
                         self.names.get(uuid, uuid), _mib(freed))
                self.actuator.forget(uuid)
                self.init_kb.pop(uuid, None)
                self.names.pop(uuid, None)
        for vm in vms:
            self.names[vm.uuid] = vm.name
            self.actuator.names[vm.uuid] = vm.name
            if vm.uuid in self.books.vms:
                continue
            if self.conf.mutualization.init_source == 'adopted':
                init = self.init_kb.setdefault(vm.uuid, vm.balloon_kb)
            else:
                init = vm.booked_kb
            init = min(init, vm.booked_kb)
            try:
                self.books.add_vm(vm.uuid, init, vm.balloon_kb,
                                  vm.booked_kb)
            except bookmod.BooksError as e:
                LOG.error('VM %s (%s) holds %s but the budget cannot count '
                          'it (host overcommitted?): not mutualized until '
                          'it can be: %s', vm.name, vm.uuid,
                          _mib(vm.balloon_kb), e)
                skipped[vm.uuid] = 'not in the books: %s' % e
                continue
            self.init_kb[vm.uuid] = init
            LOG.info('VM %s (%s) joins mutualization: Mem_init %s (%s), '
                     'balloon %s, booked %s', vm.name, vm.uuid, _mib(init),
                     self.conf.mutualization.init_source,
                     _mib(vm.balloon_kb), _mib(vm.booked_kb))

    def _demands(self, vms, estimates, skipped):
        b = self.conf.badis
        out = []
        for vm in vms:
            if vm.uuid in skipped or vm.uuid not in self.books.vms:
                continue
            if vm.state != 'running':
                skipped[vm.uuid] = 'state %s: allocation held' % vm.state
                continue
            est = estimates.get(vm.uuid)
            if est is None:
                skipped[vm.uuid] = 'no estimate yet: allocation held'
                continue
            a = self.books.vms[vm.uuid]
            out.append(algorithm1.VMDemand(
                uuid=vm.uuid, init_kb=a.init_kb, act_kb=a.alloc_kb,
                wss_kb=max(0, int(est.demand_kb)), booked_kb=a.booked_kb,
                floor_kb=min(b.floor_kb, a.init_kb)))
        return out

    def _inform(self, now):
        reservoir_kb = self.books.reservoir_kb
        if reservoir_kb == self.informed_kb or self.controller is None:
            return False
        try:
            self.controller.gmc_inform(
                objects.ReservoirInform(host=self.host,
                                        reservoir_kb=reservoir_kb,
                                        timestamp=now),
                timeout=self.conf.agent.report_timeout)
        except messaging.MessagingException as e:
            LOG.warning('GMC_inform (reservoir %s) failed: %s; retrying '
                        'next round', _mib(reservoir_kb), e)
            return False
        LOG.info('GMC_inform: reservoir of %s is %s (was %s)', self.host,
                 _mib(reservoir_kb),
                 'unknown' if self.informed_kb is None
                 else _mib(self.informed_kb))
        self.informed_kb = reservoir_kb
        return True

    def step(self, vms, estimates, now=None):
        """One round over ``vms`` (``driver.list_vms()``) with
        ``estimates`` ({uuid: Estimate}); returns a
        :class:`StepResult`."""
        now = self.clock() if now is None else now
        if self.books is None:
            self._open_books()
        before = self.books.reservoir_kb
        skipped = {}
        self._membership(vms, skipped)
        resyncs, refused = self.actuator.reconcile(vms, now)
        for uuid in refused:
            skipped[uuid] = 'books cannot follow the hypervisor this round'
        demands = self._demands(vms, estimates, skipped)
        plan, actions = None, []
        if demands:
            plan = algorithm1.distribute(
                demands, self.books.pool_kb, self.policy,
                headroom_kb=self.conf.badis.headroom_kb,
                headroom_fraction=self.conf.badis.headroom_fraction,
                min_change_kb=self.conf.mutualization.min_change_kb,
                guaranteed_headroom_kb=(
                    self.conf.mutualization.guaranteed_headroom_kb))
            if not plan.guarantee_met:
                LOG.warning('Budget %s cannot give every VM min(WSS, '
                            'Mem_init): shared by the %s policy',
                            _mib(self.books.budget_kb), plan.policy)
            if plan.unmet_kb:
                LOG.info('Shortage: pool empty, unmet demand %s (%s)',
                         _mib(plan.unmet_total_kb), ', '.join(
                             '%s %s' % (self.names.get(u, u), _mib(k))
                             for u, k in sorted(plan.unmet_kb.items())))
            actions = self.actuator.apply(plan, now)
            self.last_plan = plan
        self.books.check()
        informed = self._inform(now)
        return StepResult(
            timestamp=now, plan=plan, actions=actions, resyncs=resyncs,
            skipped=skipped, reservoir_kb=self.books.reservoir_kb,
            reservoir_changed=self.books.reservoir_kb != before,
            informed=informed,
            vms={u: self.vm_status(u) for u in self.books.vms},
            books=self.books.summary())
