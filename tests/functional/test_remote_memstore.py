"""Remote memory end to end on one machine (issue 18 items 1 and 2): two
real memmut-memstore processes on 127.0.0.1 (lender S, client C), the
controller's GlobalProtocol over a real (SQLite) database, the lender's
real LMC_alloc/LMC_release handlers (AgentManager) with the memstore-backed
RemoteMemory, and the client's RemoteClientPolicy. No guest: an NBD client
stands in for QEMU. The guest test (tests/functional/test_memstore.py's
swap workload through a slab) needs the TCG lock and is not here.
"""

import contextlib
import os
import random
import shutil
import tempfile
import threading
import time

import oslo_messaging as messaging
import pytest

from memmut.agent import lender as lendermod
from memmut.agent import manager
from memmut.agent.mutualization import books as bookmod
from memmut.agent import remote
from memmut.db import api as db_api
from memmut.db import migration
from memmut.globals import allocations as al
from memmut.globals import protocol
from memmut import objects
from memmut.virt import simulated
from tests import common
from tests.harness import memstore as process
from tests.harness import nbdclient

MIB = 1024
PAGE = 4096


@pytest.fixture
def short_dir():
    d = tempfile.mkdtemp(prefix='msr', dir='/tmp')
    yield d
    shutil.rmtree(d, ignore_errors=True)


class Clock:
    def __call__(self):
        return time.time()


class Relay:
    """The controller's agent RPC API, delivered to in-process agents."""

    def __init__(self, lender, client_remote):
        self.lender = lender
        self.client_remote = client_remote

    def lmc_alloc(self, host, req):
        return objects.AllocResult.from_primitive(
            self.lender.lmc_alloc({}, req.to_primitive()))

    def lmc_release(self, host, ref):
        self.lender.lmc_release({}, ref.to_primitive())

    def lmc_reclaim(self, host, ref):
        self.client_remote.detach(ref.allocation_id)


class ControllerShim:
    """The agent's controller RPC client, calling GlobalProtocol with the
    client's host name as the sender (what RPC 1.3 carries)."""

    def __init__(self, gp, host):
        self.gp, self.host = gp, host

    def gmc_alloc(self, request, timeout=None):
        return self.gp.alloc(request, sender=self.host)

    def gmc_release(self, ref, timeout=None):
        return self.gp.release(ref, sender=self.host)


def _page(p, r):
    return bytes([(p * 7 + r) % 251]) * (PAGE - 16) + \
        p.to_bytes(8, 'little') + r.to_bytes(8, 'little')


def _fill(nbd, cms, pages, r):
    """Write pages 0..pages-1 (round r) in bursts of 256, each drained to
    the slab before the next (below the worker's queue: none skipped)."""
    st = cms.stats('vm1')
    # the tier's counters count every slab the export ever had, the
    # slab's only its own
    placed0 = st['counters']['remote_placed_pages']
    for p in range(pages):
        assert nbd.write(p * PAGE, _page(p, r)) == 0
        if (p + 1) % 256 and p + 1 < pages:
            continue
        deadline = time.monotonic() + 20
        while True:
            st = cms.stats('vm1')
            if st['slabs'][0]['remote_writes'] >= \
                    st['counters']['remote_placed_pages'] - placed0:
                break
            assert time.monotonic() < deadline, st
            time.sleep(0.01)
    assert st['counters']['remote_skipped_pages'] == 0, st


def test_lend_use_release_and_lender_death(memstore_binary, short_dir,
                                           tmp_path):
    with _two_memstores(memstore_binary, short_dir) as (lender_ms,
                                                        client_ms):
        _run(lender_ms, client_ms, tmp_path)


@contextlib.contextmanager
def _two_memstores(memstore_binary, short_dir):
    """Lender S (serving slabs on 127.0.0.1) and client C, both killed at
    the end."""
    s_dir, c_dir = os.path.join(short_dir, 's'), os.path.join(short_dir, 'c')
    lender_ms = process.MemstoreProcess(
        memstore_binary, s_dir, host_quota=256 << 20,
        extra_args=['--remote-listen', '127.0.0.1:0']).start()
    try:
        client_ms = process.MemstoreProcess(
            memstore_binary, c_dir, host_quota=256 << 20,
            extra_args=['--remote-timeout', '0.5']).start()
        try:
            yield lender_ms, client_ms
        finally:
            client_ms.kill()
    finally:
        lender_ms.kill()


