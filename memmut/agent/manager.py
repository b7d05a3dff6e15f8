"""The compute-node agent (LMC): poll the hypervisor, keep recent samples,
report to the controller, and answer the controller's protocol calls.

The agent never stops because a peer is away: when the hypervisor is
unreachable it logs once and retries every poll; when the controller is
unreachable it keeps its reports (bounded by ``[agent] report_backlog``) and
sends them, oldest first, once the controller answers again. Each report
carries (boot_id, seq) so a report resent after a lost reply is stored once.
"""

import collections
import threading
import time
import uuid as uuidlib

import oslo_messaging as messaging
from oslo_log import log as logging

from memmut import objects
from memmut.agent import rpcapi
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
        self.samples = {}            # uuid -> deque of objects.VMSample
        self.backlog = collections.deque()
        self.reservoir_kb = 0
        self.hypervisor_up = None    # None until the first poll
        self.controller_up = None
        self._adopted = set()
        self._lock = threading.Lock()

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
        except virt_driver.HypervisorUnavailable as e:
            self._hypervisor_state(False, e)
            return None
        self._hypervisor_state(True)
        now = self.clock()
        samples = []
        with self._lock:
            for vm in vms:
                if vm.uuid not in self._adopted:
                    self._adopt(vm)
                sample = objects.VMSample(
                    uuid=vm.uuid, name=vm.name, timestamp=now,
                    state=vm.state, booked_kb=vm.booked_kb,
                    balloon_kb=vm.balloon_kb,
                    memory_stats=dict(vm.memory_stats),
                    cpu_time_ns=vm.cpu_time_ns,
                    nova_instance=vm.nova_instance)
                self.samples.setdefault(vm.uuid, collections.deque(
                    maxlen=self.conf.agent.sample_history)).append(sample)
                samples.append(sample)
            for gone in set(self.samples) - {vm.uuid for vm in vms}:
                LOG.info('VM %s left this host', gone)
                self.samples.pop(gone)
                self._adopted.discard(gone)
            self.seq += 1
            report = objects.HostReport(
                host=self.host, boot_id=self.boot_id, seq=self.seq,
                timestamp=now, hypervisor=self.driver.name,
                memory_total_kb=host.memory_total_kb,
                memory_free_kb=host.memory_free_kb,
                cpu_count=host.cpu_count, cpu_util=host.cpu_util,
                reservoir_kb=self.reservoir_kb, vms=samples)
            self.backlog.append(report)
            dropped = len(self.backlog) - self.conf.agent.report_backlog
            for _ in range(max(0, dropped)):
                old = self.backlog.popleft()
                LOG.warning('Report backlog full: dropped report %d of %s',
                            old.seq, old.host)
        return report

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
        # Exporting memory needs this host's memstore remote exports, which
        # this agent does not run yet: refuse explicitly so the GMC tries
        # elsewhere or tells the client.
        reason = ('host %s cannot export remote memory: no memstore remote '
                  'export is configured' % self.host)
        LOG.info('LMC_alloc %s for VM %s on %s refused: %s',
                 request.allocation_id, request.vm_uuid,
                 request.client_host, reason)
        return objects.AllocResult(granted=False, reason=reason).to_primitive()

    @messaging.expected_exceptions(objects.SchemaError)
    def lmc_release(self, ctxt, ref):
        ref = objects.AllocationRef.from_primitive(ref)
        LOG.info('LMC_release %s: this host serves no such export',
                 ref.allocation_id)

    @messaging.expected_exceptions(objects.SchemaError)
    def lmc_reclaim(self, ctxt, ref):
        ref = objects.AllocationRef.from_primitive(ref)
        LOG.info('LMC_reclaim %s: this host uses no such export',
                 ref.allocation_id)
