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
"""

from memmut import objects
from memmut import rpc

VERSION = '1.2'


class ControllerAPI:
    def __init__(self, transport, conf):
        self._client = rpc.get_client(transport, conf.controller_topic,
                                      VERSION)

    def _cctxt(self, timeout=None):
        return self._client.prepare(version=VERSION, timeout=timeout)

    def report(self, report, timeout=None):
        """Send one HostReport; True if stored, False if a duplicate."""
        reply = self._cctxt(timeout).call({}, 'report',
                                          report=report.to_primitive())
        return bool(reply['stored'])

    def gmc_inform(self, inform, timeout=None):
        """GMC_inform: the reservoir of this LMC changed size."""
        self._cctxt(timeout).call({}, 'gmc_inform',
                                  inform=inform.to_primitive())

    def gmc_alloc(self, request, timeout=None):
        """GMC_alloc: ask for remote memory; returns an AllocResult."""
        reply = self._cctxt(timeout).call({}, 'gmc_alloc',
                                          request=request.to_primitive())
        return objects.AllocResult.from_primitive(reply)

    def gmc_release(self, ref, timeout=None):
        """GMC_release: this client no longer needs an allocation."""
        self._cctxt(timeout).call({}, 'gmc_release', ref=ref.to_primitive())

    def gmc_reclaim(self, request, timeout=None):
        """GMC_reclaim: this server wants memory back; returns KiB freed."""
        reply = self._cctxt(timeout).call({}, 'gmc_reclaim',
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
