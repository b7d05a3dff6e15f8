"""Benchmark: local memory mutualization, the scenario of seed 004 ch.3.

Three real TCG guests, the seed's 1 GiB VMs scaled by 1/4: booked 384 MiB,
started (Mem_init) at 256 MiB, on a VM budget of 768 MiB (the sum of their
Mem_init) -- less than the sum of their peaks. One flat working set
(WRF-like) and two fluctuating ones (BLAS- and GRASS-like) that peak alone
and together (scenario minutes 8-11 and 20-22), 30 scenario minutes
compressed to ``--minute-seconds`` each. The workload is memwork in fixed
work mode: each step makes a fixed number of passes over its working set, so
a guest that swaps finishes late and its completion time is measured.

Every guest has memfd-backed RAM and its swap disk on an export of
memmut-memstore, as in production. Run three ways -- static allocation
(balloons stay at Mem_init), dynamic with ``equal``, dynamic with
``proportional`` -- and write tests/benchmarks/results/mutualization.json,
the summary mutualization.md and the figures mutualization_fig3_{3,4,5,6}.png
(``--scenario shortage``: mutualization_shortage.*).

The dynamic modes run the agent's own path, as
``memmut.agent.manager.AgentManager.poll_once`` does: at every poll
(``--poll-seconds``) the estimation pipeline
(``memmut.agent.wss.pipeline.EstimationPipeline``, estimator ``badis``: smaps
access sampling of the guest RAM + Geiger from memstore's reuse distances
of the guest's swap export; a Badis round every ``--round-seconds`` per VM,
at once when a VM swaps in between) feeds ``LocalController.step`` over the
real libvirt driver. The static run runs the same pipeline in shadow, for
the record.

Run by hand, as root, on a machine with the functional-test prerequisites
(tools/test-setup.sh); about 25 minutes (take the TCG lock on a shared
machine)::

    flock /tmp/memmut-tcg.lock /tmp/venv/bin/python -m \\
        tests.benchmarks.bench_mutualization --minute-seconds 10

Not part of CI.
"""

import argparse
import json
import logging
import os
import platform
import re
import shutil
import signal
import tempfile
import time

from memmut.agent.wss import pipeline
from memmut.agent.mutualization import local_controller
from memmut.agent.wss import swap_monitors as swapmod
from memmut.memstore import reuse
from memmut.virt import driver as virt_driver
from memmut.virt.libvirt import driver
from tests import common
from tests.benchmarks import discipline
from tests.harness import mutualization as mut_support
from tests.harness import fixtures
from tests.harness import guest as guestmod
from tests.harness import image
from tests.harness import libvirtd as libvirtd_mod

LOG = logging.getLogger('bench_mutualization')
MIB = 1024
HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, 'results')

BOOKED_MIB = 384
INIT_MIB = 256
BUDGET_MIB = 768
ROUND = 2.0                     # Badis round ([badis] round_interval)
POLL = 0.5                      # agent poll: estimates + Algorithm 1
RECLAIM_WAIT = 1.0              # [mutualization] reclaim_wait
PERIOD_MS = 500

# (scenario minutes, working set MiB); 30 minutes each.
SCENARIO = {
    'blas': [(3, 90), (1, 140), (1, 200), (2, 250), (1, 200), (3, 190),
             (3, 110), (3, 90), (2, 130), (3, 150), (2, 130), (6, 100)],
    'grass': [(3, 120), (5, 80), (3, 185), (3, 120), (3, 240), (3, 90),
              (2, 150), (2, 225), (6, 100)],
    'wrf': [(30, 110)],
}
# The same shapes with higher joint peaks, so that at minutes 8-11 and 22-24
# the total working set exceeds the VM budget minus the guest kernels (537
# MiB) by 38 and 18 MiB, as in the seed's Fig. 3.3 (the default scenario
# exceeds it only with the headroom added).
SCENARIO_SHORTAGE = {
    'blas': [(3, 90), (1, 140), (1, 200), (2, 250), (1, 200), (3, 230),
             (3, 110), (3, 90), (2, 130), (3, 150), (2, 180), (6, 100)],
    'grass': [(3, 120), (5, 80), (3, 235), (3, 120), (3, 240), (3, 90),
              (2, 150), (2, 265), (6, 100)],
    'wrf': [(30, 110)],
}
# The third scenario (issue 20): the shortage scenario's sizes, but every
# guest touches its data Zipf-like (memwork.pattern=zipf:0.8, the pattern
# of bench_patterns' zipf0.8: each pass draws as many page touches as the
# step has pages, page of rank r with probability ~ 1/r^0.8, the ranks
# scattered over the mapping) instead of sweeping all of it every pass: a
# non-cyclic pattern, so LRU keeps the hot pages and a VM short of memory
# swaps its cold tail, not its whole working set.
SCENARIOS = {'ch3': SCENARIO, 'shortage': SCENARIO_SHORTAGE,
             'zipf': SCENARIO_SHORTAGE}
PATTERNS = {'zipf': 'zipf:0.8'}
PATTERN = None                  # memwork.pattern of the current scenario
PREFIX = 'mutualization'        # of the result files' names
ESTIMATOR = ('memmut.agent.wss.pipeline.EstimationPipeline, estimator badis '
             '(as AgentManager.poll_once): smaps access sampling of the '
             'memfd guest RAM + Geiger from the memmut-memstore reuse '
             'distances of the guest\'s swap export, moving average of 3 '
             'estimates, maximum over one scenario minute')
VM_LABEL = {'blas': 'VM1 (BLAS-like)', 'grass': 'VM2 (GRASS-like)',
            'wrf': 'VM3 (WRF-like)'}
SEED = {
    'swap_reduction_x': 4.2,
    'speedup_equal_pct': 14, 'speedup_proportional_pct': 17,
    'table_3_1_equal': [[8, 'VM3', 'VM1, VM2', '104, 104'],
                        [9, 'VM3', 'VM1, VM2', '105, 105'],
                        [10, 'VM3', 'VM1, VM2', '105, 105'],
                        [21, 'VM1, VM3', 'VM2', '58, 220'],
                        [22, 'VM1, VM3', 'VM2', '62, 221']],
    'table_3_2_proportional': [[8, 'VM3', 'VM1, VM2', '140, 68'],
                               [9, 'VM3', 'VM1, VM2', '96, 115'],
                               [10, 'VM3', 'VM1, VM2', '88, 122'],
                               [21, 'VM1, VM3', 'VM2', '58, 220'],
                               [22, 'VM1, VM3', 'VM2', '62, 221']],
}


def schedule(name, minute_s):
    return ','.join('%dx%g' % (mib, mins * minute_s)
                    for mins, mib in SCENARIO[name])


def make_conf(libvirtd, policy, minute_s):
    """The agent's configuration for one run: Badis with smaps sampling
    (TCG guests, memfd RAM) and Geiger from memstore, Algorithm 1 on a
    768 MiB VM budget."""
    return common.private_conf(
        DEFAULT={'host': 'bench-host'},
        libvirt=dict(libvirtd.memmut_options(), domain_type='qemu'),
        agent=dict(wss_estimator='badis', sampling_backend='smaps',
                   balloon_actuation=True, poll_interval=POLL),
        mutualization=dict(enabled=True, policy=policy,
                           init_source='adopted',
                           budget_kb=BUDGET_MIB * MIB, host_reserve_kb=0,
                           min_change_kb=8 * MIB, reclaim_wait=RECLAIM_WAIT,
                           settle_timeout=20.0),
        badis=dict(headroom_kb=24 * MIB, headroom_fraction=0.0,
                   floor_kb=128 * MIB, max_step_fraction=0.5,
                   round_interval=ROUND, round_tolerance=0.1,
                   react_to_swapping=True, swap_in_threshold_kb=1024,
                   average_window=3, time_slice=minute_s))


def memstore_monitor(by_uuid, percentile):
    """Geiger's reading function: vm.uuid -> that guest's memstore swap
    export (reuse distances of the interval since the last reading)."""
    def read(vm):
        g = by_uuid.get(vm.uuid)
        if g is None or g.swap_server is None:
            return None
        return reuse.ReuseReading.from_stats(g.swap_server.stats(
            reset=True, percentile=percentile))
    return read


