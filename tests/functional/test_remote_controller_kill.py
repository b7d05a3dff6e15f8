"""The controller SIGKILLed in the middle of an allocation, then restarted
(issue 18): memmut-controller as a process over a real RabbitMQ and a real
PostgreSQL; the lender (s) and the client (c) are agents with the real LMC
handlers (AgentManager served over RabbitMQ), each with its own real
memmut-memstore, reporting what their memstores hold.

The controller is killed at one of two points of a GMC_alloc (the test
seam of tests/harness/paused_controller.py): after the lender answered
LMC_alloc (its slab exists, the row still says requested), or after the
row says granted but before the client got the reply. After the restart:
no orphan slab on the lender, nothing attached on the client that the
lender does not hold, the allocation closed, the lender's books whole,
and the next allocation works end to end.
"""

import os
import shutil
import tempfile
import threading

import pytest

from memmut.agent import manager
from memmut.agent.mutualization import books as bookmod
from memmut.agent import remote
from memmut.db import api as db_api
from memmut.db import migration
from memmut.globals import allocations as al
from memmut.globals import rpcapi
from memmut import rpc
from memmut.virt import simulated
from tests import common
from tests.functional import test_services as ts
from tests.harness import guest as guestmod
from tests.harness import memstore as process

MIB = 1024


def _conf_file(path, rabbit_url, pg_url):
    path.write_text('\n'.join([
        '[DEFAULT]', 'host = controller-1', 'transport_url = %s' % rabbit_url,
        'rpc_response_timeout = 5', '',
        '[database]', 'connection = %s' % pg_url, '',
        '[controller]', 'host_down_after = 6', 'reconcile_interval = 1',
        'allocation_grace = 3']) + '\n')
    return str(path)


class Agent:
    """One host's agent in this process: the real AgentManager's LMC
    handlers served over RabbitMQ, its memstore-backed RemoteMemory, and
    a thread sending a report every second (what the agent's poll does)."""

    def __init__(self, host, rabbit_url, memstore, books=None):
        self.conf = common.private_conf(
            DEFAULT={'host': host, 'transport_url': rabbit_url,
                     'rpc_response_timeout': 5},
            agent={'balloon_actuation': False, 'report_timeout': 2})
        self.transport = rpc.get_transport(self.conf)
        self.controller = rpcapi.ControllerAPI(self.transport, self.conf)
        self.manager = manager.AgentManager(
            self.conf, simulated.SimDriver(self.conf, vms=[]),
            self.controller)
        self.books = books
        self.manager.remote = remote.MemstoreRemoteMemory(
            host, memstore.client(), books=lambda: books)
        self.manager._reservoir_kb = lambda: (books.reservoir_kb
                                              if books else 0)
        self.server = rpc.get_server(self.transport, self.conf.agent_topic,
                                     host, [self.manager])
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self.stop.is_set():
            try:
                self.manager.poll_once()
                self.manager.flush()
            except Exception:       # the controller may be dead: go on
                pass
            self.stop.wait(1)

    def start(self):
        self.server.start()
        self.thread.start()
        return self

    def close(self):
        self.stop.set()
        self.thread.join()
        self.server.stop()
        self.server.wait()
        self.transport.cleanup()


