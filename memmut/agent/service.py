"""The agent as a service: its RPC server plus its polling thread."""

import threading

from memmut.agent import manager
from memmut.globals import rpcapi as controller_rpcapi
from memmut import rpc
from memmut.virt import driver as virt_driver


class AgentService:
    def __init__(self, conf, transport, driver=None):
        self.conf = conf
        self.driver = driver or virt_driver.load_driver(
            conf.agent.hypervisor_driver, conf)
        self.manager = manager.AgentManager(
            conf, self.driver,
            controller_rpcapi.ControllerAPI(transport, conf))
        self._server = rpc.get_server(transport, conf.agent_topic, conf.host,
                                      [self.manager])
        self._stop = threading.Event()
        self._thread = None
        self._started = False

    def start(self):
        self._server.start()
        self._started = True
        self._thread = threading.Thread(target=self.manager.run,
                                        args=(self._stop,),
                                        name='memmut-agent-poll', daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join()
        # Stopping a server that never started blocks in oslo.messaging.
        if self._started:
            self._server.stop()
            self._server.wait()
            self._started = False
