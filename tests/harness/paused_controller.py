"""memmut-controller with a test seam: it stops for a while in the middle
of a GMC_alloc, so a test can SIGKILL it there.

    MEMMUT_TEST_PAUSE_AT=lmc_alloc   after the lender answered LMC_alloc
                                     (its slab exists), before the
                                     controller records the answer
    MEMMUT_TEST_PAUSE_AT=granted     after the allocation is recorded as
                                     granted, before the client gets the
                                     reply (so before it can attach)
    MEMMUT_TEST_PAUSE=<seconds>      how long (default 60)

At the pause it prints ``TEST-SEAM paused at <where> <allocation id>`` on
its output. Only the functional tests run this module; the production
entry point (``memmut-controller``, :mod:`memmut.cmd.controller`) has no
such seam.
"""

import os
import sys
import time

from memmut.agent import rpcapi as agent_rpcapi
from memmut.cmd import controller
from memmut.globals import protocol

WHERE = os.environ.get('MEMMUT_TEST_PAUSE_AT', '')
PAUSE = float(os.environ.get('MEMMUT_TEST_PAUSE', '60'))


def _pause(where, allocation_id):
    print('TEST-SEAM paused at %s %s' % (where, allocation_id), flush=True)
    sys.stderr.flush()
    time.sleep(PAUSE)


def _wrap():
    lmc_alloc = agent_rpcapi.AgentAPI.lmc_alloc
    alloc = protocol.GlobalProtocol.alloc

    def paused_lmc_alloc(self, host, request, timeout=None):
        result = lmc_alloc(self, host, request, timeout=timeout)
        if WHERE == 'lmc_alloc':
            _pause(WHERE, request.allocation_id)
        return result

    def paused_alloc(self, request, sender=None):
        result = alloc(self, request, sender=sender)
        if WHERE == 'granted' and result.granted:
            _pause(WHERE, result.device.allocation_id)
        return result

    agent_rpcapi.AgentAPI.lmc_alloc = paused_lmc_alloc
    protocol.GlobalProtocol.alloc = paused_alloc


if __name__ == '__main__':
    _wrap()
    controller.main()
