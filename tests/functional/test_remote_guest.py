"""A real guest swaps through remote memory (issue 18): a TCG guest whose
swap disk is an export of the factory's memmut-memstore (host A) with a
16 MiB RAM quota, and a slab of 256 MiB on a second memmut-memstore (host
B, on 127.0.0.1) attached behind it. memwork checks every page; B's
memstore is SIGKILLed while the guest swaps through it: 0 errors, the
guest keeps running and finishes, the slab is detached, and the pages it
held are read from A's backing file.

Boots a guest: run under ``flock /tmp/memmut-tcg.lock``.
"""

import time

import pytest

from memmut.evaluation import workloads
from tests.harness import memstore as process

libvirt = pytest.importorskip('libvirt')

KEY = '7e' * 32
SLAB = 256 << 20


def test_guest_swaps_through_a_slab_and_survives_the_lenders_death(
        guest_factory, memstore_binary, tmp_path):
    # one 288 MiB mapping touched in a guest ballooned to 256 MiB: heavy
    # swapping; step 1 re-checks every page, across the lender's death
    steps = [workloads.Step(288, 14), workloads.Step(288, 25)]
    g = guest_factory(memory_mib=384, current_mib=256, schedule=steps,
                      alloc='s', poweroff=True, swap='memstore',
                      swap_mib=512, swap_quota_mib=16, stat_period=1,
                      reconnect_delay=30, start=False)
    export = g.swap_server
    lender = process.MemstoreProcess(
        memstore_binary, str(tmp_path / 'lender'),
        host_quota=512 << 20,
        extra_args=['--remote-listen', '127.0.0.1:0']).start()
    try:
        b = lender.client()
        slab = b.slab_create('guest-slab', SLAB, 'memmut-alloc-guest-slab',
                             KEY)
        a = export.process.client()
        a.slab_attach(export.name, 'guest-slab', slab['uri'], SLAB,
                      'memmut-alloc-guest-slab', KEY, timeout_ms=500)
        g.start()
        g.wait_ready()
        g.wait_for(r'MEMMUT-GUEST SWAP dev=/dev/vda size_kb=524288', 60)
        # 1. the guest swaps through the slab
        g.wait_for(r'^MEMWORK end step=0 ', 150)
        st = export.stats()
        assert st['slabs'] and st['slabs'][0]['state'] == 'attached', st
        placed = st['export']['remote_pages']
        assert placed > 1024, st                      # > 4 MiB remote
        assert st['counters']['remote_hit_pages'] > 0, st['counters']
        # 2. SIGKILL of the lender while step 1 swaps
        time.sleep(3)
        hits = export.stats()['counters']['remote_hit_pages']
        lender.kill()
        killed = time.time()
        done = g.wait_done(timeout=200)
        g.wait_shutoff()
        assert done['errors'] == 0, g.log()[-3000:]
        ends = [d for d in g.workload_lines() if d['event'] == 'end']
        assert [e['step'] for e in ends] == [0, 1]
        assert ends[-1]['errors'] == 0
        after = export.stats()
        assert after['slabs'] == [] and after['export']['remote_pages'] == 0
        gone = [s for s in a.slabs()['attached'] if s['id'] == 'guest-slab']
        assert gone and gone[0]['state'] == 'failed', gone
        assert gone[0]['failed_at'] - killed < 1.0, gone
        assert after['counters']['remote_detaches'] == 1
        assert after['counters']['file_read_pages'] > hits
        print('guest: %d pages placed remotely, %d remote hits before the '
              'kill; slab failed %.0f ms after it (%s)' % (
                  placed, hits, (gone[0]['failed_at'] - killed) * 1e3,
                  gone[0]['error']))
    finally:
        lender.kill()
