"""The agent's side of remote memory: the seam where memstore's remote
tier plugs in (issue 18 item 1; design in doc/source/remote-memory.rst).

The agent's RPC handlers (LMC_alloc, LMC_release, LMC_reclaim in
:mod:`memmut.agent.manager`) check what the controller asks with
:func:`alloc_problem` and then call one :class:`RemoteMemory`:
:class:`MemstoreRemoteMemory` (slabs over memstore's control socket) when
``[memstore] enabled``, else :class:`NoRemoteMemory`, which refuses with a
reason (:func:`make` chooses). :class:`RemoteClientPolicy` is the client
side of the local controller: it asks GMC_alloc for a VM only when local
mutualization leaves part of its demand unmet, up to ``[mutualization]
remote_cap_kb``, and releases when the demand falls or a slab fails.
"""

import abc
import os
import threading

from oslo_log import log as logging
import oslo_messaging as messaging

from memmut.agent.mutualization import books as bookmod
from memmut.globals import allocations as al
from memmut.memstore import client as msclient
from memmut import objects

LOG = logging.getLogger(__name__)


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

    def failed(self):
        """Allocation ids of attached slabs the data plane found dead
        (lender or link gone; their pages now come from the backup file).
        A backend that cannot tell says none."""
        return []


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


class MemstoreRemoteMemory(RemoteMemory):
    """Remote memory through memmut-memstore's slabs.

    Lender: a slab of ``size_kb`` is booked in the host's books (pool →
    exports; refused with the books' reason when the pool lacks it) and
    then created in memstore, which reserves it against its host quota and
    serves it on ``[memstore] remote_listen`` with the allocation's PSK.
    Client: a granted slab is attached as a tier of the VM's export
    (``<vm uuid>``); memstore detaches it by itself at its first failure.

    ``books`` is a callable returning the host's
    :class:`~memmut.agent.mutualization.books.Books` (None while they are
    not open: memstore's host quota is then the only bound).
    """

    name = 'memstore'

    def __init__(self, host, client, books=None, timeout=0.2,
                 dirty_window=None):
        self.host = host
        self.client = client
        self.books = books or (lambda: None)
        self.timeout = timeout
        # bytes; None: memstore's own --remote-dirty-window
        self.dirty_window = dirty_window
        # LMC handlers and the poll run in different threads: a booking
        # and its slab are made, freed and reconciled under this lock
        self._lock = threading.Lock()

    def export(self, request):
        with self._lock:
            return self._export(request)

    def _export(self, request):
        books = self.books()
        if books is not None:
            try:
                books.export(request.allocation_id, request.size_kb)
            except bookmod.BooksError as e:
                raise Refused('host %s cannot lend %d KiB: %s'
                              % (self.host, request.size_kb, e))
        try:
            slab = self.client.slab_create(
                request.allocation_id, request.size_kb * 1024,
                request.psk_identity, request.psk_key)
        except msclient.MemstoreError as e:
            if books is not None:
                books.release_export(request.allocation_id)
            raise Refused('host %s: memmut-memstore: %s' % (self.host, e))
        if not slab.get('uri'):
            self._drop(request.allocation_id)
            raise Refused('host %s: memmut-memstore serves no slabs'
                          % self.host)
        return objects.RemoteDevice(
            allocation_id=request.allocation_id, server_host=self.host,
            uri=slab['uri'], size_kb=request.size_kb)

    def _drop(self, allocation_id):
        deleted = False
        try:
            deleted = self.client.slab_delete(allocation_id)
        except msclient.MemstoreError as e:
            LOG.warning('Slab %s: cannot delete it: %s', allocation_id, e)
        books = self.books()
        if books is not None and allocation_id in books.exports:
            books.release_export(allocation_id)
            deleted = True
        return deleted

    def unexport(self, allocation_id):
        with self._lock:
            return self._drop(allocation_id)

    def attach(self, vm_uuid, device):
        if not device.psk_identity or not device.psk_key:
            raise Refused('allocation %s came without credentials'
                          % device.allocation_id)
        try:
            self.client.slab_attach(
                vm_uuid, device.allocation_id, device.uri,
                device.size_kb * 1024, device.psk_identity, device.psk_key,
                timeout_ms=max(1, int(self.timeout * 1000)),
                dirty_window=self.dirty_window)
        except msclient.MemstoreError as e:
            raise Refused('VM %s cannot use slab %s at %s: %s'
                          % (vm_uuid, device.allocation_id, device.uri, e))

    def detach(self, allocation_id):
        try:
            return self.client.slab_detach(allocation_id)
        except msclient.MemstoreError as e:
            LOG.warning('Slab %s: cannot detach it: %s', allocation_id, e)
            return False

    def _slabs(self):
        try:
            return self.client.slabs()
        except msclient.MemstoreError as e:
            LOG.warning('Cannot list memmut-memstore\'s slabs: %s', e)
            return None

    def exports(self):
        with self._lock:
            slabs = self._slabs()
            if slabs is None:
                return None
            lent = sorted(s['id'] for s in slabs['lent'])
            books = self.books()
            for ident in sorted(books.exports if books is not None else ()):
                if ident not in lent:
                    # memstore restarted (a slab's contents were RAM, it
                    # keeps none): the memory is this host's again
                    LOG.warning('Slab %s is gone from memmut-memstore: its '
                                '%d KiB go back to the pool', ident,
                                books.exports[ident])
                    books.release_export(ident)
            return lent

    def attachments(self):
        slabs = self._slabs()
        return None if slabs is None else sorted(
            s['id'] for s in slabs['attached'] if s['state'] == 'attached')

    def failed(self):
        slabs = self._slabs()
        return [] if slabs is None else sorted(
            s['id'] for s in slabs['attached'] if s['state'] == 'failed')


