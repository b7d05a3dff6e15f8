"""Client side of the agent RPC API (controller -> one agent).

API version history:

* 1.0 - Initial version: the LMC half of the global protocol of seed 004
  §4.3.1: ``lmc_alloc``, ``lmc_release``, ``lmc_reclaim``; and ``ping``.
* 1.1 - ``lmc_alloc`` carries the slab's TLS-PSK credentials issued by the
  GMC (``psk_identity``, ``psk_key``); a lender refuses a request without
  them. Only ``lmc_alloc`` is sent as 1.1: a 1.0 agent answers it with an
  UnsupportedVersion error, which the controller records as a refusal.
"""

from memmut import objects
from memmut import rpc

VERSION = '1.1'


class AgentAPI:
    def __init__(self, transport, conf):
        self._client = rpc.get_client(transport, conf.agent_topic, VERSION)

    def _cctxt(self, host, timeout=None, version='1.0'):
        return self._client.prepare(server=host, version=version,
                                    timeout=timeout)

    def ping(self, host, timeout=None):
        return self._cctxt(host, timeout).call({}, 'ping')

    def lmc_alloc(self, host, request, timeout=None):
        """LMC_alloc: ask a server LMC to export memory; AllocResult."""
        # 1.1: the request carries credentials a 1.0 agent would ignore.
        reply = self._cctxt(host, timeout, version='1.1').call(
            {}, 'lmc_alloc', request=request.to_primitive())
        return objects.AllocResult.from_primitive(reply)

    def lmc_release(self, host, ref, timeout=None):
        """LMC_release: tell the server LMC an export is no longer used."""
        self._cctxt(host, timeout).call({}, 'lmc_release',
                                        ref=ref.to_primitive())

    def lmc_reclaim(self, host, ref, timeout=None):
        """LMC_reclaim: tell the client LMC to stop using an export."""
        self._cctxt(host, timeout).call({}, 'lmc_reclaim',
                                        ref=ref.to_primitive())
