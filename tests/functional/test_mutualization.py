"""Local memory mutualization on real guests (seed 004 ch.3).

Two TCG guests booked 384 MiB, started at 256 MiB (their Mem_init), on a
budget of 512 MiB: no free memory at the start. Guest A idles while B's
working set grows past its Mem_init; then B falls idle and A grows. memmut's
real path runs every round: the libvirt driver, the agent's estimation
pipeline (Badis with smaps sampling and the balloon statistics' swap
counters), Algorithm 1, the actuator, the books. Memory must move from A to
B and back, the guests' MemTotal must follow the balloon, and after every
round the books must balance with no VM counted below what it may be using.
"""

import logging
import subprocess
import time

from memmut.agent.wss import pipeline
from memmut.agent.mutualization import local_controller
from memmut.virt.libvirt import driver as libvirt_driver
from tests import common
from tests.harness import mutualization as mut_support
from tests.harness.guest import parse_lines

MIB = 1024
INIT = 256 * MIB
ROUND = 3.0


def test_memory_moves_idle_to_growing_and_back(libvirtd, guest_factory,
                                               caplog):
    conf = common.private_conf(
        DEFAULT={'host': 'functional-host'},
        libvirt=libvirtd.memmut_options(),
        mutualization=dict(enabled=True, policy='equal',
                           init_source='adopted', budget_kb=2 * INIT,
                           host_reserve_kb=0, min_change_kb=8 * MIB,
                           reclaim_wait=3.0, settle_timeout=20.0),
        agent=dict(wss_estimator='badis', sampling_backend='smaps'),
        badis=dict(headroom_kb=24 * MIB, headroom_fraction=0.0,
                   floor_kb=128 * MIB, max_step_fraction=0.25,
                   round_interval=ROUND, average_window=2,
                   time_slice=2 * ROUND))
    common_args = dict(memory_mib=384, current_mib=256, alloc='d',
                       period_ms=500, swap='file', stat_period=1)
    a = guest_factory(name='mut-a', schedule='24x60,280x70', **common_args)
    b = guest_factory(name='mut-b', schedule='100x8,280x52,24x70',
                      **common_args)
    drv = libvirt_driver.LibvirtDriver(conf)
    drv.connect()
    for g in (a, b):
        drv.set_stats_period(g.uuid, 1)
    gmc = mut_support.RecordingController()
    ctl = local_controller.LocalController(conf, drv, gmc)
    est = pipeline.EstimationPipeline(conf, drv)
    memtotal0 = {g.uuid: g.wait_stat(lambda s: True)['memtotal_kb']
                 for g in (a, b)}
    for g in (a, b):                    # the workloads run
        g.wait_for(r'^MEMWORK step=0 ', 30)
    history = []

    def round_once():
        vms = [v for v in drv.list_vms() if v.uuid in (a.uuid, b.uuid)]
        now = time.time()
        estimates = est.estimate(vms, now)
        result = ctl.step(vms, estimates, now)
        books = ctl.books
        books.check()
        assert books.allocated_kb + books.pool_kb == books.budget_kb
        assert books.budget_kb == 2 * INIT
        after = [v for v in drv.list_vms() if v.uuid in (a.uuid, b.uuid)]
        # nothing granted that a guest has not released
        assert mut_support.held_kb(ctl, after) <= books.budget_kb
        for v in after:
            assert books.vms[v.uuid].alloc_kb >= v.balloon_kb - 4, (
                'VM %s counted below its balloon' % v.name)
        history.append({
            ('a' if u == a.uuid else 'b'): '%d MiB (demand %s %s %s)' % (
                s.alloc_kb // MIB,
                estimates[u].demand_kb // MIB if u in estimates else '-',
                estimates[u].mode if u in estimates else '',
                estimates[u].source if u in estimates else '')
            for u, s in result.vms.items()})
        return result

    def run_until(check, timeout, what):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            started = time.monotonic()
            result = round_once()
            if check(result):
                return result
            time.sleep(max(0.0, ROUND - (time.monotonic() - started)))
        raise AssertionError('timed out waiting for %s; allocations per '
                             'round:\n%s' % (what, '\n'.join(
                                 map(str, history))))

    # Badis's round lines at DEBUG: a failure then shows each round's
    # inputs (CI at stop 51: B stayed at its allocation with a correction
    # learned while it grew, and nothing said why the cap did not act)
    with caplog.at_level(logging.INFO, logger='memmut'), caplog.at_level(
            logging.DEBUG, logger='memmut.agent.wss.badis_rounds'):
        # 1: A idles and lends; B grows beyond its Mem_init and borrows.
        r1 = run_until(
            lambda r: (r.vms[b.uuid].role == 'client' and
                       r.vms[b.uuid].alloc_kb >= INIT + 32 * MIB and
                       r.vms[a.uuid].role == 'server'),
            100, 'B to borrow A\'s memory')
        assert r1.vms[a.uuid].lent_kb >= r1.vms[b.uuid].borrowed_kb
        grown = b.wait_stat(lambda s: s['memtotal_kb'] >=
                            memtotal0[b.uuid] + 24 * MIB, timeout=30)
        assert grown['memtotal_kb'] > memtotal0[b.uuid]
        b_peak = r1.vms[b.uuid].alloc_kb

        # 2: B falls idle, A grows: A gets its Mem_init back and borrows.
        # (180 s: B gives back at the pace Badis shrinks, the slow start
        # and its max-average; one run on a fresh machine (stop 60) took
        # just over 120 s, B at 228 MiB and falling when it timed out)
        r2 = run_until(
            lambda r: (r.vms[a.uuid].role == 'client' and
                       r.vms[a.uuid].alloc_kb >= INIT + 16 * MIB and
                       r.vms[b.uuid].alloc_kb <= INIT - 64 * MIB),
            180, 'memory to go back from B to A')
        assert r2.vms[b.uuid].role == 'server'
        a.wait_stat(lambda s: s['memtotal_kb'] >= memtotal0[a.uuid] +
                    8 * MIB, timeout=30)
        b.wait_stat(lambda s: s['memtotal_kb'] <=
                    b_peak - 64 * MIB, timeout=30)

    # every balloon change was logged with the VM's name and a reason
    changes = [r for r in caplog.records
               if r.getMessage().startswith('Balloon VM ')]
    assert any('mut-b' in r.getMessage() and 'grant' in r.getMessage()
               and 'beyond Mem_init' in r.getMessage() for r in changes)
    assert any('mut-a' in r.getMessage() and 'reclaim' in r.getMessage()
               for r in changes)
    assert any('mut-a' in r.getMessage() and 'grant' in r.getMessage()
               for r in changes)
    # GMC_inform followed the reservoir: one message per change
    sizes = [i.reservoir_kb for i in gmc.informs]
    assert len(sizes) >= 3 and all(x != y for x, y in zip(sizes, sizes[1:]))
    assert sizes[-1] == ctl.reservoir_kb
    # the workloads never saw a wrong page
    for g in (a, b):
        assert all(d.get('errors', 0) == 0 for d in g.workload_lines())


def test_memwork_fixed_work_mode(guest_image):
    """The benchmark's completion times come from memwork.work=1: each
    step makes secs * 1000 / period_ms passes however long they take."""
    run = subprocess.run(
        [guest_image.memwork, 'memwork.sched=4x0.5,8x0.3',
         'memwork.period_ms=100', 'memwork.work=1'], capture_output=True,
        text=True, timeout=30)
    assert run.returncode == 0, run.stdout
    lines = parse_lines(run.stdout, 'MEMWORK')
    assert [d['passes'] for d in lines if d['event'] == 'end'] == [5, 3]
    assert lines[-1]['event'] == 'done' and lines[-1]['errors'] == 0
    assert 0.7 <= lines[-1]['t'] < 3
    bad = subprocess.run([guest_image.memwork, 'memwork.sched=4x0.5',
                          'memwork.work=1'], capture_output=True, text=True,
                         timeout=30)
    assert bad.returncode == 2 and 'work-needs-period_ms' in bad.stdout
