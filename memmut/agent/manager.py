"""The compute-node agent (LMC): poll the hypervisor, keep recent samples,
report to the controller, and answer the controller's protocol calls.

The agent never stops because a peer is away: when the hypervisor is
unreachable it logs once and retries every poll; when the controller is
unreachable it keeps its reports (bounded by ``[agent] report_backlog``) and
sends them, oldest first, once the controller answers again. Each report
carries (boot_id, seq) so a report resent after a lost reply is stored once.

Every poll also runs the working-set estimation of each VM
(:class:`memmut.agent.wss.pipeline.EstimationPipeline`, ``[agent]
wss_estimator``), puts the estimates in the report, and, with ``[agent]
balloon_actuation``, moves balloons: through local mutualization
(:class:`~memmut.agent.mutualization.local_controller.LocalController`)
when ``[mutualization] enabled``, else through the single-VM on-demand
loop (:class:`~memmut.agent.mutualization.on_demand.OnDemandController`).
"""

import collections
import threading
import time
import uuid as uuidlib

import oslo_messaging as messaging
from oslo_log import log as logging

from memmut import objects
from memmut import plugins
from memmut.agent.wss import pipeline
from memmut.agent import lender as lendermod
from memmut.agent import remote
from memmut.agent import rpcapi
from memmut.agent.wss import swap_monitors as swapmod
from memmut.agent.swap import swapdisk
from memmut.virt import driver as virt_driver

LOG = logging.getLogger(__name__)