def lender_side(tmp_path, lender_host, client_host, lender_ms, clock=None):
    """The controller's database with both hosts reported (the lender with
    a 512 MiB reservoir), and the lender's agent: the real LMC handlers,
    memstore-backed RemoteMemory, its books. Returns (db, conf, books,
    lender)."""
    url = 'sqlite:///%s' % (tmp_path / 'memmut.sqlite')
    migration.upgrade(url)
    db = db_api.Database(url, clock=clock) if clock else db_api.Database(url)
    conf = common.private_conf(DEFAULT={'host': lender_host})
    now = time.time()
    for name, reservoir_kb in ((lender_host, 512 * MIB), (client_host, 0)):
        db.store_report(objects.HostReport(
            host=name, boot_id='b', seq=1, timestamp=now, hypervisor='sim',
            memory_total_kb=1 << 22, memory_free_kb=1 << 21, cpu_count=2,
            cpu_util=0.1, reservoir_kb=reservoir_kb))
    books = bookmod.Books(total_kb=1024 * MIB, reserve_kb=512 * MIB)
    lender = manager.AgentManager(conf, simulated.SimDriver(conf, vms=[]),
                                  None)
    lender.remote = remote.MemstoreRemoteMemory(
        lender_host, lender_ms.client(), books=lambda: books)
    lender._reservoir_kb = lambda: books.reservoir_kb
    return db, conf, books, lender


def _run(lender_ms, client_ms, tmp_path):
    clock = Clock()
    db, conf, books, lender = lender_side(tmp_path, 's', 'c', lender_ms,
                                          clock=clock)
    # the client: VM vm1's export, every page over its RAM quota
    cms = client_ms.client()
    cms.create_export('vm1', 64 << 20, quota=0)
    client_remote = remote.MemstoreRemoteMemory('c', cms, timeout=0.5)
    gp = protocol.GlobalProtocol(db, Relay(lender, client_remote), conf,
                                 clock=clock)
    policy = remote.RemoteClientPolicy(
        'c', client_remote, ControllerShim(gp, 'c'), cap_kb=8 * MIB)

    # 1. local mutualization left 6 MiB unmet: one allocation of 6 MiB
    policy.step({'vm1': 6 * MIB}, {'vm1'})
    [(aid, kb)] = policy.held['vm1']
    assert kb == 6 * MIB
    assert db.get_remote_allocation(aid).state == al.GRANTED
    assert books.exports == {aid: 6 * MIB}
    lent = lender_ms.client().slabs()['lent']
    assert [(s['id'], s['size']) for s in lent] == [(aid, 6 << 20)]
    assert lender.remote.exports() == [aid]
    assert client_remote.attachments() == [aid]

    # 2. the guest swaps through it: pages go to the slab, read back right
    nbd = nbdclient.NBDClient(client_ms.socket_path('vm1'))
    nbd.connect()
    pages = 1024
    _fill(nbd, cms, pages, 1)
    for p in range(pages):
        err, data = nbd.read(p * PAGE, PAGE)
        assert err == 0 and data == _page(p, 1), p
    counters = cms.stats('vm1')['counters']
    assert counters['remote_hit_pages'] >= pages
    assert lender_ms.client().slabs()['lent'][0]['touched_bytes'] >= \
        pages * PAGE

    # 3. the demand falls: released at the controller, the slab freed on
    # the lender, the books balanced again, the pages served from the file
    policy.step({}, {'vm1'})
    assert policy.held == {}
    assert db.get_remote_allocation(aid).state in al.CLOSED_STATES
    assert lender_ms.client().slabs()['lent'] == []
    assert books.exports == {} and books.pool_kb == 512 * MIB
    for p in range(0, pages, 97):
        assert nbd.read(p * PAGE, PAGE) == (0, _page(p, 1))

    # 4. a new allocation, then the lender's memstore is SIGKILLed while
    # the client reads: no wrong page, the slab detached, released
    policy.step({'vm1': 6 * MIB}, {'vm1'})
    [(aid2, _)] = policy.held['vm1']
    _fill(nbd, cms, pages, 2)
    lender_ms.kill()
    killed = time.time()
    for p in range(pages):
        err, data = nbd.read(p * PAGE, PAGE)
        assert err == 0 and data == _page(p, 2), p
    gone = [s for s in cms.slabs()['attached'] if s['id'] == aid2]
    assert gone and gone[0]['state'] == 'failed', gone
    assert gone[0]['failed_at'] - killed < 1.0
    assert client_remote.attachments() == []
    policy.step(None, {'vm1'})
    assert policy.held == {}
    assert db.get_remote_allocation(aid2).state in al.CLOSED_STATES
    nbd.close()