@pytest.fixture
def short_dir():
    d = tempfile.mkdtemp(prefix='mck', dir='/tmp')
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize('where', ['lmc_alloc', 'granted'])
def test_controller_sigkill_mid_allocation_then_restart(
        where, rabbit_url, postgres_url, memstore_binary, short_dir,
        tmp_path, monkeypatch):
    migration.upgrade(postgres_url)
    db = db_api.Database(postgres_url)
    conf = _conf_file(tmp_path / 'controller.conf', rabbit_url,
                      postgres_url)
    lender_ms = process.MemstoreProcess(
        memstore_binary, os.path.join(short_dir, 's'),
        host_quota=256 << 20,
        extra_args=['--remote-listen', '127.0.0.1:0']).start()
    client_ms = process.MemstoreProcess(
        memstore_binary, os.path.join(short_dir, 'c'),
        host_quota=256 << 20, extra_args=['--remote-timeout', '0.5']).start()
    client_ms.client().create_export('vm1', 64 << 20, quota=0)
    books = bookmod.Books(total_kb=1024 * MIB, reserve_kb=512 * MIB)
    monkeypatch.setenv('MEMMUT_TEST_PAUSE_AT', where)
    monkeypatch.setenv('MEMMUT_TEST_PAUSE', '120')
    controller = ts.Service('tests.harness.paused_controller', conf,
                            tmp_path / 'controller-1.log').start()
    agents = []
    try:
        s = Agent('s', rabbit_url, lender_ms, books).start()
        agents.append(s)
        c = Agent('c', rabbit_url, client_ms).start()
        agents.append(c)
        guestmod.wait_until(
            lambda: {h.name: h for h in db.list_hosts()},
            lambda hs: 's' in hs and 'c' in hs and
            hs['s'].remote_exports == [] and (hs['s'].reservoir_kb or 0) > 0,
            60, 'both agents to report\n%s' % controller.output()[-3000:])
        policy = remote.RemoteClientPolicy(
            'c', c.manager.remote, c.controller, cap_kb=8 * MIB, timeout=10)

        # 1. the client asks; the controller stops in the middle and is
        # SIGKILLed there
        asking = threading.Thread(
            target=policy.step, args=({'vm1': 6 * MIB}, {'vm1'}))
        asking.start()
        out = guestmod.wait_until(
            controller.output, lambda o: 'TEST-SEAM paused at' in o, 60,
            'the controller to reach the seam')
        aid = out.split('TEST-SEAM paused at %s ' % where)[1].split()[0]
        controller.kill()
        asking.join(30)
        assert not asking.is_alive()
        # the client got no answer: it holds and attached nothing; the
        # lender made the slab, which is now nobody's
        assert policy.held == {}
        assert client_ms.client().slabs()['attached'] == []
        assert [sl['id'] for sl in lender_ms.client().slabs()['lent']] == \
            [aid]
        assert books.exports == {aid: 6 * MIB}
        state = db.get_remote_allocation(aid).state
        assert state == (al.REQUESTED if where == 'lmc_alloc'
                         else al.GRANTED)

        # 2. restarted (the plain controller): reconciled on all three
        # parties
        monkeypatch.setenv('MEMMUT_TEST_PAUSE_AT', '')
        controller = ts.Service('memmut.cmd.controller', conf,
                                tmp_path / 'controller-2.log').start()
        closed = guestmod.wait_until(
            lambda: db.get_remote_allocation(aid),
            lambda a: a.state in al.CLOSED_STATES, 60,
            'the cut allocation to be closed\n%s'
            % controller.output()[-3000:])
        assert closed.state == (al.FAILED if where == 'lmc_alloc'
                                else al.RELEASED), closed.reason
        guestmod.wait_until(lambda: lender_ms.client().slabs()['lent'],
                            lambda lent: lent == [], 30,
                            'the orphan slab to be freed')
        assert books.exports == {} and books.pool_kb == 512 * MIB
        assert client_ms.client().slabs()['attached'] == []
        print('%s: allocation %s %s (%s)' % (where, aid, closed.state,
                                             closed.reason))

        # 3. the next allocation works end to end, and all three agree
        policy.step({'vm1': 6 * MIB}, {'vm1'})
        [(aid2, _)] = policy.held['vm1']
        guestmod.wait_until(lambda: db.get_remote_allocation(aid2),
                            lambda a: a.state == al.ACTIVE, 30,
                            'the client to report the new allocation')
        assert [sl['id'] for sl in lender_ms.client().slabs()['lent']] == \
            [aid2]
        assert c.manager.remote.attachments() == [aid2]
        assert books.exports == {aid2: 6 * MIB}
        opened = [a.allocation_id for a in db.list_remote_allocations(
            state=al.OPEN_STATES)]
        assert opened == [aid2]
        policy.step({}, {'vm1'})
        assert policy.held == {} and books.exports == {}
        assert db.get_remote_allocation(aid2).state == al.RELEASED
    finally:
        for agent in agents:
            agent.close()
        controller.kill()
        for p in (lender_ms, client_ms):
            p.kill()
        db.close()
