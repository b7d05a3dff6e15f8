"""Does a balloon dip that causes no swap-in slow a TCG guest afterwards?
Two 512 MiB guests, Zipf over 320 MiB for SECONDS; one gets the dip
(DIP_MIB for 15 s from t=30 s, then back to 512), the other none."""
import json, os, sys, threading, time
import libvirt
from memmut.evaluation import workloads
from tests.benchmarks import bench_patterns as bp
from tests.harness import bed

PAT = os.environ.get('PAT', 'zipf0.8')
DIP = int(os.environ.get('DIP_MIB', '430'))
SECONDS = 120
bp.set_size(512, 320)
daemon, img, work, factory = bed.start('dip-')
pattern, steps = workloads.pattern_suite(320, SECONDS)[PAT]
res = {}
def one(name, dip):
    g = factory(memory_mib=512, schedule=steps, alloc='d', loops=1,
                period_ms=200, swap='memstore', swap_mib=512, memfd=True,
                tb_cache_mib=64, stat_period=1, pattern=pattern)
    try:
        t0 = time.time()
        g.wait_for(r'^MEMWORK step=0 ', 60)
        if dip:
            time.sleep(30)
            g.dom.setMemoryFlags(DIP * 1024, libvirt.VIR_DOMAIN_AFFECT_LIVE)
            time.sleep(15)
            g.dom.setMemoryFlags(512 * 1024, libvirt.VIR_DOMAIN_AFFECT_LIVE)
        g.wait_for(r'^MEMWORK done', SECONDS + 200)
        st = g.guest_stats()
        res[name] = dict(ops=bp.ops(g), progress=bp.progress(g),
                         pswpin=st[-1].get('pswpin'), pswpout=st[-1].get('pswpout'))
    finally:
        g.destroy()
try:
    for rep in range(int(os.environ.get('REPS', '2'))):
        th = [threading.Thread(target=one, args=('dip%d' % rep, True)),
              threading.Thread(target=one, args=('ref%d' % rep, False))]
        if rep % 2: th.reverse()
        for t in th: t.start()
        for t in th: t.join()
        print(rep, {k: (v['ops'], v['pswpin'], v['pswpout']) for k, v in res.items()}, flush=True)
finally:
    daemon.stop()
json.dump(res, open(os.environ.get('OUT', '/tmp/b68/dip.json'), 'w'))
