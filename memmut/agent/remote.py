"""The agent's side of remote memory: the seam where memstore's remote
tier plugs in (issue 18 item 1; design in doc/source/remote-memory.rst).

The agent's RPC handlers (LMC_alloc, LMC_release, LMC_reclaim in
:mod:`memmut.agent.manager`) check what the controller asks with
:func:`alloc_problem` and then call one :class:`RemoteMemory`. Today the
only implementation is :class:`NoRemoteMemory`, which refuses with a
reason: memstore has no remote tier yet. The memstore-backed one will
implement the same five methods over memstore's control socket.
"""

import abc

from memmut.globals import allocations as al


class Refused(Exception):
    """The backend cannot do what was asked; the message says why."""


class RemoteMemory(abc.ABC):
    """What an agent needs from the data plane for remote memory.

    Lender side: :meth:`export` a slab from the reservoir to one client,
    protected by the allocation's PSK, and :meth:`unexport` it. Client
    side: :meth:`attach` a granted slab as a tier of a VM's swap export,
    :meth:`detach` it (its pages are then served from the local backup
    file). :meth:`exports` and :meth:`attachments` list what is in place,
    for the agent's reports, from which the controller reconciles.
    """

    name = None

    @abc.abstractmethod
    def export(self, request):
        """Create the slab of an LmcAllocRequest; its RemoteDevice (uri,
        size) or :class:`Refused`. Must not lend more than the reservoir
        holds, and must count what it lends in the host's books."""

    @abc.abstractmethod
    def unexport(self, allocation_id):
        """Free a slab; True if there was one. Idempotent."""

    @abc.abstractmethod
    def attach(self, vm_uuid, device):
        """Add a granted slab (RemoteDevice with credentials) under a
        VM's swap export, or :class:`Refused`."""

    @abc.abstractmethod
    def detach(self, allocation_id):
        """Stop using a slab (reclaim, failure, release); True if it was
        in use. Idempotent; never loses a page (the backup file)."""

    @abc.abstractmethod
    def exports(self):
        """Allocation ids of the slabs this host lends; None if unknown."""

    @abc.abstractmethod
    def attachments(self):
        """Allocation ids of the slabs this host's VMs use; None if
        unknown."""


class NoRemoteMemory(RemoteMemory):
    """No remote tier (memstore does not have one yet): refuse to lend or
    borrow, and say truthfully that nothing is lent or borrowed, so the
    controller closes any allocation that claims otherwise."""

    name = 'none'

    def __init__(self, host):
        self.host = host

    def _reason(self):
        return ('host %s cannot export remote memory: memstore has no '
                'remote tier yet' % self.host)

    def export(self, request):
        raise Refused(self._reason())

    def unexport(self, allocation_id):
        return False

    def attach(self, vm_uuid, device):
        raise Refused('host %s cannot use remote memory: memstore has no '
                      'remote tier yet' % self.host)

    def detach(self, allocation_id):
        return False

    def exports(self):
        return []

    def attachments(self):
        return []


def alloc_problem(request, host, reservoir_kb):
    """Why this lender must refuse an LMC_alloc before asking memstore,
    or None. Checks only what the request says, never trusts it: the
    controller may be older, wrong, or not the controller."""
    if request.client_host == host:
        return 'host %s cannot lend memory to itself' % host
    problem = al.size_problem('size_kb', request.size_kb, allow_zero=False)
    if problem:
        return problem
    if request.size_kb > reservoir_kb:
        return ('%d KiB asked, the reservoir holds %d KiB'
                % (request.size_kb, reservoir_kb))
    if request.psk_identity is None or request.psk_key is None:
        return ('no credentials for the slab (a controller before agent '
                'RPC 1.1)')
    return al.credentials_problem(request.psk_identity, request.psk_key,
                                  request.allocation_id)
