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

Every request names its sender (the ``host`` of the RPC context, controller
RPC 1.3) and is checked before it touches the database
(:mod:`memmut.globals.allocations`): a host acts only on its own reservoir
and on allocations it is a party of; times ahead of the controller's clock
and impossible sizes are refused; each refusal is logged with its reason.
The sender is what the agent says it is: the message bus does not prove it
(doc/source/remote-memory.rst, "Trust").

Allocations move through the state machine of
:mod:`memmut.globals.allocations`; :meth:`GlobalProtocol.reconcile`
brings them in line with what hosts report, at controller start and then
periodically.
"""

import secrets
import time
import uuid as uuidlib

import oslo_messaging as messaging
from oslo_log import log as logging

from memmut.db import api as db_api
from memmut.globals import allocations as al
from memmut import objects

LOG = logging.getLogger(__name__)

# Kept for callers of the old name: the states in which memory is lent.
ACTIVE_STATES = al.LENT_STATES


def choose_server(hosts, client_host, size_kb, now, down_after):
    """Pick the host that lends ``size_kb`` to ``client_host``.

    ``hosts`` are (name, reservoir_kb, last_heard) tuples, ``last_heard``
    on the controller's clock. A lender must be up (heard from within
    ``down_after`` s), not the client itself, and have the whole size in
    its reservoir; the one with the most left wins (ties by name, for
    repeatable choices), which spreads remote memory across hosts.
    """
    best = None
    for name, reservoir_kb, last_heard in hosts:
        if name == client_host or reservoir_kb < size_kb:
            continue
        if not al.is_up(last_heard, now, down_after):
            continue
        key = (-reservoir_kb, name)
        if best is None or key < best[0]:
            best = (key, name)
    return best[1] if best else None


# Allocations whose size the lender has set aside, or is asked to.
OUTSTANDING_STATES = (al.REQUESTED,) + al.LENT_STATES


def lent_by_server(allocations):
    """KiB each server host lends or is being asked for, from its
    allocations in :data:`OUTSTANDING_STATES`."""
    lent = {}
    for alloc in allocations:
        if alloc.state in OUTSTANDING_STATES:
            lent[alloc.server_host] = (lent.get(alloc.server_host, 0) +
                                       alloc.size_kb)
    return lent


def lendable_kb(db):
    """Host name -> KiB it can lend next: its reported reservoir less the
    allocations it serves or is being asked for (a reported reservoir
    still counts what the host lends, seed 004: pool + exports + local
    store); 0 for a host that never reported one."""
    lent = lent_by_server(db.list_remote_allocations(
        state=OUTSTANDING_STATES))
    return {h.name: max(0, (h.reservoir_kb or 0) - lent.get(h.name, 0))
            for h in db.list_hosts()}


def new_credentials(allocation_id):
    """(PSK identity, key): 32 bytes from the OS's CSPRNG, in hex (the
    form nbdkit's and GnuTLS's PSK files use)."""
    return al.psk_identity(allocation_id), secrets.token_hex(32)


class GlobalProtocol:
    """Carries out GMC_* requests against the database and the agents."""

    def __init__(self, db, agent_api, conf, clock=time.time):
        self._db = db
        self._agents = agent_api
        self._conf = conf
        self._clock = clock
        # While it was down, this controller heard from nobody: judging
        # hosts on receive times from before its start would close every
        # allocation after any outage longer than host_down_after.
        self.started_at = clock()
        # host -> when this run received its newest lists of slabs (the
        # stored lists may predate a crash: al.HostView.listed_at)
        self._listed_at = {}

    # -- checks -------------------------------------------------------------

    def _refuse(self, what, sender, reason):
        LOG.warning('%s from %s refused: %s', what, sender or 'an unnamed '
                    'host', reason)
        return reason

    def _sender_problem(self, sender, host, required=False):
        if sender is None:
            return ('the sender did not say which host it is (agents '
                    'before controller RPC 1.3)') if required else None
        if sender != host:
            return 'host %s may not speak for host %s' % (sender, host)
        return None

    def _ram_kb(self, host):
        try:
            return self._db.get_host(host).memory_total_kb
        except db_api.RecordNotFound:
            return None

    @property
    def _skew(self):
        return self._conf.controller.max_clock_skew

    def check_report(self, sender, report):
        """Why a HostReport must not be stored, or None (logged)."""
        problem = (self._sender_problem(sender, report.host) or
                   al.report_problem(report, self._clock(), self._skew))
        if problem:
            return self._refuse('Report %s/%d of %s' % (
                report.boot_id, report.seq, report.host), sender, problem)
        return None

    def note_lists(self, report):
        """A stored report listed the host's slabs (RPC 1.3): from now on
        reconciliation may judge allocations on them."""
        if report.remote_exports is not None or \
                report.remote_attachments is not None:
            self._listed_at[report.host] = self._clock()

    # -- GMC_inform ---------------------------------------------------------

    def inform(self, inform, sender=None):
        problem = (
            self._sender_problem(sender, inform.host) or
            al.timestamp_problem(inform.timestamp, self._clock(),
                                 self._skew) or
            al.size_problem('reservoir_kb', inform.reservoir_kb,
                            self._ram_kb(inform.host)))
        if problem:
            self._refuse('GMC_inform of %s' % inform.host, sender, problem)
            return {'accepted': False, 'reason': problem}
        self._db.store_reservoir(inform)
        LOG.info('GMC_inform: host %s reservoir is now %d MiB',
                 inform.host, inform.reservoir_kb // 1024)
        return {'accepted': True, 'reason': ''}

    def _hosts(self):
        # updated_at: the controller's receive time of the host's newest
        # report or inform (liveness never trusts the agent's clock).
        free = lendable_kb(self._db)
        return [(h.name, free[h.name], h.updated_at)
                for h in self._db.list_hosts()]

    # -- GMC_alloc ----------------------------------------------------------

    def alloc(self, request, sender=None):
        problem = (
            self._sender_problem(sender, request.client_host,
                                 required=True) or
            al.size_problem('size_kb', request.size_kb,
                            self._ram_kb(request.client_host),
                            allow_zero=False))
        if problem:
            self._refuse('GMC_alloc for VM %s' % request.vm_uuid, sender,
                         problem)
            return objects.AllocResult(granted=False, reason=problem)
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
        identity, key = new_credentials(allocation_id)
        self._db.create_remote_allocation(
            allocation_id=allocation_id, client_host=request.client_host,
            server_host=server, vm_uuid=request.vm_uuid,
            size_kb=request.size_kb, state=al.REQUESTED,
            psk_identity=identity, psk_key=key)
        try:
            result = self._agents.lmc_alloc(server, objects.LmcAllocRequest(
                allocation_id=allocation_id,
                client_host=request.client_host, vm_uuid=request.vm_uuid,
                size_kb=request.size_kb, psk_identity=identity,
                psk_key=key))
        except messaging.MessagingException as e:
            result = objects.AllocResult(
                granted=False, reason='server %s did not answer: %s'
                % (server, e))
        device = result.device
        if result.granted and (
                device is None or device.allocation_id != allocation_id or
                device.size_kb < request.size_kb):
            # A lender that answers for another slab, or a smaller one,
            # would make the client write where nothing is kept.
            result = objects.AllocResult(
                granted=False, reason='server %s answered with a device '
                'that is not the one asked for' % server)
            self._agents_release(server, allocation_id, result.reason)
        event = al.E_GRANTED if result.granted else al.E_REFUSED
        try:
            self._db.transition_remote_allocation(
                allocation_id, event, reason=result.reason or None,
                uri=device.uri if result.granted else None,
                expect=(al.REQUESTED,))
        except al.IllegalTransition as e:
            # Reconciliation closed it meanwhile (the lender was judged
            # dead, or the LMC_alloc took longer than the grace period).
            LOG.warning('GMC_alloc %s: %s; refusing it', allocation_id, e)
            if result.granted:
                self._agents_release(server, allocation_id, 'closed')
            return objects.AllocResult(
                granted=False, reason='allocation %s was closed while the '
                'lender answered' % allocation_id)
        if not result.granted:
            LOG.info('GMC_alloc: %s refused allocation %s: %s', server,
                     allocation_id, result.reason)
            return result
        LOG.info('GMC_alloc: %d MiB of %s lent to VM %s on %s (%s)',
                 request.size_kb // 1024, server, request.vm_uuid,
                 request.client_host, allocation_id)
        # The client gets the same credentials the lender now requires.
        return objects.AllocResult(granted=True, device=objects.RemoteDevice(
            allocation_id=allocation_id, server_host=server, uri=device.uri,
            size_kb=request.size_kb, psk_identity=identity, psk_key=key))

    def _agents_release(self, server, allocation_id, reason):
        try:
            self._agents.lmc_release(server, objects.AllocationRef(
                allocation_id=allocation_id, reason=reason))
            return True
        except messaging.MessagingException as e:
            # The lender's report keeps listing it: reconciliation retries.
            LOG.warning('LMC_release of %s to %s failed: %s', allocation_id,
                        server, e)
            return False

    def _move(self, allocation_id, event, reason):
        """Apply one event; the old state, or None if it does not apply."""
        try:
            old, _ = self._db.transition_remote_allocation(
                allocation_id, event, reason=reason)
        except al.IllegalTransition as e:
            LOG.info('Allocation %s: %s (%s); left as it is', allocation_id,
                     e, reason)
            return None
        return old

    def _free(self, alloc, reason):
        """releasing -> released once the lender confirms (LMC_release)."""
        if self._agents_release(alloc.server_host, alloc.allocation_id,
                                reason):
            self._move(alloc.allocation_id, al.E_FREED, reason)

    # -- GMC_release --------------------------------------------------------

    def release(self, ref, sender=None):
        try:
            alloc = self._db.get_remote_allocation(ref.allocation_id)
        except db_api.RecordNotFound:
            # A client retrying a release after the database was restored,
            # or naming a wrong id: nothing is lent, so nothing to do.
            LOG.warning('GMC_release of unknown allocation %s ignored',
                        ref.allocation_id)
            return {'released': False, 'reason': 'unknown allocation'}
        problem = al.party_problem(sender, alloc, ('client',))
        if problem:
            self._refuse('GMC_release of %s' % ref.allocation_id, sender,
                         problem)
            return {'released': False, 'reason': problem}
        if ref.failed:
            return self._failed(alloc, ref.reason or 'the slab of %s failed'
                                % sender)
        if alloc.state in al.CLOSED_STATES or \
                self._move(ref.allocation_id, al.E_RELEASE,
                           ref.reason or 'released by %s' % sender) is None:
            return {'released': False, 'reason': 'allocation is %s'
                    % alloc.state}
        self._free(alloc, ref.reason or 'released by %s' % sender)
        return {'released': True, 'reason': ''}

    def _failed(self, alloc, reason):
        """The client's memstore found the slab dead (RPC 1.5): closed as
        failed. The lender is told to free whatever is left of it (its
        memstore may live and only the link be down); if it cannot be
        told, its report lists an orphan, freed at reconciliation."""
        if alloc.state in al.CLOSED_STATES or self._move(
                alloc.allocation_id, al.E_FAILED, reason) is None:
            return {'released': False, 'reason': 'allocation is %s'
                    % alloc.state}
        LOG.warning('Allocation %s of %s failed at client %s: %s',
                    alloc.allocation_id, alloc.server_host,
                    alloc.client_host, reason)
        self._agents_release(alloc.server_host, alloc.allocation_id, reason)
        return {'released': True, 'reason': ''}

    # -- GMC_reclaim --------------------------------------------------------

    def reclaim(self, request, sender=None):
        """Take back allocations of ``server_host`` until size_kb is freed.

        The allocations are the ones the request names (RPC 1.5: the
        lender chose them), else the largest first. Each one goes
        reclaiming -> (client detached, LMC_reclaim) -> releasing ->
        (lender freed, LMC_release) -> released; the KiB that reached
        released are returned. One whose client does not answer stays
        reclaiming: reconciliation tells the client again, and the lender
        deletes the slab itself after its reclaim timeout.
        """
        problem = (self._sender_problem(sender, request.server_host,
                                        required=True) or
                   al.size_problem('size_kb', request.size_kb,
                                   self._ram_kb(request.server_host)))
        if problem:
            self._refuse('GMC_reclaim of %s' % request.server_host, sender,
                         problem)
            return 0
        freed = 0
        allocs = sorted(self._db.list_remote_allocations(
            host=request.server_host, state=(al.GRANTED, al.ACTIVE)),
            key=lambda a: (-a.size_kb, a.allocation_id))
        named = request.allocation_ids
        if named is not None:
            named = set(named)
            allocs = [a for a in allocs if a.allocation_id in named]
        for alloc in allocs:
            if freed >= request.size_kb and named is None:
                break
            if alloc.server_host != request.server_host:
                continue
            reason = 'reclaimed by %s' % request.server_host
            if self._move(alloc.allocation_id, al.E_RECLAIM, reason) is None:
                continue
            try:
                self._agents.lmc_reclaim(alloc.client_host,
                                         objects.AllocationRef(
                                             allocation_id=alloc.allocation_id,
                                             reason=reason))
            except messaging.MessagingException as e:
                # Stays reclaiming: reconciliation detaches it once the
                # client reports it no longer uses it, or is down.
                LOG.warning('LMC_reclaim of %s from %s failed: %s',
                            alloc.allocation_id, alloc.client_host, e)
                continue
            if self._move(alloc.allocation_id, al.E_DETACHED,
                          reason) is None:
                continue
            if self._agents_release(alloc.server_host, alloc.allocation_id,
                                    reason):
                if self._move(alloc.allocation_id, al.E_FREED,
                              reason) is not None:
                    freed += alloc.size_kb
        LOG.info('GMC_reclaim: %d of %d MiB given back to %s', freed // 1024,
                 request.size_kb // 1024, request.server_host)
        return freed

    # -- reconciliation -----------------------------------------------------

    def reconcile(self):
        """Bring allocations in line with the hosts' reports (never raises
        for one allocation: each failure is logged and retried next time).

        Returns the (allocation_id, event) pairs applied.
        """
        now = self._clock()
        c = self._conf.controller
        hosts = {h.name: al.HostView(max(h.updated_at, self.started_at),
                                     h.remote_exports, h.remote_attachments,
                                     listed_at=self._listed_at.get(h.name))
                 for h in self._db.list_hosts()}
        open_allocs = self._db.list_remote_allocations(state=al.OPEN_STATES)
        events, orphans = al.reconcile(open_allocs, hosts, now,
                                       c.host_down_after, c.allocation_grace)
        by_id = {a.allocation_id: a for a in open_allocs}
        applied = []
        for aid, event, reason in events:
            old = self._move(aid, event, reason)
            if old is None:     # moved meanwhile: judged again next time
                continue
            applied.append((aid, event))
            alloc = by_id[aid]
            LOG.info('Reconciled allocation %s (%s -> %s): %s', aid, old,
                     al.next_state(old, event), reason)
            if event == al.E_LENDER_DEAD or (
                    event == al.E_FAILED and old != al.REQUESTED):
                # The client must stop using it; its backup file has
                # every page (doc/source/remote-memory.rst).
                self._tell_client(alloc, reason)
            elif event in (al.E_RELEASE, al.E_DETACHED):
                if event == al.E_RELEASE:
                    self._tell_client(alloc, reason)
                self._free(alloc, reason)
        moved = {aid for aid, _ in applied}
        for aid, alloc in by_id.items():
            if aid in moved:
                continue
            if alloc.state == al.RELEASING:
                # still held by an answering lender: ask again
                self._free(alloc, 'release retried')
            elif alloc.state == al.RECLAIMING:
                # the client has not let go yet (its LMC_reclaim was lost
                # or timed out): tell it again
                self._tell_client(alloc, 'reclaimed by %s (retried)'
                                  % alloc.server_host)
        for host, role, aid in orphans:
            LOG.warning('Host %s %s allocation %s, which is not open here; '
                        'telling it to let go', host,
                        'lends' if role == 'server' else 'uses', aid)
            ref = objects.AllocationRef(allocation_id=aid,
                                        reason='not open at the controller')
            try:
                if role == 'server':
                    self._agents.lmc_release(host, ref)
                else:
                    self._agents.lmc_reclaim(host, ref)
            except messaging.MessagingException as e:
                LOG.warning('Telling %s to let go of %s failed: %s', host,
                            aid, e)
        return applied

    def _tell_client(self, alloc, reason):
        try:
            self._agents.lmc_reclaim(alloc.client_host, objects.AllocationRef(
                allocation_id=alloc.allocation_id, reason=reason))
        except messaging.MessagingException as e:
            # Its next report still lists it: an orphan, told again.
            LOG.warning('LMC_reclaim of %s from %s failed: %s',
                        alloc.allocation_id, alloc.client_host, e)