class AgentManager:
    target = messaging.Target(version=rpcapi.VERSION)

    def __init__(self, conf, driver, controller_api, clock=time.time):
        self.conf = conf
        self.host = conf.host
        self.driver = driver
        self.controller = controller_api
        self.clock = clock
        self.boot_id = str(uuidlib.uuid4())
        self.seq = 0
        self.samples = {}            # uuid -> deque of objects.VMReport
        self.backlog = collections.deque()
        self.hypervisor_up = None    # None until the first poll
        self.controller_up = None
        self._adopted = set()
        self._host_read_failed = None   # kind of the last failed host read
        self._lock = threading.Lock()
        # memstore serves the VMs' swap disks and Geiger's reuse distances.
        self.swapdisks = (swapdisk.SwapDiskManager(conf, driver)
                          if conf.memstore.enabled else None)
        self.estimation = pipeline.EstimationPipeline(
            conf, driver, swap=swapmod.SwapMonitors(
                pipeline.default_swap_monitors(
                    conf, self._memstore_read if self.swapdisks else None)))
        self.estimates = {}          # uuid -> pipeline.Estimate
        # Who moves the balloons: Algorithm 1 over the host's VMs, or each
        # VM on its own (a memmut.agent.balloon_controllers plug-in).
        self.balloon_controller = plugins.load(
            plugins.BALLOON_CONTROLLERS,
            'mutualization' if conf.mutualization.enabled
            else 'on_demand')(conf, driver, controller_api)
        # The data plane of remote memory: memstore's slabs when memstore
        # is enabled (memmut.agent.remote); lent slabs are booked in the
        # local controller's books.
        self.remote = remote.make(conf, self.host, books=self._books)
        # The client side: ask other hosts only for what local
        # mutualization leaves unmet, up to [mutualization] remote_cap_kb.
        self.remote_policy = remote.RemoteClientPolicy(
            self.host, self.remote, controller_api,
            conf.mutualization.remote_cap_kb,
            timeout=conf.agent.report_timeout)
        # The lender side: slabs this host lends come back (GMC_reclaim)
        # when its own VMs lack memory; meanwhile it lends no more.
        self.lender = lendermod.LenderReclaim(
            self.host, self.remote, controller_api, self._books,
            conf.mutualization.reclaim_timeout,
            rpc_timeout=conf.agent.report_timeout)
        self.local_unmet_kb = 0

    def _books(self):
        return getattr(self.balloon_controller, 'books', None)

    def _memstore_read(self, vm):
        """A VM's memstore swap monitor; None (the estimators then fall back
        to the balloon statistics) when it cannot be read."""
        return self.swapdisks.monitor(vm.uuid)

    # -- polling ----------------------------------------------------------

    def _adopt(self, vm):
        try:
            self.driver.set_stats_period(vm.uuid,
                                         self.conf.agent.stats_period)
        except virt_driver.VMNotFound:
            return
        except Exception as e:      # keep managing it; stats may be stale
            LOG.warning('VM %s (%s): cannot set the balloon statistics '
                        'period: %s', vm.name, vm.uuid, e)
        self._adopted.add(vm.uuid)
        self.samples.setdefault(vm.uuid, collections.deque(
            maxlen=self.conf.agent.sample_history))
        LOG.info('Adopted VM %s (%s): booked %d MiB, balloon %d MiB%s',
                 vm.name, vm.uuid, vm.booked_kb // 1024,
                 vm.balloon_kb // 1024,
                 ', nova instance' if vm.nova_instance else '')
        if self.swapdisks is not None:
            self.swapdisks.ensure(vm)

    def _hypervisor_state(self, up, error=None):
        if up and self.hypervisor_up is False:
            LOG.info('Hypervisor %s is back; resynchronizing',
                     self.driver.name)
            self._adopted.clear()   # re-apply per-VM settings
        elif not up and self.hypervisor_up is not False:
            LOG.warning('Hypervisor %s unavailable (%s); will retry every '
                        '%.1f s', self.driver.name, error,
                        self.conf.agent.poll_interval)
        self.hypervisor_up = up

    def poll_once(self):
        """Read every VM once and queue a report; returns it (or None)."""
        try:
            self.driver.connect()
            host = self.driver.host_info()
            vms = self.driver.list_vms()
        except virt_driver.HostReadFailed as e:
            # the connection is up: skip this poll, say so once per kind
            kind = str(e).split(':', 1)[0]
            if kind != self._host_read_failed:
                self._host_read_failed = kind
                LOG.warning('Reading the host failed (%s); poll skipped, '
                            'next in %.1f s', e,
                            self.conf.agent.poll_interval)
            return None
        except virt_driver.HypervisorUnavailable as e:
            self._hypervisor_state(False, e)
            return None
        self._hypervisor_state(True)
        self._host_read_failed = None
        now = self.clock()
        samples = []
        with self._lock:
            for vm in vms:
                if vm.uuid not in self._adopted:
                    self._adopt(vm)
                elif self.swapdisks is not None:
                    # a restarted QEMU has a new pid: follow it
                    self.swapdisks.follow(vm)
            self.estimates = self.estimation.estimate(vms, now)
            self._actuate(vms, now)
            for vm in vms:
                est = self.estimates.get(vm.uuid)
                mut = self.balloon_controller.vm_status(vm.uuid)
                sample = objects.VMReport(
                    uuid=vm.uuid, name=vm.name, timestamp=now,
                    state=vm.state, booked_kb=vm.booked_kb,
                    balloon_kb=vm.balloon_kb,
                    memory_stats=dict(vm.memory_stats),
                    cpu_time_ns=vm.cpu_time_ns,
                    nova_instance=vm.nova_instance,
                    wss_kb=est.wss_kb if est else None,
                    wss_estimator=est.source if est else None,
                    wss_max_avg_kb=est.max_avg_kb if est else None,
                    max_avg_window=est.max_avg_window if est else None,
                    max_avg_slice_s=est.max_avg_slice_s if est else None,
                    badis_mode=est.mode if est else None,
                    pinned_kb=est.pinned_kb if est else None,
                    pinned_note=(est.pinned_note or None) if est else None,
                    pinned_at=est.pinned_at if est else None,
                    shrink_floor_kb=est.shrink_floor_kb if est else None,
                    shrink_floor_note=((est.shrink_floor_note or None)
                                       if est else None),
                    shrink_floor_at=est.shrink_floor_at if est else None,
                    mut_role=mut.role if mut else None,
                    mem_init_kb=mut.mem_init_kb if mut else None,
                    lent_kb=mut.lent_kb if mut else 0,
                    borrowed_kb=mut.borrowed_kb if mut else 0)
                self.samples.setdefault(vm.uuid, collections.deque(
                    maxlen=self.conf.agent.sample_history)).append(sample)
                samples.append(sample)
            for gone in set(self.samples) - {vm.uuid for vm in vms}:
                LOG.info('VM %s left this host', gone)
                self.samples.pop(gone)
                self._adopted.discard(gone)
                if self.swapdisks is not None:
                    self.swapdisks.forget(gone)
            self.seq += 1
            report = objects.HostReport(
                host=self.host, boot_id=self.boot_id, seq=self.seq,
                timestamp=now, hypervisor=self.driver.name,
                memory_total_kb=host.memory_total_kb,
                memory_free_kb=host.memory_free_kb,
                cpu_count=host.cpu_count, cpu_util=host.cpu_util,
                reservoir_kb=self._reservoir_kb(), vms=samples,
                remote_exports=self.remote.exports(),
                remote_attachments=self.remote.attachments())
            self.backlog.append(report)
            dropped = len(self.backlog) - self.conf.agent.report_backlog
            for _ in range(max(0, dropped)):
                old = self.backlog.popleft()
                LOG.warning('Report backlog full: dropped report %d of %s',
                            old.seq, old.host)
        return report

    def _reservoir_kb(self):
        return int(self.balloon_controller.reservoir_kb)

    def _actuate(self, vms, now):
        """Move balloons from this poll's estimates (never raises)."""
        if not self.conf.agent.balloon_actuation:
            return
        try:
            result = self.balloon_controller.step(vms, self.estimates, now)
        except virt_driver.HypervisorUnavailable as e:
            LOG.warning('Balloon changes skipped this poll: %s', e)
            return
        plan = getattr(result, 'plan', None)
        unmet = dict(plan.unmet_kb) if plan is not None else None
        # a round that planned nothing knows of no unmet demand
        self.local_unmet_kb = sum(unmet.values()) if unmet else 0
        books = self._books()
        try:
            # every round, so a reclaim times out even in rounds that
            # planned nothing (they ask for nothing new)
            self.lender.step(self.local_unmet_kb)
            if unmet and books is not None and books.exports:
                # a host that lends takes its own memory back before it
                # borrows any (the lender's reclaim above)
                unmet = None
            self.remote_policy.step(unmet, {vm.uuid for vm in vms})
        except Exception:
            # remote memory is an extra: never let it stop the poll
            LOG.exception('Remote memory policy failed this poll')

    # -- reporting --------------------------------------------------------

    def flush(self):
        """Send queued reports oldest first; stop at the first failure."""
        sent = 0
        while self.backlog:
            report = self.backlog[0]
            try:
                self.controller.report(
                    report, timeout=self.conf.agent.report_timeout)
            except messaging.MessagingException as e:
                if self.controller_up is not False:
                    LOG.warning('Controller unreachable (%s): keeping %d '
                                'report(s) until it answers',
                                type(e).__name__, len(self.backlog))
                self.controller_up = False
                return sent
            self.backlog.popleft()
            sent += 1
            if self.controller_up is False:
                LOG.info('Controller is back; sending %d kept report(s)',
                         len(self.backlog) + 1)
            self.controller_up = True
        return sent

    def run(self, stop):
        """Poll and report every poll_interval until ``stop`` is set."""
        interval = self.conf.agent.poll_interval
        LOG.info('Agent for host %s started (driver %s, every %.1f s)',
                 self.host, self.driver.name, interval)
        while not stop.is_set():
            started = time.monotonic()
            try:
                self.poll_once()
                self.flush()
            except Exception:
                # One bad poll must not end the agent: log with traceback.
                LOG.exception('Poll failed; continuing')
            stop.wait(max(0.0, interval - (time.monotonic() - started)))
        self.driver.close()

    # -- RPC endpoint: the LMC half of the global protocol ----------------

    def ping(self, ctxt):
        return {'host': self.host, 'boot_id': self.boot_id}

    @messaging.expected_exceptions(objects.SchemaError)
    def lmc_alloc(self, ctxt, request):
        request = objects.LmcAllocRequest.from_primitive(request)
        reason = remote.alloc_problem(request, self.host,
                                      self._reservoir_kb())
        if reason is None and (self.local_unmet_kb > 0 or
                               self.lender.pending):
            # seed 004: the reservoir serves other hosts only when every
            # local VM is satisfied
            reason = ('host %s needs its memory for its own VMs (%d KiB '
                      'unmet, %d KiB being reclaimed)'
                      % (self.host, self.local_unmet_kb,
                         self.lender.reclaiming_kb()))
        if reason is None:
            try:
                device = self.remote.export(request)
            except remote.Refused as e:
                reason = str(e)
        if reason is not None:
            # Refuse explicitly so the GMC records why and tells the client.
            LOG.info('LMC_alloc %s for VM %s on %s refused: %s',
                     request.allocation_id, request.vm_uuid,
                     request.client_host, reason)
            return objects.AllocResult(granted=False,
                                       reason=reason).to_primitive()
        LOG.info('LMC_alloc %s: %d MiB lent to VM %s on %s',
                 request.allocation_id, request.size_kb // 1024,
                 request.vm_uuid, request.client_host)
        return objects.AllocResult(granted=True,
                                   device=device).to_primitive()

    @messaging.expected_exceptions(objects.SchemaError)
    def lmc_release(self, ctxt, ref):
        ref = objects.AllocationRef.from_primitive(ref)
        if self.remote.unexport(ref.allocation_id):
            LOG.info('LMC_release %s: slab freed (%s)', ref.allocation_id,
                     ref.reason)
        else:
            LOG.info('LMC_release %s: this host serves no such export',
                     ref.allocation_id)

    @messaging.expected_exceptions(objects.SchemaError)
    def lmc_reclaim(self, ctxt, ref):
        ref = objects.AllocationRef.from_primitive(ref)
        if self.remote.detach(ref.allocation_id):
            LOG.info('LMC_reclaim %s: slab detached, its pages come from '
                     'the backup file (%s)', ref.allocation_id, ref.reason)
        else:
            LOG.info('LMC_reclaim %s: this host uses no such export',
                     ref.allocation_id)
