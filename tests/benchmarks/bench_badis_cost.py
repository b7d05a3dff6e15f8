"""Badis's cost on real guests (issue 20, item 2): short dedicated modes.

``--sampler``
    the sampler's cost as guest RAM grows: one TCG guest at a time of 256
    MiB, 1 GiB and 4 GiB (memfd RAM), memwork holding 60 % of its RAM
    resident and touched (one pass a second), the agent's estimation
    pipeline (Badis, smaps sampling: clear_refs + a read of the QEMU
    process's smaps every round) polled every 0.5 s with a round every
    ``--round-seconds``; the thread CPU time of every round, its mean with
    a 95 % interval per size, and the least-squares fit
    ``cost = a + b * GiB`` (with the log-log slope: 1 is linear) giving the
    cost at 16 GiB.
``--ten``
    the agent's and memstore's CPU with 10 real guests at once: 10 small
    TCG guests (256 MiB, memfd RAM, swap on one memmut-memstore), five
    running memwork seq over 100 MiB with room to spare, five Zipf-like
    (zipf:0.8) over 160 MiB on a 192 MiB balloon so that they swap a
    little (memstore computes reuse distances of real traffic); the
    agent's estimation pipeline over all 10 (Badis, smaps + Geiger from
    memstore) polled every ``--poll-seconds`` with rounds every
    ``--round-seconds`` for ``--seconds``. CPU from /proc/<pid>/stat
    (utime + stime) of this process (which runs nothing but the agent
    loop while measuring) and of memmut-memstore, beside the pipeline's
    own thread time; extrapolated to production rounds (60 s) from the
    per-round and per-poll costs.

Not part of CI. As root, under the TCG lock::

    flock /tmp/memmut-tcg.lock python -m tests.benchmarks.bench_badis_cost \\
        --sampler
    flock /tmp/memmut-tcg.lock python -m tests.benchmarks.bench_badis_cost \\
        --ten

Results: tests/benchmarks/results/badis_cost.json and badis_cost.md (each
mode updates its own part).
"""

import argparse
import json
import math
import os
import shutil
import statistics
import time

from tests.benchmarks import discipline
from tests.harness import badis_run

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, 'results')
MIB = 1024
TICK = os.sysconf('SC_CLK_TCK')