# -- lender-initiated reclaim (GMC_reclaim -> LMC_reclaim) -------------------

class LoopRelay(Relay):
    """Relay to both agents' real LMC handlers; ``deaf`` makes the client
    miss its LMC_reclaim (a client that does not answer)."""

    def __init__(self, lender, client):
        super().__init__(lender, client.remote)
        self.client = client
        self.deaf = False

    def lmc_reclaim(self, host, ref):
        if self.deaf:
            raise messaging.MessagingTimeout('client %s does not answer'
                                             % host)
        self.client.lmc_reclaim({}, ref.to_primitive())


class LenderShim:
    """The lender agent's controller RPC client (sender: the lender)."""

    def __init__(self, gp, host):
        self.gp, self.host = gp, host

    def gmc_reclaim(self, request, timeout=None):
        return self.gp.reclaim(request, sender=self.host)


class Load:
    """Guest-like traffic on the client's export: writes new versions of
    random pages and reads random pages back, checking each against the
    newest version written (one thread: reads and writes in order)."""

    def __init__(self, sock, pages, versions):
        self.sock, self.pages, self.versions = sock, pages, versions
        self.stop = threading.Event()
        self.tally = {'reads': 0, 'writes': 0, 'errors': 0, 'wrong': 0}
        self.thread = threading.Thread(target=self._run)

    def _run(self):
        rnd = random.Random(18)
        c = nbdclient.NBDClient(self.sock).connect()
        while not self.stop.is_set():
            p = rnd.randrange(self.pages)
            if rnd.random() < 0.3:
                r = self.versions[p] + 1
                err = c.write(p * PAGE, _page(p, r))
                self.tally['writes'] += 1
                if err:
                    self.tally['errors'] += 1
                else:
                    self.versions[p] = r
            else:
                err, data = c.read(p * PAGE, PAGE)
                self.tally['reads'] += 1
                if err:
                    self.tally['errors'] += 1
                elif data != _page(p, self.versions[p]):
                    self.tally['wrong'] += 1
        c.close()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def _agents(conf_host, remote_memory, books=None):
    conf = common.private_conf(DEFAULT={'host': conf_host})
    agent = manager.AgentManager(conf, simulated.SimDriver(conf, vms=[]),
                                 None)
    agent.remote = remote_memory
    if books is not None:
        agent._reservoir_kb = lambda: books.reservoir_kb
    return agent


def _report(gp, db, host, seq, remote_memory, reservoir_kb):
    """Store a report as the controller's RPC endpoint does."""
    report = objects.HostReport(
        host=host, boot_id='b', seq=seq, timestamp=time.time(),
        hypervisor='sim', memory_total_kb=1 << 22, memory_free_kb=1 << 21,
        cpu_count=2, cpu_util=0.1, reservoir_kb=reservoir_kb,
        remote_exports=remote_memory.exports(),
        remote_attachments=remote_memory.attachments())
    if db.store_report(report):
        gp.note_lists(report)


def test_lender_reclaims_under_load(memstore_binary, short_dir, tmp_path):
    """B's own VMs need the memory it lends: B asks GMC_reclaim, the
    controller has A detach (LMC_reclaim) and only then B free the slab
    (LMC_release), while A's export is read and written. Then the same
    with a client that does not answer: B deletes the slab itself after
    its reclaim timeout. 0 wrong pages, 0 errors, and the books of A, B
    and the controller agree."""
    with _two_memstores(memstore_binary, short_dir) as (lender_ms,
                                                        client_ms):
        _reclaim(lender_ms, client_ms, tmp_path)