def make(conf, host, books=None, client=None):
    """The :class:`RemoteMemory` this agent's configuration asks for."""
    if not conf.memstore.enabled:
        return NoRemoteMemory(host)
    client = client or msclient.ControlClient(
        os.path.join(conf.memstore.socket_dir, 'control.sock'))
    return MemstoreRemoteMemory(
        host, client, books=books, timeout=conf.memstore.remote_timeout,
        dirty_window=conf.memstore.remote_dirty_window * 1024 * 1024)


MIB_KB = 1024


class RemoteClientPolicy:
    """The client side of global mutualization in the local controller.

    Every round, with the unmet demand Algorithm 1 left per VM (what the
    host's pool could not give: local needs come first, so only this is
    asked of other hosts):

    * a slab whose allocation this agent holds but memstore no longer lists
      as attached (it failed, or a reclaim detached it) is released
      (``GMC_release``; marked ``failed`` when memstore found it dead, so
      the controller closes it as failed), and forgotten;
    * a VM with no unmet demand gives back all its allocations; one whose
      unmet demand fell below what it holds gives back its newest ones
      while they are not needed;
    * a VM whose unmet demand exceeds what it holds asks ``GMC_alloc`` for
      the difference, rounded up to MiB and capped at ``remote_cap_kb``
      per VM; a grant is attached to the VM's export, and a grant that
      cannot be attached is released at once.
    """

    def __init__(self, host, remote, controller, cap_kb, timeout=None):
        self.host = host
        self.remote = remote
        self.controller = controller
        self.cap_kb = cap_kb
        self.timeout = timeout
        self.held = {}  # vm uuid -> [(allocation id, KiB)], oldest first

    def held_kb(self, vm_uuid):
        return sum(kb for _, kb in self.held.get(vm_uuid, ()))

    def _release(self, vm_uuid, allocation_id, reason, failed=False):
        self.remote.detach(allocation_id)
        try:
            reply = self.controller.gmc_release(
                objects.AllocationRef(allocation_id=allocation_id,
                                      reason=reason, failed=failed),
                timeout=self.timeout)
        except messaging.MessagingException as e:
            LOG.warning('GMC_release %s failed (%s); the controller closes '
                        'it when reports stop listing it', allocation_id, e)
            return
        LOG.info('GMC_release %s (VM %s, %s): %s', allocation_id, vm_uuid,
                 reason, reply)

    def _ask(self, vm_uuid, size_kb):
        try:
            result = self.controller.gmc_alloc(
                objects.RemoteAllocRequest(client_host=self.host,
                                           vm_uuid=vm_uuid, size_kb=size_kb),
                timeout=self.timeout)
        except messaging.MessagingException as e:
            LOG.warning('GMC_alloc of %d KiB for VM %s failed: %s',
                        size_kb, vm_uuid, e)
            return None
        if not result.granted or result.device is None:
            LOG.info('GMC_alloc of %d KiB for VM %s refused: %s', size_kb,
                     vm_uuid, result.reason)
            return None
        device = result.device
        try:
            self.remote.attach(vm_uuid, device)
        except Refused as e:
            LOG.warning('Allocation %s granted but not usable: %s',
                        device.allocation_id, e)
            self._release(vm_uuid, device.allocation_id,
                          'client could not attach it: %s' % e)
            return None
        LOG.info('VM %s uses %d KiB of remote memory on %s (allocation '
                 '%s)', vm_uuid, device.size_kb, device.server_host,
                 device.allocation_id)
        self.held.setdefault(vm_uuid, []).append(
            (device.allocation_id, device.size_kb))
        return device

    def step(self, unmet_kb, vms):
        """One round: ``unmet_kb`` {vm uuid: KiB Algorithm 1 could not
        give}, or None when this round planned nothing (allocations are
        then only checked, not resized); ``vms`` the uuids on this host
        now."""
        if self.cap_kb <= 0 and not self.held:
            return
        attached = self.remote.attachments()
        failed = set(self.remote.failed()) if self.held else set()
        for vm_uuid in list(self.held):
            keep = []
            for aid, kb in self.held[vm_uuid]:
                if vm_uuid not in vms:
                    self._release(vm_uuid, aid, 'the VM left this host')
                elif aid in failed:
                    # closed as failed at the controller (RPC 1.5)
                    self._release(vm_uuid, aid, 'slab failed: lender or '
                                  'link down', failed=True)
                elif attached is not None and aid not in attached:
                    self._release(vm_uuid, aid, 'slab detached (reclaimed)')
                else:
                    keep.append((aid, kb))
            self.held[vm_uuid] = keep
            if not keep:
                del self.held[vm_uuid]
        if unmet_kb is None:
            return
        for vm_uuid in list(self.held):
            need = unmet_kb.get(vm_uuid, 0)
            allocs = self.held[vm_uuid]
            while allocs and self.held_kb(vm_uuid) - allocs[-1][1] >= need:
                aid, _ = allocs.pop()
                self._release(vm_uuid, aid, 'demand fell')
            if not allocs:
                del self.held[vm_uuid]
        if self.cap_kb <= 0:
            return
        for vm_uuid, need in sorted(unmet_kb.items()):
            want = min(need, self.cap_kb) - self.held_kb(vm_uuid)
            if vm_uuid not in vms or want <= 0:
                continue
            want = -(-want // MIB_KB) * MIB_KB
            want = min(want, self.cap_kb - self.held_kb(vm_uuid))
            if want > 0:
                self._ask(vm_uuid, want)