def proc_cpu_s(pid='self'):
    """utime + stime of a process, seconds (/proc/<pid>/stat)."""
    with open('/proc/%s/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / float(TICK)


def proc_rss_kb(pid):
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    return None


def _conf(daemon, round_s):
    return badis_run.agent_conf(daemon.memmut_options(), badis={
        'round_interval': round_s})


def _pipeline(conf, drv, guests):
    from memmut.agent.wss import pipeline
    from memmut.agent.wss import swap_monitors as swapmod
    from memmut.memstore import reuse
    by_uuid = {g.uuid: g for g in guests}

    def read(vm):
        g = by_uuid.get(vm.uuid)
        if g is None or getattr(g, 'swap_server', None) is None:
            return None
        return reuse.ReuseReading.from_stats(g.swap_server.stats(
            reset=True, percentile=conf.memstore.ghost_percentile))
    return pipeline.EstimationPipeline(
        conf, drv, estimator='badis', swap=swapmod.SwapMonitors(
            pipeline.default_swap_monitors(conf, read)))


def sampler_cost(factory, daemon, sizes, round_s, rounds):
    from memmut.virt.libvirt import driver
    out = []
    for size in sizes:
        data = int(size * 0.6)
        g = factory(memory_mib=size, schedule='%dx3600' % data, alloc='s',
                    loops=1, period_ms=1000, memfd=True, tb_cache_mib=64,
                    stat_period=1, wait_ready=True)
        try:
            g.wait_for(r'^MEMWORK step=0 ', 600)     # all of it touched
            conf = _conf(daemon, round_s)
            drv = driver.LibvirtDriver(conf)
            drv.connect()
            drv.set_stats_period(g.uuid, 1)
            pipe = _pipeline(conf, drv, [g])
            per_round, prev_rounds, t0 = [], 0, time.time()
            deadline = t0 + rounds * round_s * 3 + 60
            while len(per_round) < rounds + 1 and time.time() < deadline:
                vms = [v for v in drv.list_vms() if v.uuid == g.uuid]
                c0 = pipe.cpu_seconds
                pipe.estimate(vms, time.time())
                if pipe.rounds > prev_rounds:
                    per_round.append(pipe.cpu_seconds - c0)
                    prev_rounds = pipe.rounds
                time.sleep(0.5)
            pid = g.qemu_pid()
            rec = {'guest_mib': size, 'resident_data_mib': data,
                   'qemu_rss_mib': round((proc_rss_kb(pid) or 0) / MIB, 1),
                   # the first round only starts the sampling interval
                   'round_cpu_s': per_round[1:],
                   'first_round_cpu_s': per_round[:1]}
            if rec['round_cpu_s']:
                rec['summary'] = discipline.summarize(rec['round_cpu_s'])
            out.append(rec)
            print(json.dumps({k: v for k, v in rec.items()
                              if k != 'round_cpu_s'}), flush=True)
            drv.close()
        finally:
            g.destroy()
    return {'sizes': out, 'fit': fit(out), 'round_s': round_s}


def fit(recs):
    """Least squares cost = a + b * GiB over every round of every size,
    and the log-log slope between the smallest and largest size."""
    xs, ys = [], []
    for r in recs:
        for c in r.get('round_cpu_s') or []:
            xs.append(r['guest_mib'] / 1024.0)
            ys.append(c)
    if len(set(xs)) < 2:
        return None
    mx, my = statistics.mean(xs), statistics.mean(ys)
    b = (sum((x - mx) * (y - my) for x, y in zip(xs, ys)) /
         sum((x - mx) ** 2 for x in xs))
    a = my - b * mx
    means = [(r['guest_mib'], r['summary']['mean']) for r in recs
             if r.get('summary')]
    slope = None
    if len(means) >= 2 and means[0][1] > 0 and means[-1][1] > 0:
        slope = (math.log(means[-1][1] / means[0][1]) /
                 math.log(float(means[-1][0]) / means[0][0]))
    at16 = a + b * 16
    return {'a_s': a, 'b_s_per_gib': b, 'loglog_slope': slope,
            'cost_s_per_round_16gib': at16,
            'pct_core_1vm_16gib_60s_rounds': 100.0 * at16 / 60.0,
            'pct_core_10vms_16gib_60s_rounds': 1000.0 * at16 / 60.0}


def ten_guests(factory, daemon, round_s, poll_s, seconds, windows=1):
    from memmut.virt.libvirt import driver
    guests = []
    for i in range(10):
        swapping = i % 2 == 1
        guests.append(factory(
            name='cost-%d' % i, memory_mib=256,
            current_mib=192 if swapping else None,
            schedule='%dx3600' % (160 if swapping else 100), alloc='s',
            loops=1, period_ms=500, pattern='zipf:0.8' if swapping else None,
            swap='memstore', swap_mib=256, memfd=True, tb_cache_mib=32,
            stat_period=1, wait_ready=False))
    for g in guests:
        g.wait_ready(timeout=600)
    for g in guests:
        g.wait_for(r'^MEMWORK step=0 ', 600)
    conf = _conf(daemon, round_s)
    drv = driver.LibvirtDriver(conf)
    drv.connect()
    uuids = {g.uuid for g in guests}
    for g in guests:
        drv.set_stats_period(g.uuid, 1)
    pipe = _pipeline(conf, drv, guests)
    ms_pid = factory.memstore.pid

    def swap_out_kb():
        return sum(v.memory_stats.get('swap_out', 0)
                   for v in drv.list_vms() if v.uuid in uuids)
    # warm-up: one round each (the first round only starts sampling)
    t_end = time.time() + round_s * 1.5
    while time.time() < t_end:
        pipe.estimate([v for v in drv.list_vms() if v.uuid in uuids],
                      time.time())
        time.sleep(poll_s)
    load_before = discipline.loadavg()
    # ``windows`` back-to-back measurement windows on the same guests:
    # the interval is over windows (the spread of the machine and of the
    # workloads in time), not over independent boots
    per_window = []
    window_s = seconds / float(windows)
    for _ in range(windows):
        sw0 = swap_out_kb()
        a0, m0, p0, r0 = (proc_cpu_s(), proc_cpu_s(ms_pid),
                          pipe.cpu_seconds, pipe.rounds)
        t0 = time.time()
        polls = 0
        while time.time() - t0 < window_s:
            ts = time.time()
            pipe.estimate([v for v in drv.list_vms() if v.uuid in uuids],
                          ts)
            polls += 1
            time.sleep(max(0.0, poll_s - (time.time() - ts)))
        per_window.append(window_figures(
            wall=time.time() - t0, polls=polls,
            rounds=pipe.rounds - r0, agent_s=proc_cpu_s() - a0,
            pipeline_s=pipe.cpu_seconds - p0,
            memstore_s=proc_cpu_s(ms_pid) - m0,
            swapped_kb=swap_out_kb() - sw0))
    drv.close()
    out = combine_windows(per_window)
    out.update({
        'guests': 10, 'round_s': round_s, 'poll_s': poll_s,
        'production_note': '10 VMs, one Badis round per VM per 60 s, '
                           'one poll of all VMs per %g s (the per-poll '
                           'overhead: listing the domains and reading '
                           'their statistics, measured here for 10 VMs)'
                           % PROD_POLL_S,
        'load_before': load_before, 'load_after': discipline.loadavg(),
        'memstore_note': 'memstore serves the 10 swap exports and computes '
                         'their reuse distances; its CPU follows the swap '
                         'traffic (measured rate above), not the rounds'})
    return out


PROD_POLL_S = 5.0       # [agent] poll_interval default
PROD_ROUND_S = 60.0     # [badis] round_interval default
WINDOW_FIGURES = ('agent_pct_core', 'memstore_pct_core', 'per_round_cpu_s',
                  'per_poll_overhead_cpu_s', 'production_pct_core_10vms',
                  'swap_out_mib_per_s')


def window_figures(wall, polls, rounds, agent_s, pipeline_s, memstore_s,
                   swapped_kb):
    """The figures of one measurement window from its raw counters: CPU
    seconds of the agent loop (process), of the estimation pipeline
    (thread time, inside the agent's) and of memstore, over ``wall``
    seconds with ``polls`` polls and ``rounds`` Badis rounds; the
    production share is 10 rounds per 60 s plus one poll per 5 s."""
    per_round = pipeline_s / max(1, rounds)
    per_poll = max(0.0, agent_s - pipeline_s) / max(1, polls)
    return {
        'window_s': round(wall, 1), 'polls': polls, 'rounds': rounds,
        'agent_cpu_s': round(agent_s, 3),
        'agent_pct_core': round(100.0 * agent_s / wall, 3),
        'pipeline_cpu_s': round(pipeline_s, 3),
        'memstore_cpu_s': round(memstore_s, 3),
        'memstore_pct_core': round(100.0 * memstore_s / wall, 3),
        'swap_out_mib_per_s': round(swapped_kb / MIB / wall, 2),
        'per_round_cpu_s': per_round, 'per_poll_overhead_cpu_s': per_poll,
        'production_pct_core_10vms': round(100.0 * (
            10 * per_round / PROD_ROUND_S + per_poll / PROD_POLL_S), 4)}


def combine_windows(windows):
    """The whole run's figures (sums over the windows, as one window) plus
    ``windows`` and ``summary``: mean and 95 % interval over the windows
    of every figure in WINDOW_FIGURES."""
    wall = sum(w['window_s'] for w in windows)
    out = window_figures(
        wall=wall, polls=sum(w['polls'] for w in windows),
        rounds=sum(w['rounds'] for w in windows),
        agent_s=sum(w['agent_cpu_s'] for w in windows),
        pipeline_s=sum(w['pipeline_cpu_s'] for w in windows),
        memstore_s=sum(w['memstore_cpu_s'] for w in windows),
        swapped_kb=sum(w['swap_out_mib_per_s'] * w['window_s'] * MIB
                       for w in windows))
    out['windows'] = windows
    out['summary'] = {k: discipline.summarize([w[k] for w in windows])
                      for k in WINDOW_FIGURES}
    return out


def markdown(res):
    lines = ['# Badis\'s cost: sampler growth and 10 guests at once', '',
             'Generated by `tests/benchmarks/bench_badis_cost.py` (issue '
             '20); raw data in `badis_cost.json`. TCG guests on a 2-core '
             'machine shared with other sessions: CPU times include '
             'the effect of contention (a loaded core runs the same work '
             'slower, and cache misses grow).', '']
    s = res.get('sampler')
    if s:
        lines += ['## Sampler cost by guest size', '',
                  'One guest at a time, 60 %% of its RAM resident and touched '
                  'every second; thread CPU of each Badis round (smaps '
                  'sampling: clear_refs + smaps read of the QEMU process, '
                  'plus the estimator), the first round left out; rounds '
                  'every %g s. %s' % (s['round_s'], s.get('when', '')), '',
                  '| guest | QEMU RSS, MiB | CPU per round, ms | rounds |',
                  '|---|---|---|---|']
        for r in s['sizes']:
            sm = r.get('summary')
            lines.append('| %d MiB | %.0f | %s | %d |' % (
                r['guest_mib'], r['qemu_rss_mib'],
                discipline.fmt(sm, '.2f', scale=1000.0) if sm else 'n/a',
                len(r['round_cpu_s'])))
        f = s.get('fit')
        if f:
            lines += ['', 'Fit over every round: cost = %.2f ms + %.2f ms '
                      'per GiB of guest RAM (log-log slope %s: 1 is '
                      'linear). At 16 GiB: %.1f ms per round, i.e. %.3f %% '
                      'of a core for one VM and %.2f %% for 10 such VMs at '
                      'the production round (60 s); the issue\'s linear '
                      'guess from the 256 MiB figure was about 13 %% for 10 '
                      '16 GiB VMs.' % (
                          f['a_s'] * 1000, f['b_s_per_gib'] * 1000,
                          '%.2f' % f['loglog_slope']
                          if f['loglog_slope'] is not None else 'n/a',
                          f['cost_s_per_round_16gib'] * 1000,
                          f['pct_core_1vm_16gib_60s_rounds'],
                          f['pct_core_10vms_16gib_60s_rounds']), '']
    t = res.get('ten')
    if t:
        lines += ['## 10 guests at once', '',
                  '10 TCG guests of 256 MiB (5 seq over 100 MiB, 5 Zipf '
                  'over 160 MiB on 192 MiB balloons, swapping %.2f MiB/s in '
                  'all), swap on one memmut-memstore; the agent\'s '
                  'estimation pipeline over all 10, a poll every %g s, a '
                  'Badis round per VM every %g s, %.0f s measured (%d '
                  'polls, %d rounds). %s' % (
                      t['swap_out_mib_per_s'], t['poll_s'], t['round_s'],
                      t['window_s'], t['polls'], t['rounds'],
                      t.get('when', '')), '',
                  '| process | CPU s | % of a core |', '|---|---|---|',
                  '| agent loop (/proc/self/stat) | %.2f | %.2f |' % (
                      t['agent_cpu_s'], t['agent_pct_core']),
                  '| of which the estimation pipeline (thread time) | %.2f '
                  '| %.2f |' % (t['pipeline_cpu_s'], 100.0 *
                                t['pipeline_cpu_s'] / t['window_s']),
                  '| memmut-memstore (/proc/<pid>/stat) | %.2f | %.2f |' % (
                      t['memstore_cpu_s'], t['memstore_pct_core']), '',
                  'Per Badis round %.1f ms, per poll of the 10 VMs %.1f ms '
                  'outside the pipeline. At production settings (%s): '
                  '**%.3f %% of a core** for the agent (goal <= 1 %%); '
                  'memstore\'s share follows the swap traffic. Load average '
                  'before / after: %s / %s.' % (
                      t['per_round_cpu_s'] * 1000,
                      t['per_poll_overhead_cpu_s'] * 1000,
                      t['production_note'], t['production_pct_core_10vms'],
                      t['load_before'], t['load_after']), '']
        sm = t.get('summary')
        if sm:
            n = sm['production_pct_core_10vms']['n']
            lines += [
                'Over %d back-to-back windows of about %.0f s on the same '
                'guests (mean ± 95 %% half-width, Student t; the windows '
                'are repeats in time, not independent boots): production '
                'share %s (goal <= 1 %% of a core: **%s**); agent loop %s '
                'of a core, memstore %s; per round %s, per poll %s; '
                'swap-out %s.' % (
                    n, t['window_s'] / n,
                    discipline.fmt(sm['production_pct_core_10vms'], '.3f',
                                   unit=' %'),
                    discipline.verdict(sm['production_pct_core_10vms'],
                                       high=1.0),
                    discipline.fmt(sm['agent_pct_core'], '.2f', unit=' %'),
                    discipline.fmt(sm['memstore_pct_core'], '.2f',
                                   unit=' %'),
                    discipline.fmt(sm['per_round_cpu_s'], '.1f',
                                   scale=1000.0, unit=' ms'),
                    discipline.fmt(sm['per_poll_overhead_cpu_s'], '.1f',
                                   scale=1000.0, unit=' ms'),
                    discipline.fmt(sm['swap_out_mib_per_s'], '.2f',
                                   unit=' MiB/s')), '']
        lines += [
                  'The %d rounds are %d regular ones (every %g s per VM) '
                  'and about %d run at once on swap activity, which read '
                  'Geiger and do not restart the sampling interval: the '
                  'mean per round mixes both.' % (
                      t['rounds'], int(10 * t['window_s'] / t['round_s']),
                      t['round_s'], max(0, t['rounds'] - int(
                          10 * t['window_s'] / t['round_s']))), '']
        s = res.get('sampler')
        if s and s['sizes'] and s['sizes'][0].get('summary'):
            full = s['sizes'][0]['summary']['mean']
            lines += ['If every production round cost what a full sampling '
                      'round of a 256 MiB guest costs in the sampler mode '
                      '(%.1f ms, measured under a heavier load): %.3f %% of '
                      'a core for 10 VMs; with 16 GiB guests (the fit '
                      'above) %.2f %%.' % (
                          full * 1000, 100.0 * (
                              10 * full / 60.0 +
                              t['per_poll_overhead_cpu_s'] / 5.0),
                          100.0 * (10 * s['fit']['cost_s_per_round_16gib']
                                   / 60.0 + t['per_poll_overhead_cpu_s']
                                   / 5.0)
                          if s.get('fit') else float('nan'))]
        lines.append('')
    lines.append('Versions: %s.' % ', '.join(
        '%s %s' % kv for kv in sorted(res.get('versions', {}).items())
        if kv[1] is not None))
    return '\n'.join(lines) + '\n'


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--sampler', action='store_true')
    p.add_argument('--sizes', default='256,1024,4096')
    p.add_argument('--rounds', type=int, default=8)
    p.add_argument('--ten', action='store_true')
    p.add_argument('--seconds', type=float, default=100.0)
    p.add_argument('--windows', type=int, default=5,
                   help='--ten: measurement windows the --seconds are cut '
                        'into (the interval is over them)')
    p.add_argument('--round-seconds', type=float, default=2.0)
    p.add_argument('--poll-seconds', type=float, default=1.0)
    p.add_argument('--out', default=RESULTS)
    p.add_argument('--report', action='store_true',
                   help='run nothing: rewrite badis_cost.md from the json')
    args = p.parse_args(argv)
    path = os.path.join(args.out, 'badis_cost.json')
    res = {}
    if os.path.exists(path):
        with open(path) as f:
            res = json.load(f)
    if args.report:
        with open(os.path.join(args.out, 'badis_cost.md'), 'w') as f:
            f.write(markdown(res))
        return
    from tests.harness import bed
    res['versions'] = discipline.versions()
    when = 'Run %s UTC, load average before %s.' % (
        time.strftime('%Y-%m-%d %H:%M', time.gmtime()),
        discipline.loadavg())
    daemon, img, work, factory = bed.start('bench-badis-cost-')
    try:
        if args.sampler:
            res['sampler'] = sampler_cost(
                factory, daemon, [int(x) for x in args.sizes.split(',')],
                args.round_seconds, args.rounds)
            res['sampler']['when'] = when
            res['sampler']['load_after'] = discipline.loadavg()
        if args.ten:
            res['ten'] = ten_guests(factory, daemon, args.round_seconds,
                                    args.poll_seconds, args.seconds,
                                    args.windows)
            res['ten']['when'] = when
    finally:
        factory.cleanup()
        daemon.stop()
        shutil.rmtree(work, ignore_errors=True)    # guest disks: ~0.8 GiB
    with open(path, 'w') as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(args.out, 'badis_cost.md'), 'w') as f:
        f.write(markdown(res))
    print(markdown(res))


if __name__ == '__main__':
    main()