def _agree(db, books, lender, client, policy, aid, state):
    """The three parties' books: nothing of ``aid`` anywhere but a closed
    row at the controller, B's pool whole again."""
    assert db.get_remote_allocation(aid).state == state
    assert books.exports == {} and books.pool_kb == 512 * MIB
    assert lender.remote.exports() == []
    assert lender.remote.client.slabs()['lent'] == []
    assert aid not in client.remote.attachments()
    assert policy.held == {}
    assert [a for a in db.list_remote_allocations()
            if a.state in al.OPEN_STATES] == []


def _reclaim(lender_ms, client_ms, tmp_path):
    clock = Clock()
    url = 'sqlite:///%s' % (tmp_path / 'memmut.sqlite')
    migration.upgrade(url)
    db = db_api.Database(url, clock=clock)
    conf = common.private_conf(DEFAULT={'host': 's'},
                               controller={'allocation_grace': 1})
    books = bookmod.Books(total_kb=1024 * MIB, reserve_kb=512 * MIB)
    lender = _agents('s', remote.MemstoreRemoteMemory(
        's', lender_ms.client(), books=lambda: books), books)
    cms = client_ms.client()
    cms.create_export('vm1', 64 << 20, quota=0)
    client = _agents('c', remote.MemstoreRemoteMemory('c', cms, timeout=0.5))
    relay = LoopRelay(lender, client)
    gp = protocol.GlobalProtocol(db, relay, conf, clock=clock)
    lender.lender = lendermod.LenderReclaim(
        's', lender.remote, LenderShim(gp, 's'), lambda: books, 0.5)
    policy = remote.RemoteClientPolicy(
        'c', client.remote, ControllerShim(gp, 'c'), cap_kb=8 * MIB)
    seq = iter(range(1, 1000))

    def reports():
        n = next(seq)
        _report(gp, db, 's', n, lender.remote, books.reservoir_kb)
        _report(gp, db, 'c', n, client.remote, 0)
    reports()
    pages = 1024
    sock = client_ms.socket_path('vm1')
    nbd = nbdclient.NBDClient(sock).connect()
    results = {}
    for case in ('answered', 'timeout'):
        policy.step({'vm1': 6 * MIB}, {'vm1'})
        [(aid, _)] = policy.held['vm1']
        assert books.exports == {aid: 6 * MIB}
        _fill(nbd, cms, pages, 1)
        versions = [1] * pages
        reports()
        gp.reconcile()
        assert db.get_remote_allocation(aid).state == al.ACTIVE
        relay.deaf = case == 'timeout'
        with Load(sock, pages, versions) as load:
            time.sleep(0.5)
            hits = cms.stats('vm1')['counters']['remote_hit_pages']
            # B's VMs lack 4 MiB: its local controller reclaims
            assert lender.lender.step(4 * MIB) == [aid]
            if case == 'answered':
                # detached at A, then freed at B, within the call
                assert db.get_remote_allocation(aid).state == al.RELEASED
                assert books.exports == {}
                assert lender.lender.pending == {}
            else:
                assert db.get_remote_allocation(aid).state == \
                    al.RECLAIMING
                assert books.exports == {aid: 6 * MIB}
                time.sleep(0.6)
                lender.lender.step(4 * MIB)     # the timeout: B deletes
                assert books.exports == {}
            time.sleep(1.0)
        assert load.tally['wrong'] == 0 and load.tally['errors'] == 0, \
            load.tally
        assert load.tally['reads'] > 100 and load.tally['writes'] > 30
        # every page is still right, now served from A's file
        for p in range(pages):
            assert nbd.read(p * PAGE, PAGE) == (0, _page(p, versions[p])), p
        st = cms.stats('vm1')
        assert st['export']['remote_pages'] == 0, st
        reports()
        gp.reconcile()
        policy.step(None, {'vm1'})
        reports()
        gp.reconcile()
        _agree(db, books, lender, client, policy, aid, al.RELEASED)
        results[case] = (hits, load.tally)
    nbd.close()
    print('reclaim under load: %s' % results)
