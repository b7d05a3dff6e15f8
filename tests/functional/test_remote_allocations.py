"""The controller keeps remote allocations true (issue 18 item 3), with
memmut-controller and two memmut-agents (simulated hypervisor) as processes
over a real RabbitMQ and a real PostgreSQL.

The agents cannot lend yet (memstore has no remote tier): the allocations
are written into the database as a controller that died after granting them
would have left them, and the live controller must reconcile them with what
the agents report. A third party speaks through the real RPC client with
its own host name.
"""

import time

from memmut.db import api as db_api
from memmut.db import migration
from memmut.globals import allocations as al
from memmut.globals import rpcapi
from memmut import objects
from memmut import rpc
from tests import common
from tests.functional import test_services as ts
from tests.harness import guest as guestmod

GIB = 1 << 20


def _conf(path, host, rabbit_url, pg_url):
    lines = ['[DEFAULT]', 'host = %s' % host,
             'transport_url = %s' % rabbit_url, 'rpc_response_timeout = 5',
             '', '[database]', 'connection = %s' % pg_url, '',
             '[controller]', 'host_down_after = 6', 'reconcile_interval = 1',
             'allocation_grace = 3', '',
             '[agent]', 'hypervisor_driver = sim', 'poll_interval = 1',
             'report_timeout = 2', '',
             '[simulated_hypervisor]', 'host_memory_mb = 4096']
    path.write_text('\n'.join(lines) + '\n')
    return str(path)


def _granted(db, aid, client='node-c', server='node-s'):
    db.create_remote_allocation(aid, client, server, 'vm-' + aid, GIB,
                                psk_identity=al.psk_identity(aid),
                                psk_key='5a' * 32)
    db.transition_remote_allocation(aid, al.E_GRANTED, uri='nbd://x/' + aid)


def test_reconciliation_and_refusals_over_rabbitmq_and_postgresql(
        rabbit_url, postgres_url, tmp_path):
    migration.upgrade(postgres_url)
    db = db_api.Database(postgres_url)
    confs = {h: _conf(tmp_path / ('%s.conf' % h), h, rabbit_url,
                      postgres_url)
             for h in ('controller-1', 'node-s', 'node-c')}
    controller = ts.Service('memmut.cmd.controller', confs['controller-1'],
                            tmp_path / 'controller.log').start()
    agents = {h: ts.Service('memmut.cmd.agent', confs[h],
                            tmp_path / ('%s.log' % h)).start()
              for h in ('node-s', 'node-c')}
    # A third host, in the test process, through the agents' RPC client.
    x_conf = common.private_conf(DEFAULT={'host': 'node-x',
                                          'transport_url': rabbit_url})
    transport = rpc.get_transport(x_conf)
    node_x = rpcapi.ControllerAPI(transport, x_conf)
    try:
        def hosts():
            return {h.name: h for h in db.list_hosts()}
        listed = guestmod.wait_until(
            hosts, lambda hs: all(
                h in hs and hs[h].remote_exports is not None
                for h in ('node-s', 'node-c')), 60,
            'reports listing remote allocations from both agents\n%s'
            % controller.output()[-3000:])
        # The agents truthfully lend and use nothing.
        assert listed['node-s'].remote_exports == []
        assert listed['node-c'].remote_attachments == []

        # 1. A host that is no party cannot release; the controller says
        # why over RPC and in its log.
        _granted(db, 'unused')
        reply = node_x.gmc_release(objects.AllocationRef(
            allocation_id='unused'), timeout=10)
        assert reply['released'] is False
        assert 'node-x is not the client' in reply['reason']
        assert 'GMC_release of unused from node-x refused' in \
            controller.output()
        # 2. ... nor reclaim another host's memory, nor date a report in
        # the future.
        assert node_x.gmc_reclaim(objects.ReclaimRequest(
            server_host='node-s', size_kb=GIB), timeout=10) == 0
        future = objects.HostReport(
            host='node-x', boot_id='b', seq=1, timestamp=time.time() + 3600,
            hypervisor='sim', memory_total_kb=GIB, memory_free_kb=GIB,
            cpu_count=1, cpu_util=0.0)
        assert node_x.report(future, timeout=10) is False
        assert db.count_reports('node-x') == 0

        # 3. Nobody uses 'unused' (the client does not list it): released
        # after the grace period, the lender told (and confirming).
        guestmod.wait_until(lambda: db.get_remote_allocation('unused'),
                            lambda a: a.state == al.RELEASED, 30,
                            'the unused allocation to be released\n%s'
                            % controller.output()[-3000:])
        assert db.get_remote_allocation('unused').psk_key is None
        assert 'LMC_release unused' in agents['node-s'].output()

        # 4. The lender dies: its allocation is closed as failed within
        # host_down_after + reconcile_interval (controller clock), and the
        # client is told to detach.
        _granted(db, 'lent')
        agents['node-s'].kill()
        killed = time.monotonic()
        guestmod.wait_until(lambda: db.get_remote_allocation('lent'),
                            lambda a: a.state == al.FAILED, 30,
                            'the dead lender\'s allocation to fail\n%s'
                            % controller.output()[-3000:])
        assert time.monotonic() - killed < 6 + 1 + 5
        guestmod.wait_until(agents['node-c'].output,
                            lambda out: 'LMC_reclaim lent' in out, 10,
                            'the client to be told')
    finally:
        transport.cleanup()
        for agent in agents.values():
            agent.kill()
        controller.kill()
        db.close()
