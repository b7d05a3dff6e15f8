"""memmut-agent: the per-compute-node Local Memory Controller."""

import sys

from oslo_log import log as logging

from memmut.agent import service as agent_service
from memmut import rpc
from memmut import service
from memmut.virt import driver as virt_driver
from memmut.virt import simulated

LOG = logging.getLogger(__name__)

DESCRIPTION = (
    'memmut-agent, the Local Memory Controller of one compute node: every '
    '[agent] poll_interval seconds it reads each libvirt domain\'s balloon '
    'statistics, estimates its working set (Badis), lends idle memory '
    'between the node\'s VMs through their balloons (Algorithm 1) and '
    'reports to memmut-controller over RPC. Run one per nova-compute '
    'node; see doc/source/operate.rst.')


def main(argv=None):
    conf = service.prepare(sys.argv[1:] if argv is None else argv,
                           description=DESCRIPTION)
    service.require_real_transport(conf, 'memmut-agent')
    try:
        agent = agent_service.AgentService(conf, rpc.get_transport(conf))
    except (simulated.SimSpecError, virt_driver.HypervisorUnavailable) as e:
        service.fail(str(e))
    service.run_until_signalled(agent.start, agent.stop)


if __name__ == '__main__':
    main()
