"""The controller's RPC endpoint: persists reports, runs the protocol."""

import time

import oslo_messaging as messaging
from oslo_log import log as logging

from memmut import objects
from memmut.globals import protocol
from memmut.globals import report_writer
from memmut.globals import rpcapi

LOG = logging.getLogger(__name__)


def sender(ctxt):
    """The host an agent says it is (controller RPC 1.3), or None."""
    host = (ctxt or {}).get('host') if isinstance(ctxt, dict) else None
    return host if isinstance(host, str) and host else None


class ControllerManager:
    target = messaging.Target(version=rpcapi.VERSION)

    def __init__(self, db, agent_api, conf, start_round=None,
                 clock=time.time):
        self.db = db
        # ControllerService.start_round (RPC 1.1, from memmut-api).
        self._start_round = start_round
        self.protocol = protocol.GlobalProtocol(db, agent_api, conf,
                                                clock=clock)
        # Group commit of reports; the service starts and stops its
        # thread (not started: each report stored by its own call).
        self.reports = report_writer.ReportWriter(
            db.store_reports, db.store_report,
            conf.controller.report_batch_size,
            report_writer.writers_for(db, conf.controller.report_writers))

    @messaging.expected_exceptions(objects.SchemaError)
    def report(self, ctxt, report):
        report = objects.HostReport.from_primitive(report)
        problem = self.protocol.check_report(sender(ctxt), report)
        if problem:
            # Not an error reply: the agent would keep the report and
            # resend it forever. 'stored': False makes it drop it (an
            # agent before 1.3 takes it for a duplicate, also dropped).
            return {'stored': False, 'refused': problem}
        stored = self.reports.store(report)
        if stored:
            self.protocol.note_lists(report)
            LOG.debug('Report %s/%d from %s: %d VMs', report.boot_id,
                      report.seq, report.host, len(report.vms))
        else:
            LOG.debug('Report %s/%d from %s already stored', report.boot_id,
                      report.seq, report.host)
        return {'stored': stored}

    @messaging.expected_exceptions(objects.SchemaError)
    def gmc_inform(self, ctxt, inform):
        return self.protocol.inform(
            objects.ReservoirInform.from_primitive(inform), sender(ctxt))

    @messaging.expected_exceptions(objects.SchemaError)
    def gmc_alloc(self, ctxt, request):
        result = self.protocol.alloc(
            objects.RemoteAllocRequest.from_primitive(request), sender(ctxt))
        return result.to_primitive()

    @messaging.expected_exceptions(objects.SchemaError)
    def gmc_release(self, ctxt, ref):
        return self.protocol.release(
            objects.AllocationRef.from_primitive(ref), sender(ctxt))

    @messaging.expected_exceptions(objects.SchemaError)
    def gmc_reclaim(self, ctxt, request):
        freed = self.protocol.reclaim(
            objects.ReclaimRequest.from_primitive(request), sender(ctxt))
        return {'reclaimed_kb': freed}

    def start_round(self, ctxt, dry_run=None):
        if self._start_round is None:
            return {'round_id': None, 'busy': False,
                    'reason': 'this controller does not run rounds'}
        return self._start_round(dry_run)
