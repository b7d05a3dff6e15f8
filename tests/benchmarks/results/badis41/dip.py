"""Does a balloon dip that causes no swap-in slow a TCG guest afterwards?

Two 512 MiB guests, Zipf over 320 MiB for SECONDS; one gets the dip
(DIP_MIB for 15 s from t=30 s, then back to 512), the other none. Run
from a tree's root with the functional environment, under the TCG lock
(this README's part 2). The copy that ran differed in style only.
"""
import json
import os
import threading
import time

import libvirt

from memmut.evaluation import workloads
from tests.benchmarks import bench_patterns as bp
from tests.harness import bed

PAT = os.environ.get('PAT', 'zipf0.8')
DIP = int(os.environ.get('DIP_MIB', '430'))
SECONDS = 120


def one(factory, pattern, steps, res, name, dip):
    g = factory(memory_mib=512, schedule=steps, alloc='d', loops=1,
                period_ms=200, swap='memstore', swap_mib=512, memfd=True,
                tb_cache_mib=64, stat_period=1, pattern=pattern)
    try:
        g.wait_for(r'^MEMWORK step=0 ', 60)
        if dip:
            time.sleep(30)
            g.dom.setMemoryFlags(DIP * 1024, libvirt.VIR_DOMAIN_AFFECT_LIVE)
            time.sleep(15)
            g.dom.setMemoryFlags(512 * 1024, libvirt.VIR_DOMAIN_AFFECT_LIVE)
        g.wait_for(r'^MEMWORK done', SECONDS + 200)
        st = g.guest_stats()
        res[name] = dict(ops=bp.ops(g), progress=bp.progress(g),
                         pswpin=st[-1].get('pswpin'),
                         pswpout=st[-1].get('pswpout'))
    finally:
        g.destroy()


def main():
    bp.set_size(512, 320)
    daemon, img, work, factory = bed.start('dip-')
    pattern, steps = workloads.pattern_suite(320, SECONDS)[PAT]
    res = {}
    try:
        for rep in range(int(os.environ.get('REPS', '2'))):
            th = [threading.Thread(target=one, args=(
                      factory, pattern, steps, res, '%s%d' % (n, rep), d))
                  for n, d in (('dip', True), ('ref', False))]
            if rep % 2:
                th.reverse()
            for t in th:
                t.start()
            for t in th:
                t.join()
            print(rep, {k: (v['ops'], v['pswpin'], v['pswpout'])
                        for k, v in res.items()}, flush=True)
    finally:
        daemon.stop()
    with open(os.environ.get('OUT', 'dip.json'), 'w') as f:
        json.dump(res, f)


if __name__ == '__main__':
    main()