def wait_fresh_stats(drv, by_uuid, timeout=30.0):
    """Wait until every guest's balloon statistics show its first step's
    working set in use. The statistics are sampled by the guest every
    second; read at the instant the workloads start they can predate the
    workload's allocation, and Badis's first round calibrates its
    pinned-page correction from them (seen in the first runs of the
    stand-in estimator: two VMs reclaimed to their floor at the first
    round, 0.5 GiB of start-up swapping that belongs to the harness, not
    to the scenario)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        stale = []
        for v in drv.list_vms():
            if v.uuid not in by_uuid:
                continue
            st = v.memory_stats
            used = st.get('available', 0) - st.get('unused', 0)
            if used < SCENARIO[by_uuid[v.uuid]][0][1] * MIB:
                stale.append(by_uuid[v.uuid])
        if not stale:
            return
        time.sleep(0.5)
    LOG.warning('balloon statistics of %s still predate their workload '
                'after %.0f s', ', '.join(stale), timeout)


_STEP = re.compile(r'^MEMWORK (end )?step=(\d+) wss_mib=(\d+)', re.M)
_DONE = re.compile(r'^MEMWORK (done|exit)\b', re.M)


def current_wss_mib(log_text, steps):
    """The working set the guest's schedule asks for now, from its
    console: the step of the last ``MEMWORK step=`` line, or the next step
    once that step's ``end`` line is out (memwork prints a step's first
    line only after its first pass, which takes long when the guest
    swaps). Fixed work mode: a swapping guest falls behind the wall-clock
    schedule, so the console, not the clock, says where it is. 0 once the
    workload is done."""
    if _DONE.search(log_text):
        return 0
    found = _STEP.findall(log_text)
    if not found:
        return steps[0][1]
    end, step, mib = found[-1]
    if end:
        return steps[min(int(step) + 1, len(steps) - 1)][1]
    return int(mib)


def _estimate_record(e):
    rec = {'wss_kb': e.wss_kb, 'max_avg_kb': e.max_avg_kb,
           'est_demand_kb': e.demand_kb, 'estimate_mode': e.mode,
           'source': e.source, 'detail': e.detail, 'fresh': e.fresh}
    if e.transition:
        rec['transition'] = e.transition
    return rec


# a run stops at this many times the scenario's nominal length
DEADLINE_FACTOR = 4.0


def deadline_s(mode, minute_s, static_factor=None):
    """How long a run may last: DEADLINE_FACTOR x the nominal 30
    scenario minutes, or ``static_factor`` x for the static mode (which
    swaps at every pass and would run to any deadline: a shorter one
    saves lock time, and its swap total and completion time are then
    lower bounds, marked "(>=)")."""
    factor = static_factor if (mode == 'static' and static_factor) \
        else DEADLINE_FACTOR
    return 30 * minute_s * factor


def run_mode(mode, daemon, img, workdir, minute_s, deadline=None):
    """One run; returns its record."""
    LOG.info('=== %s ===', mode)
    factory = fixtures.GuestFactory(daemon, img, workdir)
    policy = None if mode == 'static' else mode
    conf = make_conf(daemon, policy or 'equal', minute_s)
    deadline = deadline or deadline_s(mode, minute_s)
    rec = {'mode': mode, 'timeline': [], 'rounds': [],
           'deadline_s': deadline}
    try:
        guests = {}
        for name in SCENARIO:
            # swap on a memstore export in every mode (Geiger's reuse
            # distances; the same swap device for static and dynamic)
            guests[name] = factory(
                name='%s-%s' % (mode[:4], name), memory_mib=BOOKED_MIB,
                current_mib=INIT_MIB, schedule=schedule(name, minute_s),
                alloc='d', loops=1, period_ms=PERIOD_MS,
                cmdline='memwork.work=1', swap='memstore', swap_mib=512,
                memfd=True, tb_cache_mib=64, stat_period=1,
                pattern=PATTERN, wait_ready=False)
        for g in guests.values():
            g.wait_ready()
        for g in guests.values():
            g.wait_for(r'^MEMWORK step=0 ', 60)
        by_uuid = {g.uuid: n for n, g in guests.items()}
        # what each guest cannot give up (kernel, init): Mem_init minus
        # MemAvailable at boot; the true WSS in balloon terms is the
        # schedule's working set plus this
        rec['guest_base_kb'] = {
            n: INIT_MIB * MIB - g.wait_stat(
                lambda st: st.get('memavail_kb', 0) > 0)['memavail_kb']
            for n, g in guests.items()}
        drv = driver.LibvirtDriver(conf)
        drv.connect()
        for g in guests.values():
            drv.set_stats_period(g.uuid, 1)
        wait_fresh_stats(drv, by_uuid)
        # The agent's estimation path (AgentManager.poll_once): Badis with
        # smaps sampling and Geiger from each guest's memstore export. In
        # the static run it only records what it would have estimated.
        estimation = pipeline.EstimationPipeline(
            conf, drv, estimator='badis', swap=swapmod.SwapMonitors(
                pipeline.default_swap_monitors(conf, memstore_monitor(
                    {g.uuid: g for g in guests.values()},
                    conf.memstore.ghost_percentile))))
        ctl = None
        if policy:
            ctl = local_controller.LocalController(
                conf, drv, mut_support.RecordingController())
        t0 = time.time()
        done = {}
        stop = t0 + deadline
        while len(done) < len(guests) and time.time() < stop:
            started = time.time()
            try:
                vms = [v for v in drv.list_vms() if v.uuid in by_uuid]
            except virt_driver.HypervisorUnavailable as e:
                LOG.warning('poll skipped: %s', e)
                time.sleep(POLL)
                continue
            now = time.time()
            row = {'t': round(now - t0, 2)}
            logs = {n: g.log() for n, g in guests.items()}
            for v in vms:
                n = by_uuid[v.uuid]
                row[n] = {'balloon_kb': v.balloon_kb,
                          'swap_out_kb': v.memory_stats.get('swap_out', 0),
                          'swap_in_kb': v.memory_stats.get('swap_in', 0),
                          'wss_mib': current_wss_mib(logs[n], SCENARIO[n])}
            estimates = estimation.estimate(vms, now)
            per_vm = {by_uuid[u]: _estimate_record(e)
                      for u, e in estimates.items() if u in by_uuid}
            rnd = {'t': row['t'], 'vms': per_vm}
            if ctl is not None:
                result = ctl.step(vms, estimates, now)
                ctl.books.check()
                assert (mut_support.held_kb(ctl, drv.list_vms()) <=
                        ctl.books.budget_kb + 4)
                plan = result.plan
                for u, s in result.vms.items():
                    if u not in by_uuid:
                        continue
                    per_vm.setdefault(by_uuid[u], {}).update({
                        'role': s.role, 'alloc_kb': s.alloc_kb,
                        'lent_kb': s.lent_kb, 'borrowed_kb': s.borrowed_kb,
                        'demand_kb': plan.demands.get(u) if plan else None,
                        'need_kb': plan.needs.get(u) if plan else None,
                        'unmet_kb': plan.unmet_kb.get(u, 0) if plan
                        else 0})
                if result.skipped:
                    rnd['skipped'] = {by_uuid.get(u, u): why
                                      for u, why in result.skipped.items()}
                rnd.update({
                    'pool_kb': ctl.books.pool_kb,
                    'reservoir_kb': result.reservoir_kb,
                    'actions': [{'vm': by_uuid.get(a.uuid),
                                 'kind': a.kind, 'from_kb': a.from_kb,
                                 'to_kb': a.to_kb,
                                 'planned_to_kb': a.planned_to_kb,
                                 'ok': a.ok}
                                for a in result.actions]})
            rec['rounds'].append(rnd)
            rec['timeline'].append(row)
            for n in guests:
                if n not in done:
                    lines = [d for d in guestmod.parse_lines(
                        logs[n], 'MEMWORK') if d['event'] in ('done',
                                                              'exit')]
                    if lines:
                        done[n] = lines[0]
            time.sleep(max(0.0, POLL - (time.time() - started)))
        rec['completion_s'] = {n: d.get('t') for n, d in done.items()}
        rec['errors'] = {n: d.get('errors') for n, d in done.items()}
        rec['unfinished'] = sorted(set(guests) - set(done))
        vms = {by_uuid[v.uuid]: v for v in drv.list_vms()
               if v.uuid in by_uuid}
        rec['swap_out_kb'] = {n: v.memory_stats.get('swap_out', 0)
                              for n, v in vms.items()}
        rec['swap_in_kb'] = {n: v.memory_stats.get('swap_in', 0)
                             for n, v in vms.items()}
        rec['guest_pswpout_kb'] = {}
        for n, g in guests.items():
            stats = guestmod.stat_lines(g.log())
            if stats:
                rec['guest_pswpout_kb'][n] = stats[-1]['pswpout'] * 4
        rec['swap_out_total_kb'] = sum(rec['swap_out_kb'].values())
        rec['badis_rounds'] = estimation.rounds
        rec['estimation_cpu_s'] = round(estimation.cpu_seconds, 3)
        if ctl is not None:
            rec['gmc_informs'] = len(ctl.controller.informs)
        drv.close()
    finally:
        factory.cleanup()
    LOG.info('%s: completion %s, swapped out %s KiB', mode,
             rec.get('completion_s'), rec.get('swap_out_total_kb'))
    return rec


def shortage_table(rec, minute_s):
    """Per scenario minute with unmet demand (pool empty): which VMs lend
    (servers, with what they lent) and which borrow (clients, with what
    they hold beyond Mem_init), MiB -- the layout of Tables 3.1/3.2."""
    by_minute = {}
    for rnd in rec['rounds']:
        if not any(v['unmet_kb'] for v in rnd['vms'].values()):
            continue
        by_minute[int(rnd['t'] // minute_s)] = rnd     # last of the minute
    rows = []
    name = {'blas': 'VM1', 'grass': 'VM2', 'wrf': 'VM3'}
    for minute, rnd in sorted(by_minute.items()):
        vms = rnd['vms']
        servers = sorted(n for n, v in vms.items() if v['role'] == 'server')
        clients = sorted(n for n, v in vms.items() if v['role'] == 'client')
        rows.append({
            'minute': minute,
            'from': ', '.join(name[n] for n in servers),
            'lent_mib': [vms[n]['lent_kb'] // MIB for n in servers],
            'to': ', '.join(name[n] for n in clients),
            'borrowed_mib': [vms[n]['borrowed_kb'] // MIB for n in clients],
            'unmet_mib': {name[n]: v['unmet_kb'] // MIB
                          for n, v in vms.items() if v['unmet_kb']},
            # the part of it that is working set, not headroom
            'unmet_wss_mib': {
                name[n]: max(0, v['need_kb'] - v['alloc_kb']) // MIB
                for n, v in vms.items()
                if v['unmet_kb'] and v.get('need_kb') is not None},
            'pool_mib': rnd['pool_kb'] // MIB})
    return rows


def estimate_summary(rec, round_s):
    """Per VM, what the estimation pipeline did in a run: Badis rounds
    (fresh estimates; those that came sooner than the round interval ran
    on swap activity), the share of each Badis mode and source among
    them, and the mean |WSS estimate - true WSS| over every poll (the
    estimate in force; true WSS = the schedule's working set the console
    shows + the guest's base), in MiB, with the polls where the true WSS
    exceeded the balloon (S_less)."""
    base = rec.get('guest_base_kb', {})
    out = {}
    for n in SCENARIO:
        fresh, early, modes, sources = 0, 0, {}, {}
        errs, errs_less, last_t = [], [], None
        for rnd, row in zip(rec['rounds'], rec['timeline']):
            e = rnd['vms'].get(n)
            if e is None or 'wss_kb' not in e or n not in row:
                continue
            if e['fresh']:
                fresh += 1
                if last_t is not None and rnd['t'] - last_t < 0.9 * round_s:
                    early += 1
                last_t = rnd['t']
                modes[e['estimate_mode']] = modes.get(
                    e['estimate_mode'], 0) + 1
                src = e['source'] + (' (%s)' % e['detail']
                                     if e.get('detail') else '')
                sources[src] = sources.get(src, 0) + 1
            if n in base and row[n].get('wss_mib'):      # not yet done
                truth = row[n]['wss_mib'] * MIB + base[n]
                err = abs(e['wss_kb'] - truth) / MIB
                errs.append(err)
                if truth > row[n]['balloon_kb']:
                    errs_less.append(err)
        out[n] = {
            'badis_rounds': fresh, 'on_swap_activity': early,
            'mode_pct': {m: round(100.0 * c / max(1, fresh), 1)
                         for m, c in sorted(modes.items())},
            'sources': dict(sorted(sources.items(), key=lambda kv: -kv[1])),
            'mean_abs_error_mib': (round(sum(errs) / len(errs), 1)
                                   if errs else None),
            'polls_S_less': len(errs_less),
            'S_less_mean_abs_error_mib': (
                round(sum(errs_less) / len(errs_less), 1)
                if errs_less else None),
            'polls': len(errs)}
    return out


def role_counts(rec, minute_s):
    out = []
    for rnd in rec['rounds']:
        roles = [v['role'] for v in rnd['vms'].values()]
        out.append({'minute': round(rnd['t'] / minute_s, 2),
                    'servers': roles.count('server'),
                    'clients': roles.count('client')})
    return out


def setup_record(poll_s, minute_s, scenario):
    """The set-up every result file records (one run or a series)."""
    return {'booked_mib': BOOKED_MIB, 'mem_init_mib': INIT_MIB,
            'budget_mib': BUDGET_MIB, 'round_s': ROUND, 'poll_s': poll_s,
            'reclaim_wait_s': RECLAIM_WAIT, 'minute_s': minute_s,
            'memwork_period_ms': PERIOD_MS, 'scenario': scenario,
            'pattern': PATTERN or 'seq', 'scenario_minutes_mib': SCENARIO,
            'estimator': ESTIMATOR,
            'guest': 'TCG, 1 vCPU, memfd RAM, TB cache 64 MiB, 512 MiB '
                     'swap disk on a memmut-memstore export (all modes)',
            'headroom_mib': 24, 'floor_mib': 128, 'max_step_fraction': 0.5}


def nominal_s(minute_s):
    return {n: sum(m for m, _ in steps) * minute_s
            for n, steps in SCENARIO.items()}


def plots(results, minute_s, out):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    colors = {'blas': 'tab:red', 'grass': 'tab:blue', 'wrf': 'black'}
    # Fig 3.3: memory behaviour (schedule + measured balloons)
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
    ax = axes[0]
    total = [0] * 30
    for n, steps in SCENARIO.items():
        xs, ys, t = [], [], 0
        for mins, mib in steps:
            xs += [t, t + mins]
            ys += [mib, mib]
            for m in range(t, t + mins):
                total[m] += mib
            t += mins
        ax.plot(xs, ys, color=colors[n], label=VM_LABEL[n] + ' WSS')
    ax.step(range(31), total + [total[-1]], where='post',
            color='deepskyblue', label='total WSS')
    overhead = results['guest_overhead_mib']
    ax.axhline(BUDGET_MIB - 3 * overhead, color='green',
               label='VM budget minus guest kernels (%d MiB)'
               % (BUDGET_MIB - 3 * overhead))
    ax.axhline(INIT_MIB - overhead, color='grey', ls=':',
               label='Mem_init minus guest kernel')
    ax.set_xlabel('scenario minute')
    ax.set_ylabel('MiB')
    ax.set_title('Working sets of the scenario')
    ax.legend(fontsize=7)
    ax = axes[1]
    for mode, ls in (('equal', '-'), ('proportional', '--')):
        rec = results['runs'][mode]
        for n in SCENARIO:
            ts = [r['t'] / minute_s for r in rec['timeline'] if n in r]
            bs = [r[n]['balloon_kb'] / MIB for r in rec['timeline']
                  if n in r]
            ax.plot(ts, bs, ls, color=colors[n], lw=1,
                    label='%s %s' % (VM_LABEL[n].split()[0], mode))
    ax.axhline(INIT_MIB, color='grey', ls=':', label='Mem_init')
    ax.set_xlabel('scenario minute (wall time / %g s)' % minute_s)
    ax.set_ylabel('balloon size, MiB')
    ax.set_title('Allocations under mutualization')
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(os.path.join(out, PREFIX + '_fig3_3.png'), dpi=110)
    plt.close(fig)

    modes = ['static', 'equal', 'proportional']
    # Fig 3.4: swapped-out memory
    fig, ax = plt.subplots(figsize=(7, 4.5))
    bottom = [0] * 3
    reps = results.get('repeat_records')
    rsum = results.get('repeat_summary')

    def per_vm_swap(m, n):
        if not reps:
            return results['runs'][m]['swap_out_kb'].get(n, 0) / MIB
        xs = [ln['record']['swap_out_kb'].get(n, 0) / MIB for ln in reps
              if ln['mode'] == m]
        return sum(xs) / len(xs) if xs else 0

    for n in SCENARIO:
        vals = [per_vm_swap(m, n) for m in modes]
        ax.bar(modes, vals, bottom=bottom, color=colors[n],
               label=VM_LABEL[n])
        bottom = [a + b for a, b in zip(bottom, vals)]
    for i, v in enumerate(bottom):
        hw = None
        if rsum and modes[i] in rsum['swap_out_total_mib']:
            hw = rsum['swap_out_total_mib'][modes[i]]['half_width']
        if hw is not None:
            ax.errorbar([i], [v], yerr=[hw], color='k', capsize=6)
        ax.text(i, v + (hw or 0), '%.0f MiB' % v, ha='center',
                va='bottom')
    ax.set_ylabel('swapped-out memory, MiB')
    ax.set_title('Swapped-out memory, static vs dynamic' + (
        ' (mean of %d repeats, 95 %% interval)' % len(rsum['repeats'])
        if rsum else ''), fontsize=9 if rsum else None)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, PREFIX + '_fig3_4.png'), dpi=110)
    plt.close(fig)

    # Fig 3.5: completion times
    fig, ax = plt.subplots(figsize=(8, 4.5))
    width = 0.25
    names = list(SCENARIO)
    for i, m in enumerate(modes):
        vals = [(results['runs'][m]['completion_s'].get(n) or 0)
                for n in names]
        errs = None
        if rsum:
            cs = rsum['completion_s'].get(m, {})
            vals = [cs[n]['mean'] if n in cs else 0 for n in names]
            errs = [(cs[n]['half_width'] or 0) if n in cs else 0
                    for n in names]
        xs = [j + (i - 1) * width for j in range(len(names))]
        ax.bar(xs, vals, width, label=m, yerr=errs, capsize=4)
        for x, v in zip(xs, vals):
            ax.text(x, v, '%.0f' % v, ha='center', va='bottom', fontsize=7)
    nominal = nominal_s(minute_s)
    ax.plot([j for j in range(len(names))], [nominal[n] for n in names],
            'k_', markersize=40, label='nominal (no swapping)')
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([VM_LABEL[n] for n in names])
    ax.set_ylabel('completion time, s')
    ax.set_title('Workload completion time' + (
        ' (mean of %d repeats, 95 %% interval)' % len(rsum['repeats'])
        if rsum else ''))
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, PREFIX + '_fig3_5.png'), dpi=110)
    plt.close(fig)

    # Fig 3.6: servers / clients over time
    fig, axes = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
    for ax, m in zip(axes, ('equal', 'proportional')):
        counts = results['runs'][m]['role_counts']
        ts = [c['minute'] for c in counts]
        ax.step(ts, [c['servers'] for c in counts], where='post',
                color='tab:green', label='servers')
        ax.step(ts, [c['clients'] for c in counts], where='post',
                color='tab:orange', label='clients')
        ax.set_ylabel('VMs (%s)' % m)
        ax.set_yticks([0, 1, 2, 3])
        ax.legend(loc='upper right')
    axes[-1].set_xlabel('scenario minute')
    axes[0].set_title('Server and client VMs over time')
    fig.tight_layout()
    fig.savefig(os.path.join(out, PREFIX + '_fig3_6.png'), dpi=110)
    plt.close(fig)


def swap_in_deficit_kb(rec):
    """Swapped out while the guests' true working sets (the schedule's
    step each console shows + each guest's base) added up to more than
    the VM budget, when no division of the budget could stop every VM
    from swapping. None for runs recorded without the working sets."""
    base = rec.get('guest_base_kb')
    if not base:
        return None
    total, prev = 0, None
    for row in rec['timeline']:
        if not all(n in row and 'wss_mib' in row[n] for n in SCENARIO):
            continue
        out = {n: row[n]['swap_out_kb'] for n in SCENARIO}
        need = sum(row[n]['wss_mib'] * MIB + base[n] for n in SCENARIO
                   if row[n]['wss_mib'])
        if prev is not None and need > BUDGET_MIB * MIB:
            total += sum(max(0, out[n] - prev[n]) for n in SCENARIO)
        prev = out
    return total


def summarize(results, minute_s):
    runs = results['runs']
    static = runs['static']
    nominal = nominal_s(minute_s)
    summary = {}
    for m in ('equal', 'proportional'):
        r = runs[m]
        sw = r['swap_out_total_kb']
        summary[m] = {
            'swap_reduction_x': (round(static['swap_out_total_kb'] / sw, 2)
                                 if sw else None),
            'swap_out_total_mib': round(sw / MIB, 1),
            'speedup_pct': {
                n: round(100.0 * (static['completion_s'][n] -
                                  r['completion_s'][n]) /
                         static['completion_s'][n], 1)
                for n in SCENARIO
                if static['completion_s'].get(n) and
                r['completion_s'].get(n)},
        }
    summary['static'] = {
        'swap_out_total_mib': round(static['swap_out_total_kb'] / MIB, 1)}
    for m in ('static', 'equal', 'proportional'):
        deficit = swap_in_deficit_kb(runs[m])
        summary[m]['swap_out_in_deficit_mib'] = (
            None if deficit is None else round(deficit / MIB, 1))
    summary['nominal_s'] = nominal
    summary['goals'] = {
        'swap_reduction_x_at_least': 8,
        'starved_speedup_pct_at_least': 20,
        'met': {m: bool(summary[m]['swap_reduction_x'] and
                        summary[m]['swap_reduction_x'] >= 8 and all(
                            summary[m]['speedup_pct'].get(n, 0) >= 20
                            for n in ('blas', 'grass')))
                for m in ('equal', 'proportional')}}
    return summary


HAND_WRITTEN = '<!-- hand-written notes below this line are kept -->'


def _fmt(v, pattern='%.1f'):
    return '-' if v is None else pattern % v


def versions_sentence(results):
    """The versions a results file records, or where its runs ran when
    it was written before versions were recorded."""
    # (a series aggregate keeps them in its discipline record)
    v = results.get('versions')
    which = 'Versions'
    if not v and (results.get('discipline') or {}).get('versions'):
        v = results['discipline']['versions']
        which = 'Versions of the series\' latest run (each run\'s are in ' \
            'the log)'
    if v:
        return '%s: memmut %s%s, memstore %s, QEMU %s, libvirt %s, ' \
            'host kernel %s.' % (
                which, (v.get('memmut_commit') or '?')[:10],
                ' (dirty tree)' if v.get('memmut_dirty') else '',
                (v.get('memstore_commit') or '?')[:10], v.get('qemu'),
                v.get('libvirt'), v.get('kernel'))
    return 'Versions: not recorded; %s.' % (
        results.get('versions_not_recorded') or 'where it ran is not known')


def markdown(results, minute_s):
    """The summary of a complete results file, as markdown."""
    runs, summ, seed = results['runs'], results['summary'], results['seed']
    st = runs['static']
    setup = results['setup']
    totals = [0] * 30
    for steps in SCENARIO.values():
        t = 0
        for mins, mib in steps:
            for m in range(t, t + mins):
                totals[m] += mib
            t += mins
    scen = setup.get('scenario', 'ch3')
    title = {'ch3': 'the scenario of seed 004 ch.3',
             'shortage': 'shortage scenario (the working sets alone '
                         'exceed the budget)',
             'zipf': 'shortage sizes with Zipf-like (non-cyclic) access'}
    out = ['# Local memory mutualization: %s' % title.get(scen, scen), '',
           'Generated by `%s` (%s); raw data in `%s.json`, '
           'figures `%s_fig3_{3,4,5,6}.png`.'
           % (results['command'], results['started'], PREFIX, PREFIX), '',
           versions_sentence(results), '',
           '## Set-up', '',
           '* Three real TCG guests (1 vCPU each) on a 2-core machine shared '
           'with other jobs; the seed\'s 1 GiB VMs scaled by 1/4: Mem_init '
           '%d MiB, booked %d MiB, VM budget %d MiB (the sum of Mem_init, '
           'less than the sum of the peaks).'
           % (setup['mem_init_mib'], setup['booked_mib'],
              setup['budget_mib']),
           '* Working sets (MiB, also scaled): WRF-like flat, BLAS- and '
           'GRASS-like fluctuating, peaking alone and together (minutes '
           '8-11 and 22-24); 30 scenario minutes compressed to %g s each '
           '(%g s nominal per workload); scenario `%s`.'
           % (minute_s, 30 * minute_s, setup.get('scenario', 'ch3')),
           '* Peak total working set %d MiB (minutes %s); the budget minus '
           'the guests\' kernels (about %d MiB each) is %d MiB: %s.'
           % (max(totals), ', '.join(str(m) for m, t in enumerate(totals)
                                     if t == max(totals)),
              results['guest_overhead_mib'],
              BUDGET_MIB - 3 * results['guest_overhead_mib'],
              'the working sets alone never exceed it; the pool runs out '
              'only with the headroom added to each VM\'s demand'
              if max(totals) <= BUDGET_MIB - 3 *
              results['guest_overhead_mib'] else
              'the working sets alone exceed it in minutes %s, as in the '
              'seed\'s Fig. 3.3' % ', '.join(
                  str(m) for m, t in enumerate(totals)
                  if t > BUDGET_MIB - 3 * results['guest_overhead_mib'])),
           '* memwork in fixed-work mode: each step makes a fixed number of '
           'passes over its working set (one per %d ms at most), so a '
           'swapping guest finishes late: completion time is the '
           'performance metric.' % setup['memwork_period_ms'],
           '* Access pattern: %s.' % (
               'memwork.pattern=%s: each pass draws as many page touches as '
               'the step has pages, the page of rank r with probability ~ '
               '1/r^s (ranks scattered over the mapping); not cyclic, so a '
               'guest short of memory swaps its cold tail. Its working set '
               'has no single size: the "true WSS" below (and the budget '
               'comparisons) use the step\'s mapped size, an upper bound'
               % setup['pattern'] if setup.get('pattern', 'seq') != 'seq'
               else 'seq, every page of the step once per pass in address '
               'order (cyclic: a guest short of memory by any amount swaps '
               'at every pass under LRU)'),
           '* Guests: %s.' % setup.get('guest', '-'),
           '* Estimates: the agent\'s own pipeline, %s; one Badis round '
           'per VM every %g s (%g per scenario minute) and at once when a '
           'VM swaps between two rounds (`[badis] react_to_swapping`).'
           % (setup['estimator'], setup['round_s'],
              minute_s / setup['round_s']),
           '* Dynamic modes: memmut\'s LocalController (Algorithm 1, '
           'reservoir books, actuator) over the real libvirt driver, one '
           'mutualization round at every agent poll (every %g s, as '
           '`AgentManager.poll_once` does), headroom %d MiB, floor %d MiB, '
           'rate limit %g x booked per %g s. The static run keeps the '
           'balloons at Mem_init and runs the same pipeline in shadow '
           '(estimates recorded, not applied).'
           % (setup.get('poll_s', setup['round_s']), setup['headroom_mib'],
              setup['floor_mib'], setup['max_step_fraction'],
              setup['round_s']),
           '* Swapped-out memory: the guests\' cumulative `swap_out` '
           'balloon statistic at the end of the run.'] + [
           '* The %s run is the one started %s (`--reuse`).'
           % (m, runs[m]['reused_from']) for m in runs
           if runs[m].get('reused_from')]
    if 'repeat_summary' in results:
        out += [''] + repeats_markdown(scen, results['repeat_summary'], {
            'seed': results['discipline']['seed'], 'minute_s': minute_s,
            'versions': results['discipline']['versions'],
            'lines': results['repeat_records']})
        out += ['## One run in detail: repeat 0, beside the seed', '',
                'The tables below and the figures 3.3 and 3.6 are repeat '
                '0\'s runs; figures 3.4 and 3.5 show the means over the '
                'repeats with their 95 % intervals.']
    else:
        out += ['', '## Results beside the seed']
    out += ['',
            '| | static | equal | proportional | seed (Xen, 1 GiB VMs) |',
            '|---|---|---|---|---|']
    sw = {m: runs[m]['swap_out_total_kb'] / MIB for m in runs}
    out.append('| swapped-out memory, MiB | %.0f | %.0f | %.0f | - |'
               % (sw['static'], sw['equal'], sw['proportional']))
    out.append('| reduction vs static | 1x | %sx | %sx | %gx (goal >= 8x) |'
               % (_fmt(summ['equal']['swap_reduction_x'], '%.1f'),
                  _fmt(summ['proportional']['swap_reduction_x'], '%.1f'),
                  seed['swap_reduction_x']))
    for n in SCENARIO:
        out.append('| completion %s, s (nominal %g) | %s | %s | %s | - |'
                   % (VM_LABEL[n], summ['nominal_s'][n],
                      _fmt(st['completion_s'].get(n)),
                      _fmt(runs['equal']['completion_s'].get(n)),
                      _fmt(runs['proportional']['completion_s'].get(n))))
    for n in ('blas', 'grass'):
        out.append('| speed-up %s vs static | - | %s %% | %s %% | '
                   '%d %% / %d %% (goal >= 20 %%) |'
                   % (VM_LABEL[n],
                      _fmt(summ['equal']['speedup_pct'].get(n)),
                      _fmt(summ['proportional']['speedup_pct'].get(n)),
                      seed['speedup_equal_pct'],
                      seed['speedup_proportional_pct']))
    out.append('| of which while the true working sets exceeded the '
               'budget, MiB | %s | %s | %s | - |' % tuple(
                   _fmt(summ[m].get('swap_out_in_deficit_mib'), '%.0f')
                   for m in ('static', 'equal', 'proportional')))
    out.append('| swapped out per VM (blas, grass, wrf), MiB | %s | %s | '
               '%s | - |' % tuple(
                   ', '.join('%.0f' % (runs[m]['swap_out_kb'].get(n, 0) /
                                       MIB) for n in SCENARIO)
                   for m in ('static', 'equal', 'proportional')))
    if 'repeat_summary' not in results:
        out += ['', 'Goals met: %s.' % ', '.join(
            '%s %s' % (m, 'yes' if ok else 'NO')
            for m, ok in summ['goals']['met'].items())]
    out.append('')
    for m, key, title in (('equal', 'table_3_1_equal', 'Table 3.1'),
                          ('proportional', 'table_3_2_proportional',
                           'Table 3.2')):
        rows = runs[m].get('shortage_table', [])
        out += ['## Distribution during shortage, %s policy (like %s)' % (
            m, title), '',
            'Scenario minutes with unmet demand (pool empty); the last '
            'round of each minute. From: Server VMs and what they lent '
            '(Mem_init - Mem_act); To: Client VMs and what they hold beyond '
            'Mem_init; unmet: demand (WSS^max_avg + headroom) not met, in '
            'brackets the part of it that is working set; MiB. VM1 BLAS, '
            'VM2 GRASS, VM3 WRF.', '',
            '| minute | from | lent | to | borrowed | unmet |',
            '|---|---|---|---|---|---|']
        for r in rows:
            out.append('| %d | %s | %s | %s | %s | %s |' % (
                r['minute'], r['from'] or '-',
                ', '.join(map(str, r['lent_mib'])) or '-',
                r['to'] or '-',
                ', '.join(map(str, r['borrowed_mib'])) or '-',
                ', '.join('%s %d%s' % (
                    vm, mib, ' (WSS %d)' % r['unmet_wss_mib'][vm]
                    if vm in r.get('unmet_wss_mib', {}) else '')
                    for vm, mib in sorted(r['unmet_mib'].items()))))
        if not rows:
            out.append('| - | no shortage round | | | | |')
        out += ['', 'Seed\'s %s (1 GiB VMs, MiB):' % title, '',
                '| minute | from | to | memory size |', '|---|---|---|---|']
        out += ['| %s | %s | %s | %s |' % tuple(r) for r in seed[key]]
        out.append('')
    out += ['## What estimated', '',
            'Per run and VM: Badis rounds (fresh estimates of the '
            'pipeline; in brackets those run on swap activity between two '
            'regular rounds), time in each Badis mode, the estimate sources '
            '(the most frequent first), and the mean |WSS estimate - true '
            'WSS| over every poll (true WSS: the working set the guest\'s '
            'console shows plus the guest\'s base, Mem_init - MemAvailable '
            'at boot; until the workload ended), overall and over the polls '
            'where the true WSS '
            'exceeded the balloon (S_less), MiB.', '',
            '| run | VM | Badis rounds | modes | sources | mean error | '
            'S_less polls, mean error |', '|---|---|---|---|---|---|---|']
    for m in ('static', 'equal', 'proportional'):
        est = runs[m].get('estimates') or {}
        for n in SCENARIO:
            e = est.get(n)
            if not e:
                continue
            out.append('| %s | %s | %d (%d) | %s | %s | %s | %d, %s |' % (
                m, VM_LABEL[n].split()[0], e['badis_rounds'],
                e['on_swap_activity'], ', '.join(
                    '%s %.0f %%' % kv for kv in e['mode_pct'].items()),
                '; '.join('%s x%d' % kv for kv in
                          list(e['sources'].items())[:3]),
                _fmt(e['mean_abs_error_mib']), e['polls_S_less'],
                _fmt(e['S_less_mean_abs_error_mib'])))
    out.append('')
    out += ['## Server and client VMs over time (like Fig. 3.6)', '',
            'Last mutualization round of each scenario minute: servers / '
            'clients.', '',
            '| minute | ' + ' | '.join(str(i) for i in range(30)) + ' |',
            '|---|' + '---|' * 30]
    for m in ('equal', 'proportional'):
        per = {}
        for c in runs[m]['role_counts']:
            per[int(c['minute'])] = '%d/%d' % (c['servers'], c['clients'])
        cells = [per.get(i, '') for i in range(30)]
        out.append('| %s | %s |' % (m, ' | '.join(cells)))
    out.append('')
    for m in ('equal', 'proportional'):
        counts = runs[m]['role_counts']
        more = sum(1 for c in counts if c['servers'] > c['clients'])
        out.append('* %s: servers outnumber clients in %d of %d '
                   'mutualization rounds (%.0f %%); %d GMC_inform messages.'
                   % (m, more, len(counts), 100.0 * more / max(1, len(counts)),
                      runs[m].get('gmc_informs', 0)))
    out += ['', HAND_WRITTEN, '']
    return '\n'.join(out)


def write_markdown(results, minute_s, path):
    keep = ''
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
        if HAND_WRITTEN in old:
            keep = old.split(HAND_WRITTEN, 1)[1].lstrip('\n')
    with open(path, 'w') as f:
        f.write(markdown(results, minute_s) + keep)


def _interrupt(signum, frame):
    raise KeyboardInterrupt('signal %d' % signum)


# ---------------------------------------------------------------------------
# Repeated runs (issue 20): one (scenario, mode, repeat) case per process,
# each under the TCG lock, appended to a JSON-lines log; the series runs
# them in a blocked random order (discipline.blocked_order) and the
# aggregation gives means with 95 % intervals.

# full records of repeat 0 (the figures and tables), kept beside the guest
# image cache so that a series can be resumed another day
RAW_DIR = os.path.join(os.environ.get('MEMMUT_TEST_CACHE') or
                       tempfile.gettempdir(), 'mutualization-raw')
LOCK = '/tmp/memmut-tcg.lock'
MODES = ('static', 'equal', 'proportional')
# The figures published before the repeated runs (single runs, 10 s per
# scenario minute, round 2 s; commits 14c1979 and bc2c61a).
PUBLISHED = {
    'shortage': {'commit': '14c1979', 'minute_s': 10,
                 'swap_reduction_x': {'equal': 2.8, 'proportional': 2.7},
                 'speedup_pct': {'equal': {'blas': 31.5, 'grass': 31.4},
                                 'proportional': {'blas': 31.8,
                                                  'grass': 30.4}}},
    'ch3': {'commit': 'bc2c61a', 'minute_s': 10,
            'swap_reduction_x': {'equal': 141.1, 'proportional': 67.7},
            'speedup_pct': {'equal': {'blas': 42.4, 'grass': 45.5},
                            'proportional': {'blas': 42.1, 'grass': 45.5}}},
}
GOAL_REDUCTION_X = 8
GOAL_SPEEDUP_PCT = 20


def prefix_of(scenario):
    return 'mutualization' if scenario == 'ch3' else (
        'mutualization_' + scenario)


def set_scenario(name):
    global SCENARIO, PATTERN
    SCENARIO = SCENARIOS[name]
    PATTERN = PATTERNS.get(name)


def finish_record(rec, minute_s):
    """The figures derived from a run's timeline, computed while the
    timeline is at hand (only repeat 0 keeps it)."""
    rec['estimates'] = estimate_summary(rec, ROUND)
    if rec.get('timeline'):
        # how long the run lasted: a workload unfinished at the deadline
        # took at least this long (a censored completion time)
        rec['run_s'] = rec['timeline'][-1]['t']
    deficit = swap_in_deficit_kb(rec)
    rec['swap_in_deficit_kb'] = deficit
    if rec['mode'] != 'static':
        rec['shortage_table'] = shortage_table(rec, minute_s)
        rec['role_counts'] = role_counts(rec, minute_s)
    return rec


def slim(rec):
    """A run's record without its per-poll timeline and rounds."""
    return {k: v for k, v in rec.items()
            if k not in ('timeline', 'rounds', 'role_counts')}


def read_log(path):
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    return rows


def run_cases(args, img, daemon, work):
    """The runs of one invocation (``--modes`` of ``--scenario``), each
    appended to the log ``--append`` with its provenance when
    ``--repeat`` is given."""
    from tests.benchmarks import discipline
    versions = discipline.versions()
    out = {}
    for mode in args.modes.split(','):
        wd = os.path.join(work, mode)
        os.makedirs(wd)
        load_before = discipline.loadavg()
        started = time.time()
        rec = run_mode(mode, daemon, img, wd, args.minute_seconds,
                       deadline_s(mode, args.minute_seconds,
                                  args.static_deadline_factor))
        finish_record(rec, args.minute_seconds)
        out[mode] = rec
        if args.repeat is None:
            continue
        line = {'scenario': args.scenario, 'mode': mode,
                'repeat': args.repeat, 'minute_s': args.minute_seconds,
                'round_s': ROUND, 'poll_s': POLL, 'pattern': PATTERN,
                'started_utc': time.strftime('%Y-%m-%dT%H:%M:%SZ',
                                             time.gmtime(started)),
                'elapsed_s': round(time.time() - started, 1),
                'load_before': load_before,
                'load_after': discipline.loadavg(),
                'versions': versions, 'record': slim(rec)}
        with open(args.append, 'a') as f:
            f.write(json.dumps(line, separators=(',', ':')) + '\n')
        if args.repeat == 0:
            # the representative run of the figures and tables, in full
            os.makedirs(args.raw_dir, exist_ok=True)
            with open(os.path.join(args.raw_dir, '%s-%s.json' % (
                    args.scenario, mode)), 'w') as f:
                json.dump(rec, f, separators=(',', ':'))
    return out


# (moved to the shared helper: bench_badis stops the same way)
stop_deadline = discipline.stop_deadline


def series(args):
    """Run every (scenario, mode, repeat) case missing from the log, in
    the blocked random order of ``--seed``, one process under the TCG
    lock per case (so no lock hold lasts longer than one run); stop
    starting cases after ``--stop-at`` (UTC HH:MM)."""
    import subprocess
    import sys
    from tests.benchmarks import discipline
    scenarios = args.scenarios.split(',')
    cases = [(sc, m) for sc in scenarios for m in args.modes.split(',')]
    order = discipline.blocked_order(cases, args.series, args.seed)
    deadline = stop_deadline(args.stop_at, time.time())
    for (sc, mode), rep in order:
        have = {(r['scenario'], r['mode'], r['repeat'])
                for r in read_log(args.append)}
        if (sc, mode, rep) in have:
            continue
        if deadline is not None and time.time() >= deadline:
            LOG.warning('stop time %s reached: %s %s repeat %d not run',
                        args.stop_at, sc, mode, rep)
            break
        cmd = [sys.executable, '-m', 'tests.benchmarks.bench_mutualization',
               '--scenario', sc, '--modes', mode, '--repeat', str(rep),
               '--minute-seconds', '%g' % args.minute_seconds,
               '--round-seconds', '%g' % ROUND,
               '--poll-seconds', '%g' % POLL, '--append', args.append,
               '--raw-dir', args.raw_dir, '--out', args.out]
        if args.static_deadline_factor:
            cmd += ['--static-deadline-factor',
                    '%g' % args.static_deadline_factor]
        if args.lock:
            cmd = ['flock', args.lock] + cmd
        LOG.info('case %s %s repeat %d: %s', sc, mode, rep, ' '.join(cmd))
        rc = subprocess.call(cmd)
        if rc:
            LOG.warning('case %s %s repeat %d failed (exit %d)', sc, mode,
                        rep, rc)
    return order


def _ratio(a_kb, b_kb):
    # a dynamic run that swapped nothing counts as 1 MiB (the ratio is
    # then a lower bound)
    return a_kb, max(b_kb, MIB)


def completion(rec, n):
    """A VM's completion time in a run; for a workload unfinished at the
    run's deadline, the run's length (a lower bound: censored)."""
    c = rec['completion_s'].get(n)
    if c is None and n in (rec.get('unfinished') or ()):
        return rec.get('run_s')
    return c


def deadlines_text(by_mode):
    """The runs' deadlines per mode, in words ('not recorded': a record
    from before deadline_s, which ran to 4 x the nominal length)."""
    if all(d == 'not recorded' for ds in by_mode.values() for d in ds):
        return '4 x the nominal length'
    return '; '.join('%s %s' % (m, ', '.join(
        '%g s' % d if isinstance(d, (int, float)) else
        '%s (4 x the nominal length)' % d for d in ds))
        for m, ds in by_mode.items())


def repeat_summary(lines):
    """Means and 95 % intervals of one scenario's repeated runs: swapped
    out per mode, completion per VM and mode, the reduction of swap vs
    static (paired by repeat, geometric), the speed-up of each starved
    VM vs static (paired by repeat), and the goals judged on the
    intervals."""
    from tests.benchmarks import discipline
    by = {}
    for ln in lines:
        by.setdefault(ln['mode'], {})[ln['repeat']] = ln['record']
    reps = sorted({ln['repeat'] for ln in lines})
    out = {'repeats': reps, 'n_runs': {m: len(by.get(m, {}))
                                       for m in MODES},
           'swap_out_total_mib': {}, 'swap_out_in_deficit_mib': {},
           'completion_s': {}, 'swap_reduction_x': {}, 'speedup_pct': {},
           'verdicts': {}, 'unfinished': {}, 'deadline_s': {}}
    for m in MODES:
        runs = by.get(m, {})
        if not runs:
            continue
        out['swap_out_total_mib'][m] = discipline.summarize(
            [r['swap_out_total_kb'] / MIB for r in runs.values()])
        dfc = [r.get('swap_in_deficit_kb') for r in runs.values()]
        if any(d is not None for d in dfc):
            out['swap_out_in_deficit_mib'][m] = discipline.summarize(
                [d / MIB for d in dfc if d is not None])
        out['completion_s'][m] = {
            n: discipline.summarize([completion(r, n)
                                     for r in runs.values()])
            for n in SCENARIO
            if any(completion(r, n) for r in runs.values())}
        out['unfinished'][m] = sum(len(r.get('unfinished') or [])
                                   for r in runs.values())
        # older records ran to 4 x the nominal length
        out['deadline_s'][m] = sorted({r.get('deadline_s') or 'not recorded'
                                       for r in runs.values()}, key=str)
    static = by.get('static', {})
    for m in ('equal', 'proportional'):
        runs = by.get(m, {})
        paired = [r for r in reps if r in runs and r in static]
        if not paired:
            continue
        num, den = zip(*[_ratio(static[r]['swap_out_total_kb'],
                                runs[r]['swap_out_total_kb'])
                         for r in paired])
        red = discipline.paired_ratio(list(num), list(den))
        red['dynamic_swapped_nothing'] = sum(
            1 for r in paired if runs[r]['swap_out_total_kb'] < MIB)
        # a static run stopped at its deadline had not swapped all it
        # would have: its ratio is a lower bound (and that of a dynamic
        # run stopped early an upper bound)
        red['static_unfinished'] = sum(
            1 for r in paired if static[r].get('unfinished'))
        red['dynamic_unfinished'] = sum(
            1 for r in paired if runs[r].get('unfinished'))
        out['swap_reduction_x'][m] = red
        sp = {}
        for n in ('blas', 'grass'):
            vals = [100.0 * (completion(static[r], n) -
                             completion(runs[r], n)) /
                    completion(static[r], n) for r in paired
                    if completion(static[r], n) and
                    completion(runs[r], n) and not (
                        n in (runs[r].get('unfinished') or ()) and
                        n in (static[r].get('unfinished') or ()))]
            if vals:
                sp[n] = discipline.summarize(vals)
        out['speedup_pct'][m] = sp
        v = {'swap_reduction_x >= %d' % GOAL_REDUCTION_X:
             discipline.verdict(red, low=GOAL_REDUCTION_X)}
        for n, s in sp.items():
            v['speed-up %s >= %d %%' % (n, GOAL_SPEEDUP_PCT)] = (
                discipline.verdict(s, low=GOAL_SPEEDUP_PCT))
        v['all'] = discipline.combine_verdicts(v.values())
        out['verdicts'][m] = v
    return out


def _ci(s, spec='.1f', unit=''):
    from tests.benchmarks import discipline
    if s is None:
        return '-'
    return discipline.fmt(s, spec, unit=unit)


def _ratio_ci(s):
    if s is None:
        return '-'
    if s.get('low') is None:
        return '%.1fx [?] (n=%d)' % (s['mean'], s['n'])
    return '%.1fx [%.1f, %.1f] (n=%d)' % (s['mean'], s['low'], s['high'],
                                          s['n'])


def repeats_markdown(scenario, summ, provenance):
    """The repeated runs' section of a scenario's markdown."""
    from tests.benchmarks import discipline
    pub = PUBLISHED.get(scenario, {})
    out = ['## Repeated runs (means, 95 % intervals)', '',
           'Each figure: mean ± half-width of the two-sided 95 %% Student-t '
           'interval over the repeats (n runs); the swap reduction is the '
           'geometric mean of the per-repeat ratios static / dynamic '
           '(paired by repeat; interval exp(mean log ± t sd / sqrt(n)), in '
           'brackets); a speed-up is 1 - dynamic / static completion of '
           'the same repeat. Goals (seed): swap reduction >= %dx and each '
           'starved VM >= %d %% faster than static; a goal is met only if '
           'its whole interval is inside it, not met if wholly outside, '
           'else undecided.' % (GOAL_REDUCTION_X, GOAL_SPEEDUP_PCT), '']
    header = ['', 'static', 'equal', 'proportional']
    if pub:
        header.append('published before (single run, %g s/min, %s)'
                      % (pub['minute_s'], pub['commit']))
    rows = [['swapped-out memory, MiB'] + [
        _ci(summ['swap_out_total_mib'].get(m), '.0f') for m in MODES]]
    rows.append(['of which while the data exceeded the budget, MiB'] + [
        _ci(summ['swap_out_in_deficit_mib'].get(m), '.0f') for m in MODES])
    rows.append(['reduction vs static', '1x'] + [
        _ratio_ci(summ['swap_reduction_x'].get(m))
        for m in ('equal', 'proportional')])
    if pub:
        rows[0].append('-')
        rows[1].append('-')
        rows[2].append('%gx / %gx' % (pub['swap_reduction_x']['equal'],
                                      pub['swap_reduction_x'][
                                          'proportional']))
    for n in SCENARIO:
        rows.append(['completion %s, s (nominal %g)' % (
            VM_LABEL[n], nominal_s(provenance['minute_s'])[n])] + [
            _ci(summ['completion_s'].get(m, {}).get(n)) for m in MODES] +
            (['-'] if pub else []))
    for n in ('blas', 'grass'):
        rows.append(['speed-up %s vs static, %%' % VM_LABEL[n], '-'] + [
            _ci(summ['speedup_pct'].get(m, {}).get(n))
            for m in ('equal', 'proportional')] + (
            ['%g / %g' % (pub['speedup_pct']['equal'][n],
                          pub['speedup_pct']['proportional'][n])]
            if pub else []))
    out += [discipline.markdown_table(header, rows), '']
    for m in ('equal', 'proportional'):
        v = summ['verdicts'].get(m)
        if v:
            out.append('* Goals, %s: %s; overall **%s**.' % (m, '; '.join(
                '%s: %s' % kv for kv in v.items() if kv[0] != 'all'),
                v['all']))
    for m in ('equal', 'proportional'):
        red = summ['swap_reduction_x'].get(m)
        if red and red.get('dynamic_swapped_nothing'):
            out.append('* %s swapped nothing in %d repeat(s): counted as '
                       '1 MiB, the reduction is then a lower bound.'
                       % (m, red['dynamic_swapped_nothing']))
    for m in ('equal', 'proportional'):
        red = summ['swap_reduction_x'].get(m)
        if red and (red.get('static_unfinished') or
                    red.get('dynamic_unfinished')):
            out.append('* %s: in %d repeat(s) the static run and in %d the '
                       'dynamic run stopped at the deadline with work left: '
                       'their swap totals are truncated, so those ratios are '
                       'lower (static) or upper (dynamic) bounds.' % (
                           m, red['static_unfinished'],
                           red['dynamic_unfinished']))
    if any(summ['unfinished'].values()):
        out.append('* Workloads unfinished at the run\'s deadline (%s), '
                   'counted at the deadline (a lower bound '
                   'of their completion time: the speed-up over a static '
                   'run that did not finish is then a lower bound, that of '
                   'a dynamic run that did not finish an upper bound; '
                   'with both unfinished the repeat gives none): %s.'
                   % (deadlines_text(summ.get('deadline_s') or {}),
                      ', '.join('%s %d' % kv
                                for kv in summ['unfinished'].items())))
    out += ['', '### Provenance', '',
            '* Repeats: %s; seed %d; cases (scenario x mode) in a blocked '
            'random order (`discipline.blocked_order`: every case once per '
            'repeat, shuffled afresh in each repeat, over all the '
            'scenarios of the series), one process and one TCG-lock hold '
            'per case.' % (', '.join(str(r) for r in summ['repeats']),
                           provenance['seed']),
            '* Versions: %s.' % ', '.join(
                '%s %s' % kv for kv in sorted(
                    provenance['versions'].items()) if kv[1] is not None),
            '* Load average (1, 5, 15 min) at the start and end of each '
            'run:', '']
    rows = [[ln['repeat'], ln['mode'], ln['started_utc'],
             '%.0f' % ln['elapsed_s'],
             ' '.join('%.2f' % x for x in ln['load_before'] or []),
             ' '.join('%.2f' % x for x in ln['load_after'] or [])]
            for ln in provenance['lines']]
    out += [discipline.markdown_table(
        ['repeat', 'mode', 'started (UTC)', 'wall s', 'load before',
         'load after'], rows), '']
    return out


def reused_versions(earlier):
    """The versions of a run reused from an earlier result file: its
    recorded ones, or the note that says where it ran (files written
    before versions were recorded carry ``versions_not_recorded``)."""
    if earlier.get('versions'):
        return earlier['versions']
    return {'not_recorded': earlier.get('versions_not_recorded') or
            'not recorded (run started %s)' % earlier.get('started')}


def aggregate(args):
    """Per scenario of the log: PREFIX.json (repeat 0's runs in full, the
    repeats' records, their summary), PREFIX.md and the figures; and the
    headline file mutualization_repeats.md over the scenarios."""
    global PREFIX, ROUND
    lines = read_log(args.aggregate)
    scenarios = [sc for sc in ('shortage', 'zipf', 'ch3')
                 if any(ln['scenario'] == sc for ln in lines)]
    head = {}
    for sc in scenarios:
        set_scenario(sc)
        PREFIX = prefix_of(sc)
        mine = sorted((ln for ln in lines if ln['scenario'] == sc),
                      key=lambda ln: (ln['repeat'], ln['started_utc']))
        minute_s = mine[0]['minute_s']
        ROUND = mine[0]['round_s']
        runs = {}
        for m in MODES:
            path = os.path.join(args.raw_dir, '%s-%s.json' % (sc, m))
            if os.path.exists(path):
                with open(path) as f:
                    runs[m] = json.load(f)
        for ln in mine:
            raw = runs.get(ln['mode'])
            if (ln['repeat'] == 0 and raw and raw.get('timeline') and
                    'run_s' not in ln['record']):
                ln['record']['run_s'] = raw['timeline'][-1]['t']
        summ = repeat_summary(mine)
        versions = mine[-1]['versions']
        provenance = {'seed': args.seed, 'minute_s': minute_s,
                      'versions': versions, 'lines': mine}
        head[sc] = (summ, provenance)
        results = {
            'benchmark': 'local memory mutualization, seed 004 ch.3, '
                         'scenario %s, repeated' % sc,
            'command': 'python -m tests.benchmarks.bench_mutualization '
                       '--series %d --scenarios %s --minute-seconds %g '
                       '--round-seconds %g --poll-seconds %g --seed %d'
                       % (len(summ['repeats']), sc, minute_s,
                          ROUND, mine[0]['poll_s'], args.seed),
            'started': mine[0]['started_utc'],
            'machine': {'platform': platform.platform(),
                        'cpus': os.cpu_count(),
                        'note': 'TCG guests; 2 cores shared with other '
                                'sessions (compilers, TCG guests)'},
            'setup': setup_record(mine[0]['poll_s'], minute_s, sc),
            'seed': SEED, 'guest_overhead_mib': 77,
            'discipline': {'seed': args.seed, 'confidence': 0.95,
                           'interval': 'Student t, two-sided, n - 1 '
                                       'degrees of freedom',
                           'goal_rule': 'met only if the whole interval '
                                        'is inside the goal',
                           'versions': versions},
            'repeat_summary': summ,
            'repeat_records': mine,
            'runs': runs}
        if not all(m in runs for m in MODES):
            # the scenario's own files (and figures) stay as they are
            # until repeat 0 has every mode
            LOG.warning('%s: repeat 0 lacks %s: %s.* not rewritten', sc,
                        ', '.join(m for m in MODES if m not in runs),
                        PREFIX)
            continue
        results['summary'] = summarize(results, minute_s)
        plots(results, minute_s, args.out)
        with open(os.path.join(args.out, PREFIX + '.json'), 'w') as f:
            json.dump(results, f, separators=(',', ':'))
        write_markdown(results, minute_s,
                       os.path.join(args.out, PREFIX + '.md'))
    write_headline(head, os.path.join(args.out, 'mutualization_repeats.md'))
    return head


def write_headline(head, path):
    from tests.benchmarks import discipline
    out = ['# Local memory mutualization: repeated runs (headline)', '',
           'Generated by `python -m tests.benchmarks.bench_mutualization '
           '--aggregate ...` from the log `mutualization_repeats.jsonl`; '
           'per-scenario details in `mutualization_shortage.md` (the '
           'headline scenario: the working sets alone exceed the budget), '
           '`mutualization_zipf.md` (the same sizes, Zipf-like access, '
           'non-cyclic) and `mutualization.md` (seed ch.3, kept beside '
           'them: its working sets never exceed the budget, so its '
           'reduction is set by static\'s worst case).', '',
           'Mean ± 95 % interval half-width (Student t) over n repeats; '
           'the swap reduction (static / dynamic, paired by repeat) is a '
           'geometric mean with its interval in brackets.', '']
    header = ['scenario', 'policy', 'swap reduction vs static',
              'speed-up BLAS-like, %', 'speed-up GRASS-like, %',
              'goals (>= %dx, >= %d %%)' % (
                  GOAL_REDUCTION_X, GOAL_SPEEDUP_PCT),
              'published before']
    rows = []
    for sc, (summ, prov) in head.items():
        pub = PUBLISHED.get(sc)
        for m in ('equal', 'proportional'):
            if m not in summ['swap_reduction_x']:
                continue
            sp = summ['speedup_pct'].get(m, {})
            red = summ['swap_reduction_x'][m]
            bound = ''
            if red.get('static_unfinished') and not red.get(
                    'dynamic_unfinished'):
                bound = '>= '      # static's swap total truncated
            rows.append([
                sc + (' (%s)' % PATTERNS[sc] if sc in PATTERNS else ''),
                m, bound + _ratio_ci(red),
                bound + _ci(sp.get('blas')), bound + _ci(sp.get('grass')),
                summ['verdicts'][m]['all'],
                '%gx, %g / %g %% (n=1, %g s/min)' % (
                    pub['swap_reduction_x'][m],
                    pub['speedup_pct'][m]['blas'],
                    pub['speedup_pct'][m]['grass'], pub['minute_s'])
                if pub else '- (new)'])
    for sc, pub in sorted(PUBLISHED.items()):
        if sc in head:
            continue
        for m in ('equal', 'proportional'):
            rows.append([sc, m, '%gx (n=1)' % pub['swap_reduction_x'][m],
                         '%g (n=1)' % pub['speedup_pct'][m]['blas'],
                         '%g (n=1)' % pub['speedup_pct'][m]['grass'],
                         'undecided (n=1)',
                         'not repeated: the single run of %s (%g s/min), '
                         'in `%s.md`' % (pub['commit'], pub['minute_s'],
                                         prefix_of(sc))])
    out += [discipline.markdown_table(header, rows), '',
            '">=": a static run of the pairs stopped at its deadline with '
            'work left (its swap total and completion time are lower '
            'bounds); see each scenario\'s notes.', '',
            '### Runs in the log', '']
    rows = []
    for sc, (summ, prov) in head.items():
        for m in MODES:
            lines = [ln for ln in prov['lines'] if ln['mode'] == m]
            if not lines:
                rows.append([sc, m, 0, '-', '-', '-'])
                continue
            rows.append([
                sc, m, len(lines),
                sum(len(ln['record'].get('unfinished') or [])
                    for ln in lines),
                ', '.join('%.1f' % ln['load_before'][0] for ln in lines
                          if ln.get('load_before')),
                ', '.join('%.1f' % ln['load_after'][0] for ln in lines
                          if ln.get('load_after'))])
    out += [discipline.markdown_table(
        ['scenario', 'mode', 'runs', 'workloads unfinished at the deadline',
         'load (1 min) before', 'load after'], rows), '']
    versions = next(iter(head.values()))[1]['versions'] if head else {}
    out += ['Versions: %s.' % ', '.join(
        '%s %s' % kv for kv in sorted(versions.items())
        if kv[1] is not None), '']
    with open(path, 'w') as f:
        f.write('\n'.join(out) + '\n')
    keep_notes(path)


def keep_notes(path):
    """Hand-written notes kept across regenerations (in PATH.notes)."""
    notes = path + '.notes'
    if os.path.exists(notes):
        with open(notes) as f, open(path, 'a') as g:
            g.write('\n' + f.read())


def main():
    global ROUND, POLL, SCENARIO, PREFIX
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--minute-seconds', type=float, default=10.0,
                        help='wall seconds per scenario minute')
    parser.add_argument('--out', default=RESULTS)
    parser.add_argument('--round-seconds', type=float, default=ROUND,
                        help='[badis] round_interval: seconds between two '
                             'Badis rounds of a VM, and the rate limit\'s '
                             'interval (default %g: 5 per scenario minute '
                             'at the default --minute-seconds)' % ROUND)
    parser.add_argument('--poll-seconds', type=float, default=POLL,
                        help='seconds between two agent polls: each runs '
                             'the estimation pipeline (a VM swapping '
                             'between two rounds gets its round at once) '
                             'and a mutualization round (default %g)'
                        % POLL)
    parser.add_argument('--scenario', choices=sorted(SCENARIOS),
                        default='ch3',
                        help='ch3: the default; shortage: higher joint '
                             'peaks, the total working set above the '
                             'budget at minutes 8-11 and 22-24; zipf: the '
                             'shortage sizes with Zipf-like access '
                             '(memwork.pattern=zipf:0.8)')
    parser.add_argument('--modes', default='static,equal,proportional')
    parser.add_argument('--reuse', metavar='JSON',
                        help='take the runs not in --modes from this '
                             'earlier results file')
    parser.add_argument('--prefix', default=None,
                        help='result file names: PREFIX.json, PREFIX.md, '
                             'PREFIX_fig3_N.png (default mutualization, '
                             'mutualization_SCENARIO for another '
                             'scenario)')
    parser.add_argument('--report', metavar='JSON',
                        help='run nothing: write the markdown summary and '
                             'the figures from this complete results file')
    rep = parser.add_argument_group('repeated runs (issue 20)')
    rep.add_argument('--repeat', type=int, default=None,
                     help='this invocation is repeat R of a series: append '
                          'each run to --append (repeat 0 also keeps its '
                          'full record in --raw-dir for the figures)')
    rep.add_argument('--append', metavar='JSONL',
                     default=os.path.join(RESULTS,
                                          'mutualization_repeats.jsonl'),
                     help='the log of repeated runs (default %(default)s)')
    rep.add_argument('--raw-dir', default=RAW_DIR,
                     help='full records of repeat 0 (default %(default)s)')
    rep.add_argument('--series', type=int, metavar='N',
                     help='run N repeats of every (scenario, mode) of '
                          '--scenarios and --modes missing from the log, '
                          'in a blocked random order, one process under '
                          '--lock per run, then aggregate')
    rep.add_argument('--scenarios', default='shortage,zipf,ch3')
    rep.add_argument('--seed', type=int, default=20)
    rep.add_argument('--lock', default=LOCK,
                     help='flock file each run of a series is run under '
                          '("" for none; default %(default)s)')
    rep.add_argument('--static-deadline-factor', type=float, default=None,
                     metavar='F',
                     help='the static run stops at F x the nominal length '
                          '(default %g, as every mode): static swaps at '
                          'every pass and runs to its deadline; a shorter '
                          'one saves lock time, its swap total and '
                          'completion are then lower bounds ("(>=)"), '
                          'recorded as the run\'s deadline_s'
                          % DEADLINE_FACTOR)
    rep.add_argument('--stop-at', metavar='HH:MM',
                     help='series: start no run after this UTC time')
    rep.add_argument('--aggregate', metavar='JSONL',
                     help='run nothing: summarize the log of repeated runs '
                          '(means, 95 %% intervals, goal verdicts), write '
                          'each scenario\'s files and '
                          'mutualization_repeats.md')
    args = parser.parse_args()
    ROUND = args.round_seconds
    POLL = args.poll_seconds
    PREFIX = args.prefix or prefix_of(args.scenario)
    set_scenario(args.scenario)
    if args.series or args.aggregate:
        logging.basicConfig(level=logging.INFO,
                            format='%(asctime)s %(name)s %(message)s')
        os.makedirs(args.out, exist_ok=True)
        if args.series:
            series(args)
            args.aggregate = args.append
        aggregate(args)
        return
    if args.report:
        with open(args.report) as f:
            results = json.load(f)
        minute_s = results['setup']['minute_s']
        SCENARIO = {n: [tuple(step) for step in steps] for n, steps in
                    results['setup']['scenario_minutes_mib'].items()}
        if args.prefix is None:
            PREFIX = prefix_of(results['setup'].get('scenario', 'ch3'))
        ROUND = results['setup']['round_s']
        for mode, rec in results['runs'].items():
            if rec['rounds'] and 'wss_kb' in next(iter(
                    rec['rounds'][-1]['vms'].values()), {}):
                rec['estimates'] = estimate_summary(rec, ROUND)
            if mode != 'static':
                rec['shortage_table'] = shortage_table(rec, minute_s)
                rec['role_counts'] = role_counts(rec, minute_s)
        results['summary'] = summarize(results, minute_s)
        plots(results, minute_s, args.out)
        write_markdown(results, minute_s,
                       os.path.join(args.out, PREFIX + '.md'))
        return
    # a SIGTERM (or SIGINT when started in the background, where it is
    # ignored) still destroys the guests and stops the private libvirtd
    signal.signal(signal.SIGTERM, _interrupt)
    logging.basicConfig(level=logging.INFO,
                        format='%(asctime)s %(name)s %(message)s')
    os.makedirs(args.out, exist_ok=True)
    cache = os.environ.get('MEMMUT_TEST_CACHE', image.DEFAULT_CACHE)
    img = image.build_image(cache)
    daemon = libvirtd_mod.PrivateLibvirtd(
        cache_dir=os.path.join(cache, 'libvirt-cache'))
    work = tempfile.mkdtemp(prefix='memmut-bench-mut-')
    if args.repeat is not None:
        try:
            daemon.start()
            run_cases(args, img, daemon, work)
        finally:
            daemon.stop()
            shutil.rmtree(work, ignore_errors=True)
        return
    command = ('python -m tests.benchmarks.bench_mutualization '
               '--minute-seconds %g --round-seconds %g --poll-seconds %g '
               '--scenario %s --modes %s' % (
                   args.minute_seconds, ROUND, POLL, args.scenario,
                   args.modes))
    results = {
        'benchmark': 'local memory mutualization, seed 004 ch.3 scenario',
        'command': command,
        'started': time.strftime('%Y-%m-%d %H:%M:%S'),
        'machine': {'platform': platform.platform(),
                    'cpus': os.cpu_count(),
                    'loadavg_start': os.getloadavg(),
                    'note': 'TCG guests; the 2 cores were shared with other '
                            'jobs running TCG guests during the runs'},
        'setup': setup_record(POLL, args.minute_seconds, args.scenario),
        'versions': discipline.versions(),
        'seed': SEED, 'runs': {}}
    if args.reuse:
        with open(args.reuse) as f:
            earlier = json.load(f)
        for mode, rec in earlier['runs'].items():
            if mode not in args.modes.split(','):
                rec['reused_from'] = earlier.get('started')
                rec['versions'] = reused_versions(earlier)
                results['runs'][mode] = rec
    try:
        daemon.start()
        results['runs'].update(run_cases(args, img, daemon, work))
        with open(os.path.join(args.out, PREFIX + '.json'), 'w') as f:
            json.dump(results, f, separators=(',', ':'))
    finally:
        daemon.stop()
        shutil.rmtree(work, ignore_errors=True)
    results['machine']['loadavg_end'] = os.getloadavg()
    # guest kernel + init: balloon size minus MemTotal plus base used
    results['guest_overhead_mib'] = 77
    if all(m in results['runs'] for m in ('static', 'equal',
                                          'proportional')):
        results['summary'] = summarize(results, args.minute_seconds)
        plots(results, args.minute_seconds, args.out)
        write_markdown(results, args.minute_seconds,
                       os.path.join(args.out, PREFIX + '.md'))
    with open(os.path.join(args.out, PREFIX + '.json'), 'w') as f:
        json.dump(results, f, separators=(',', ':'))
    print(json.dumps(results.get('summary'), indent=1))


if __name__ == '__main__':
    main()
