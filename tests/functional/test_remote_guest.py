"""A real guest swaps through remote memory on another host of the netns
bed (issue 18): host A (namespace ``a``) runs the memmut-memstore that
serves the TCG guest's swap disk (QEMU reaches it over its unix socket;
the guest's export has a 16 MiB RAM quota), host B (namespace ``b``) lends
a 256 MiB slab over the bed's veth links (192.0.2.0/24, TLS-PSK).

The allocation goes through the protocol: the client's RemoteClientPolicy
asks GMC_alloc (the controller's GlobalProtocol over SQLite), the
lender's real LMC_alloc handler makes the slab, the client attaches it.
memwork checks every page; B's memstore is SIGKILLed while the guest
swaps through it: 0 errors, the guest keeps running and finishes, the
slab is detached within the remote timeout, its pages are read from A's
backing file, and the allocation ends as failed at the controller.

Boots a guest: run under ``flock /tmp/memmut-tcg.lock``. Needs root.
"""

import time

import pytest

from memmut.agent import lender as lendermod
from memmut.agent import remote
from memmut.evaluation import workloads
from memmut.globals import allocations as al
from memmut.globals import protocol
from tests.functional import test_remote_memstore as trm
from tests.harness import memstore as process

libvirt = pytest.importorskip('libvirt')

MIB = 1024
SLAB_KB = 256 * MIB
# above the design's 0.2 s: this machine's 2 shared vCPUs can stall a
# process that long under another session's load (a false failure)
TIMEOUT = 0.5


def _bed_guest_and_lender(guest_factory, netns_bed, memstore_binary,
                          tmp_path):
    """Hosts a and b on the veth bed; a's memstore serves the guest's swap
    (16 MiB RAM quota), b's memstore lends. Returns (bed, guest, lender
    memstore); the guest is defined, not started."""
    bed = netns_bed(['a', 'b'], profile='veth')
    # one 288 MiB mapping touched in a guest ballooned to 256 MiB: heavy
    # swapping; step 1 re-checks every page, across the lender's exit
    steps = [workloads.Step(288, 14), workloads.Step(288, 25)]
    # host A's memstore, in namespace a, its sockets where QEMU finds them
    guest_factory.memstore = process.MemstoreProcess(
        memstore_binary, str(tmp_path / 'a-state'),
        socket_dir=guest_factory.sock_dir, host_quota=1024 << 20,
        log_path=str(tmp_path / 'a-memstore.log'),
        extra_args=['--remote-timeout', str(TIMEOUT)],
        wrapper=bed.command('a', [])).start()
    g = guest_factory(memory_mib=384, current_mib=256, schedule=steps,
                      alloc='s', poweroff=True, swap='memstore',
                      swap_mib=512, swap_quota_mib=16, stat_period=1,
                      reconnect_delay=30, start=False)
    lender_ms = process.MemstoreProcess(
        memstore_binary, str(tmp_path / 'b-state'), host_quota=512 << 20,
        log_path=str(tmp_path / 'b-memstore.log'),
        extra_args=['--remote-listen', '%s:10809' % bed.address('b')],
        wrapper=bed.command('b', [])).start()
    return bed, g, lender_ms


def test_guest_swaps_through_a_slab_on_another_host_and_survives_its_death(
        guest_factory, netns_bed, memstore_binary, tmp_path):
    bed, g, lender_ms = _bed_guest_and_lender(
        guest_factory, netns_bed, memstore_binary, tmp_path)
    try:
        _run(g, g.swap_server, lender_ms, bed, tmp_path)
    finally:
        lender_ms.kill()


def test_lender_reclaims_its_slab_while_a_guest_swaps_through_it(
        guest_factory, netns_bed, memstore_binary, tmp_path):
    bed, g, lender_ms = _bed_guest_and_lender(
        guest_factory, netns_bed, memstore_binary, tmp_path)
    try:
        _reclaim(g, g.swap_server, lender_ms, bed, tmp_path)
    finally:
        lender_ms.kill()


