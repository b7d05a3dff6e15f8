"""The controller as a service: its RPC server and housekeeping."""

import threading
import time

from oslo_log import log as logging

from memmut.agent import rpcapi as agent_rpcapi
from memmut.globals import manager
from memmut import rpc

LOG = logging.getLogger(__name__)
PURGE_EVERY = 600.0


class ControllerService:
    def __init__(self, conf, transport, db):
        self.conf = conf
        self.db = db
        self.manager = manager.ControllerManager(
            db, agent_rpcapi.AgentAPI(transport, conf), conf)
        self._server = rpc.get_server(transport, conf.controller_topic,
                                      conf.host, [self.manager])
        self._stop = threading.Event()
        self._thread = None
        self._started = False

    def _housekeeping(self):
        while not self._stop.wait(PURGE_EVERY):
            try:
                cutoff = time.time() - self.conf.controller.sample_retention
                purged = self.db.purge_samples(cutoff)
                if purged:
                    LOG.info('Purged %d samples older than %d s', purged,
                             self.conf.controller.sample_retention)
            except Exception:
                LOG.exception('Purging old samples failed; will retry')

    def start(self):
        self._server.start()
        self._started = True
        self._thread = threading.Thread(target=self._housekeeping,
                                        name='memmut-controller-purge',
                                        daemon=True)
        self._thread.start()
        LOG.info('Controller started on topic %s', self.conf.controller_topic)

    def stop(self):
        self._stop.set()
        # Stopping a server that never started blocks in oslo.messaging.
        if self._started:
            self._server.stop()
            self._server.wait()
            self._started = False
        if self._thread:
            self._thread.join()
