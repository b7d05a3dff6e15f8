"""The GMC half of the global mutualization protocol (seed 004 §4.3.1).

Message flow (LMC = agent, GMC = controller)::

    LMC --GMC_inform(reservoir)--> GMC          on every reservoir change
    client LMC --GMC_alloc--> GMC --LMC_alloc--> server LMC
                                 <--device----
               <--device-------                 client attaches remote swap
    client LMC --GMC_release--> GMC --LMC_release--> server LMC
    server LMC --GMC_reclaim--> GMC --LMC_reclaim--> client LMC (detaches)
               <--freed KiB----                 memory is the server's again

Server choice is a pure function (:func:`choose_server`) so it can be tested
and replaced; this module only adds the bookkeeping and the calls.
"""

import time
import uuid as uuidlib

import oslo_messaging as messaging
from oslo_log import log as logging

from memmut.db import api as db_api
from memmut import objects

LOG = logging.getLogger(__name__)

ACTIVE_STATES = ('requested', 'active')


def choose_server(hosts, client_host, size_kb, now, down_after):
    """Pick the host that lends ``size_kb`` to ``client_host``.

    ``hosts`` are (name, reservoir_kb, last_report_at) tuples. A lender must
    be up (reported within ``down_after`` s), not the client itself, and have
    the whole size in its reservoir; the one with the most left wins (ties by
    name, for repeatable choices), which spreads remote memory across hosts.
    """
    best = None
    for name, reservoir_kb, last_report_at in hosts:
        if name == client_host or reservoir_kb < size_kb:
            continue
        if last_report_at is None or now - last_report_at > down_after:
            continue
        key = (-reservoir_kb, name)
        if best is None or key < best[0]:
            best = (key, name)
    return best[1] if best else None


class GlobalProtocol:
    """Carries out GMC_* requests against the database and the agents."""

    def __init__(self, db, agent_api, conf, clock=time.time):
        self._db = db
        self._agents = agent_api
        self._conf = conf
        self._clock = clock

    def inform(self, inform):
        self._db.store_reservoir(inform)
        LOG.info('GMC_inform: host %s reservoir is now %d MiB',
                 inform.host, inform.reservoir_kb // 1024)

    def _hosts(self):
        return [(h.name, h.reservoir_kb or 0, h.last_report_at)
                for h in self._db.list_hosts()]

    def alloc(self, request):
        if request.size_kb <= 0:
            return objects.AllocResult(granted=False,
                                       reason='size must be positive')
        server = choose_server(self._hosts(), request.client_host,
                               request.size_kb, self._clock(),
                               self._conf.controller.host_down_after)
        if server is None:
            reason = ('no live host other than %s has %d MiB free in its '
                      'reservoir' % (request.client_host,
                                     request.size_kb // 1024))
            LOG.info('GMC_alloc for VM %s refused: %s', request.vm_uuid,
                     reason)
            return objects.AllocResult(granted=False, reason=reason)
        allocation_id = str(uuidlib.uuid4())
        self._db.create_remote_allocation(
            allocation_id=allocation_id, client_host=request.client_host,
            server_host=server, vm_uuid=request.vm_uuid,
            size_kb=request.size_kb, state='requested')
        try:
            result = self._agents.lmc_alloc(server, objects.LmcAllocRequest(
                allocation_id=allocation_id,
                client_host=request.client_host, vm_uuid=request.vm_uuid,
                size_kb=request.size_kb))
        except messaging.MessagingException as e:
            result = objects.AllocResult(
                granted=False, reason='server %s did not answer: %s'
                % (server, e))
        if result.granted:
            self._db.update_remote_allocation(allocation_id, 'active',
                                              uri=result.device.uri)
            LOG.info('GMC_alloc: %d MiB of %s lent to VM %s on %s (%s)',
                     request.size_kb // 1024, server, request.vm_uuid,
                     request.client_host, allocation_id)
        else:
            self._db.update_remote_allocation(allocation_id, 'refused',
                                              reason=result.reason)
            LOG.info('GMC_alloc: %s refused allocation %s: %s', server,
                     allocation_id, result.reason)
        return result

    def release(self, ref):
        try:
            alloc = self._db.get_remote_allocation(ref.allocation_id)
        except db_api.NotFound:
            # A client retrying a release after the database was restored,
            # or naming a wrong id: nothing is lent, so nothing to do.
            LOG.warning('GMC_release of unknown allocation %s ignored',
                        ref.allocation_id)
            return
        if alloc.state not in ACTIVE_STATES:
            return
        self._db.update_remote_allocation(ref.allocation_id, 'released',
                                          reason=ref.reason)
        try:
            self._agents.lmc_release(alloc.server_host, ref)
        except messaging.MessagingException as e:
            # The server's agent frees the export when it next resyncs.
            LOG.warning('LMC_release of %s to %s failed: %s',
                        ref.allocation_id, alloc.server_host, e)

    def reclaim(self, request):
        """Take back allocations of ``server_host`` until size_kb is freed."""
        freed = 0
        allocs = sorted(self._db.list_remote_allocations(
            host=request.server_host, state='active'),
            key=lambda a: -a.size_kb)
        for alloc in allocs:
            if freed >= request.size_kb:
                break
            if alloc.server_host != request.server_host:
                continue
            ref = objects.AllocationRef(allocation_id=alloc.allocation_id,
                                        reason='reclaimed by %s'
                                        % request.server_host)
            try:
                self._agents.lmc_reclaim(alloc.client_host, ref)
            except messaging.MessagingException as e:
                LOG.warning('LMC_reclaim of %s from %s failed: %s',
                            alloc.allocation_id, alloc.client_host, e)
                continue
            self._db.update_remote_allocation(alloc.allocation_id,
                                              'reclaimed', reason=ref.reason)
            freed += alloc.size_kb
        LOG.info('GMC_reclaim: %d of %d MiB given back to %s', freed // 1024,
                 request.size_kb // 1024, request.server_host)
        return freed