def _run(g, export, lender_ms, bed, tmp_path):
    db, conf, books, lender = trm.lender_side(tmp_path, 'b', 'a',
                                              lender_ms)
    a = export.process.client()
    client_remote = remote.MemstoreRemoteMemory('a', a, timeout=TIMEOUT)
    gp = protocol.GlobalProtocol(db, trm.Relay(lender, client_remote), conf)
    policy = remote.RemoteClientPolicy(
        'a', client_remote, trm.ControllerShim(gp, 'a'), cap_kb=SLAB_KB)
    vm = export.name

    # the guest's VM lacks 256 MiB that host A cannot give: remote memory
    # from host B, attached before the guest starts
    policy.step({vm: SLAB_KB}, {vm})
    [(aid, kb)] = policy.held[vm]
    assert kb == SLAB_KB and books.exports == {aid: SLAB_KB}
    [slab] = a.slabs()['attached']
    assert slab['id'] == aid and bed.address('b') in slab['uri'], slab
    g.start()
    g.wait_ready()
    g.wait_for(r'MEMMUT-GUEST SWAP dev=/dev/vda size_kb=524288', 60)
    # 1. the guest swaps through the slab on the other host
    g.wait_for(r'^MEMWORK end step=0 ', 150)
    st = export.stats()
    assert st['slabs'] and st['slabs'][0]['state'] == 'attached', st
    placed = st['export']['remote_pages']
    assert placed > 1024, st                      # > 4 MiB remote
    assert st['counters']['remote_hit_pages'] > 0, st['counters']
    # 2. SIGKILL of the lender while step 1 swaps
    time.sleep(3)
    hits = export.stats()['counters']['remote_hit_pages']
    lender_ms.kill()
    killed = time.time()
    done = g.wait_done(timeout=200)
    g.wait_shutoff()
    assert done['errors'] == 0, g.log()[-3000:]
    ends = [d for d in g.workload_lines() if d['event'] == 'end']
    assert [e['step'] for e in ends] == [0, 1]
    assert ends[-1]['errors'] == 0
    after = export.stats()
    assert after['export']['remote_pages'] == 0, after
    gone = [s for s in a.slabs()['attached'] if s['id'] == aid]
    assert gone and gone[0]['state'] == 'failed', gone
    assert gone[0]['failed_at'] - killed < 1.0, gone
    assert after['counters']['remote_detaches'] == 1
    assert after['counters']['file_read_pages'] > hits
    # 3. the client tells the controller: the allocation ends as failed
    policy.step(None, {vm})
    assert policy.held == {}
    closed = db.get_remote_allocation(aid)
    assert closed.state == al.FAILED, (closed.state, closed.reason)
    # memstore keeps the failed slab in its history, attached to nothing
    assert client_remote.attachments() == []
    assert after['slabs'] == [] and export.stats()['slabs'] == []
    print('guest over the bed: %d pages placed remotely, %d remote hits '
          'before the kill; slab failed %.0f ms after it (%s); allocation '
          '%s: %s' % (placed, hits, (gone[0]['failed_at'] - killed) * 1e3,
                      gone[0]['error'], closed.state, closed.reason))
    db.close()


def _reclaim(g, export, lender_ms, bed, tmp_path):
    """Host B's own VMs need the memory it lends while A's guest swaps
    through it: B's LenderReclaim asks GMC_reclaim, the controller has A
    detach (A's real LMC_reclaim handler) and then B free the slab. The
    guest sees no error, A serves the slab's pages from its backing file,
    and the books of A, B and the controller agree afterwards."""
    db, conf, books, lender = trm.lender_side(tmp_path, 'b', 'a',
                                              lender_ms)
    a = export.process.client()
    client = trm._agents('a', remote.MemstoreRemoteMemory(
        'a', a, timeout=TIMEOUT))
    gp = protocol.GlobalProtocol(db, trm.LoopRelay(lender, client), conf)
    lender.lender = lendermod.LenderReclaim(
        'b', lender.remote, trm.LenderShim(gp, 'b'), lambda: books, 5.0)
    policy = remote.RemoteClientPolicy(
        'a', client.remote, trm.ControllerShim(gp, 'a'), cap_kb=SLAB_KB)
    vm = export.name
    seq = iter(range(2, 1000))

    def reports():
        n = next(seq)
        trm._report(gp, db, 'b', n, lender.remote, books.reservoir_kb)
        trm._report(gp, db, 'a', n, client.remote, 0)
        gp.reconcile()

    policy.step({vm: SLAB_KB}, {vm})
    [(aid, kb)] = policy.held[vm]
    assert kb == SLAB_KB and books.exports == {aid: SLAB_KB}
    g.start()
    g.wait_ready()
    g.wait_for(r'MEMMUT-GUEST SWAP dev=/dev/vda size_kb=524288', 60)
    # 1. the guest swaps through the slab; both sides report it in use
    g.wait_for(r'^MEMWORK end step=0 ', 150)
    reports()
    assert db.get_remote_allocation(aid).state == al.ACTIVE
    placed = export.stats()['export']['remote_pages']
    assert placed > 1024, placed
    # 2. during step 1 B's VMs lack 64 MiB: B takes the whole slab back
    time.sleep(3)
    before = export.stats()['counters']
    asked = time.time()
    assert lender.lender.step(64 * MIB) == [aid]
    took = time.time() - asked
    # detached at A, then freed at B, within the one call
    assert db.get_remote_allocation(aid).state == al.RELEASED
    assert books.exports == {} and lender.lender.pending == {}
    assert lender_ms.client().slabs()['lent'] == []
    mid = export.stats()
    assert mid['export']['remote_pages'] == 0, mid
    assert all(s['state'] != 'attached' for s in mid['slabs']), mid
    done = g.wait_done(timeout=200)
    g.wait_shutoff()
    assert done['errors'] == 0, g.log()[-3000:]
    ends = [d for d in g.workload_lines() if d['event'] == 'end']
    assert [e['step'] for e in ends] == [0, 1]
    assert ends[-1]['errors'] == 0
    after = export.stats()['counters']
    # the pages the slab held are read back from A's file, none failed
    assert after['file_read_pages'] > before['file_read_pages'], after
    assert after['remote_detaches'] == before['remote_detaches'] + 1
    # 3. A's policy learns the slab is gone; the three books agree
    reports()
    policy.step(None, {vm})
    reports()
    assert policy.held == {}
    assert books.exports == {} and books.pool_kb == 512 * MIB
    assert lender.remote.exports() == [] and client.remote.attachments() == []
    assert [x for x in db.list_remote_allocations()
            if x.state in al.OPEN_STATES] == []
    print('reclaim under a guest: %d pages placed remotely, slab given '
          'back in %.0f ms, %d pages then read from the file; allocation '
          '%s' % (placed, took * 1e3,
                  after['file_read_pages'] - before['file_read_pages'],
                  db.get_remote_allocation(aid).state))
    db.close()
