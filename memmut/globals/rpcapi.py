"""Client side of the controller RPC API (agent -> controller).

API version history:

* 1.0 - Initial version: ``report``, and the global protocol of seed 004
  §4.3.1 as seen from an LMC: ``gmc_inform``, ``gmc_alloc``,
  ``gmc_release``, ``gmc_reclaim``.
* 1.1 - ``report``: each VM carries the agent's WSS^max_avg with its inputs
  (``wss_max_avg_kb``, ``max_avg_window``, ``max_avg_slice_s``) and its
  Badis mode. A 1.0 controller ignores the new fields.
* 1.2 - ``start_round`` (memmut-api -> controller): start a consolidation
  round and answer with its id once it is recorded.
* 1.3 - Remote allocations kept true (issue 18): every call carries the
  sender's host in the RPC context (``{'host': ...}``); ``gmc_alloc``,
  ``gmc_release`` and ``gmc_reclaim`` are refused without it, and from a
  host that is not the client (alloc, release) or the lender (reclaim).
  ``report`` may answer ``{'stored': False, 'refused': reason}`` (a 1.2
  agent drops it as a duplicate); reports list ``remote_exports`` and
  ``remote_attachments``; the ``gmc_alloc`` device carries the slab's
  TLS-PSK credentials (``psk_identity``, ``psk_key``); ``gmc_inform`` and
  ``gmc_release`` answer with what they did. Upgrade controllers first.
* 1.4 - ``report``: each VM carries Badis's pinned-page correction
  (``pinned_kb``), why and when it last changed (``pinned_note``,
  ``pinned_at``). Older controllers ignore the new fields; upgrade
  controllers first.
* 1.5 - Lender-initiated reclaim and slab failures (issue 18):
  ``gmc_reclaim`` may name the allocations the lender takes back
  (``allocation_ids``; it deletes exactly those after ``[mutualization]
  reclaim_timeout``); ``gmc_release`` may say the slab ``failed`` (the
  client's memstore found the lender or the link dead), which closes the
  allocation as failed instead of released. Older controllers ignore both
  fields (the GMC then chooses largest first, and releases); upgrade
  controllers first.
* 1.6 - ``report``: each VM carries Badis's shrink floor
  (``shrink_floor_kb``: what its demand may not fall below since a shrink
  swapped, 0 for none), why and when it last changed
  (``shrink_floor_note``, ``shrink_floor_at``). Older controllers ignore
  the new fields; upgrade controllers first.
"""

from oslo_log import log as logging

from memmut import objects
from memmut import rpc

LOG = logging.getLogger(__name__)

VERSION = '1.6'


class ControllerAPI:
    def __init__(self, transport, conf):
        self._client = rpc.get_client(transport, conf.controller_topic,
                                      VERSION)
        # Who is asking (1.3): the controller checks it against the
        # message (a host speaks for itself and its allocations only).
        self._ctxt = {'host': conf.host}

    def _cctxt(self, timeout=None):
        return self._client.prepare(version=VERSION, timeout=timeout)

    def report(self, report, timeout=None):
        """Send one HostReport; True if stored, False if a duplicate or
        refused (the controller logs why; a refused report is not resent:
        it would be refused again)."""
        reply = self._cctxt(timeout).call(self._ctxt, 'report',
                                          report=report.to_primitive())
        if reply.get('refused'):
            # Most often this host's clock runs ahead of the controller's.
            LOG.warning('Report %s/%d refused by the controller: %s',
                        report.boot_id, report.seq, reply['refused'])
        return bool(reply['stored'])

    def gmc_inform(self, inform, timeout=None):
        """GMC_inform: the reservoir of this LMC changed size.

        Returns ``{'accepted': bool, 'reason': text}`` (None from a
        controller before 1.3)."""
        return self._cctxt(timeout).call(self._ctxt, 'gmc_inform',
                                         inform=inform.to_primitive())

    def gmc_alloc(self, request, timeout=None):
        """GMC_alloc: ask for remote memory; returns an AllocResult."""
        reply = self._cctxt(timeout).call(self._ctxt, 'gmc_alloc',
                                          request=request.to_primitive())
        return objects.AllocResult.from_primitive(reply)

    def gmc_release(self, ref, timeout=None):
        """GMC_release: this client no longer needs an allocation.

        Returns ``{'released': bool, 'reason': text}``."""
        return self._cctxt(timeout).call(self._ctxt, 'gmc_release',
                                         ref=ref.to_primitive())

    def gmc_reclaim(self, request, timeout=None):
        """GMC_reclaim: this server wants memory back; returns KiB freed."""
        reply = self._cctxt(timeout).call(self._ctxt, 'gmc_reclaim',
                                          request=request.to_primitive())
        return int(reply['reclaimed_kb'])

    def start_round(self, dry_run=None, timeout=None):
        """Start a consolidation round in the controller.

        Returns ``{'round_id': id}`` once the round is recorded, or
        ``{'round_id': None, 'busy': bool, 'reason': text}`` when it did
        not start.
        """
        cctxt = self._client.prepare(version='1.2', timeout=timeout)
        return cctxt.call({}, 'start_round', dry_run=dry_run)
