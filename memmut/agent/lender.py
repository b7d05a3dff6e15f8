"""The lender's side of GMC_reclaim: take lent memory back when this host's
own VMs need it (seed 004 §4.3.1: local needs come first).

Every round, with the demand Algorithm 1 could not cover from the pool
(its ``unmet_kb``), :class:`LenderReclaim`:

1. forgets the reclaims that ended (the controller's LMC_release freed the
   slab, so the books moved its KiB back to the pool, where the next round
   of Algorithm 1 grants them to the VMs that wait);
2. deletes, on its own, every slab whose reclaim is older than
   ``[mutualization] reclaim_timeout``: a client or a controller that does
   not answer cannot keep the lender's memory. The client loses nothing:
   every page it placed in the slab is also in its backup file, and its
   memstore serves the slab's pages from that file at its first failed
   access; the controller closes the allocation when the lender's report
   no longer lists the slab;
3. if unmet demand remains beyond what is being reclaimed, chooses the
   exports to take back (:func:`choose_reclaims`) and asks GMC_reclaim
   for exactly those. The controller tells each client to detach
   (LMC_reclaim) and only then this host to free the slab (LMC_release).

While its own VMs want more than the pool holds, the lender also refuses
new LMC_allocs (:meth:`memmut.agent.manager.AgentManager.lmc_alloc`).
"""

import time

from oslo_log import log as logging
import oslo_messaging as messaging

from memmut import objects

LOG = logging.getLogger(__name__)


def choose_reclaims(exports, need_kb):
    """Allocation ids to take back for ``need_kb`` of local demand.

    ``exports`` {allocation id: KiB} are the slabs that may be taken back.
    One slab that covers the need alone is preferred, the smallest such
    (one client disturbed, the least memory moved); otherwise the largest
    ones first until the need is covered (the fewest clients disturbed),
    or all of them. Ties go by id, for repeatable choices.
    """
    if need_kb <= 0 or not exports:
        return []
    covering = sorted((kb, aid) for aid, kb in exports.items()
                      if kb >= need_kb)
    if covering:
        return [covering[0][1]]
    chosen, got = [], 0
    for kb, aid in sorted((-kb, aid) for aid, kb in exports.items()):
        if got >= need_kb:
            break
        chosen.append(aid)
        got += -kb
    return chosen


class LenderReclaim:
    """Takes this host's lent slabs back for its own VMs.

    ``books`` is a callable returning the host's
    :class:`~memmut.agent.mutualization.books.Books` (None until they are
    open); ``remote`` the :class:`~memmut.agent.remote.RemoteMemory` that
    deletes a slab (``unexport``); ``controller`` the controller RPC API.
    """

    def __init__(self, host, remote, controller, books, timeout_s,
                 rpc_timeout=None, clock=time.monotonic):
        self.host = host
        self.remote = remote
        self.controller = controller
        self.books = books
        self.timeout_s = timeout_s
        self.rpc_timeout = rpc_timeout
        self.clock = clock
        self.pending = {}       # allocation id -> (KiB, deadline)

    def reclaiming_kb(self):
        return sum(kb for kb, _ in self.pending.values())

    def step(self, unmet_kb):
        """One round; ``unmet_kb`` is the KiB of local demand the pool
        could not give (0 or None: nothing is needed). Returns the
        allocation ids asked back this round."""
        books = self.books()
        if books is None:
            return []
        now = self.clock()
        for aid in list(self.pending):
            if aid not in books.exports:
                LOG.info('Reclaim of %s done: its memory is this host\'s '
                         'again', aid)
                del self.pending[aid]
        for aid, (kb, deadline) in sorted(self.pending.items()):
            if now >= deadline:
                LOG.warning('Reclaim of %s: nobody let go within %.0f s; '
                            'deleting the slab (the client reads its '
                            'pages from its backup file)', aid,
                            self.timeout_s)
                self.remote.unexport(aid)
                del self.pending[aid]
        need = (unmet_kb or 0) - self.reclaiming_kb()
        free = {aid: kb for aid, kb in books.exports.items()
                if aid not in self.pending}
        chosen = choose_reclaims(free, need)
        if not chosen:
            return []
        size = sum(free[aid] for aid in chosen)
        for aid in chosen:
            self.pending[aid] = (free[aid], now + self.timeout_s)
        LOG.info('Local VMs lack %d KiB: reclaiming %s (%d KiB) from their '
                 'clients', need, ', '.join(chosen), size)
        try:
            freed = self.controller.gmc_reclaim(
                objects.ReclaimRequest(server_host=self.host, size_kb=size,
                                       allocation_ids=chosen),
                timeout=self.rpc_timeout)
        except messaging.MessagingException as e:
            LOG.warning('GMC_reclaim of %s failed (%s): the slabs are '
                        'deleted after %.0f s unless freed before',
                        ', '.join(chosen), e, self.timeout_s)
            return chosen
        LOG.info('GMC_reclaim: %d of %d KiB given back at once', freed,
                 size)
        for aid in chosen:
            if aid not in books.exports:
                self.pending.pop(aid, None)
        return chosen
