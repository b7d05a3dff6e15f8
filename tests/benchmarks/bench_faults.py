"""Benchmark: the fault campaign (issue 17).

Faults are injected into memmut running against real parts, and what
they did is counted:

* ``libvirt``: the agent (in-process, the real libvirt driver, on-demand
  Badis, poll every ``--poll`` s) manages ``--guests`` TCG guests running
  memwork while every libvirt call it makes fails with probability
  ``--p`` (balloon changes ``--p-balloon``) with an error code drawn from
  every code the driver can meet (tests/harness/libvirt_faults.py); then
  ``--recovery`` s without faults.
  One guest has a flavor floor (``memmut:balloon_floor_mb``), the planners'
  own floor is set low (16 MiB) so that they ask for targets below the hard
  floor. Counted: faults injected, polls that raised (goal 0), balloon
  targets that reached libvirt below the VM's floor computed here
  independently (goal 0), balloons found below it at the end (goal 0), VMs
  not managed after recovery (missing, not running, stale or without an
  estimate in the last report; goal 0), and the time from each fault to the
  next report where every VM is read and running (p50, p99).
* ``memstore``: a guest swaps through memmut-memstore (RAM quota 64 MiB,
  the rest on its backing file) while memstore is SIGKILLed ``--kills``
  times and restarted at once (as systemd would); memwork checks every
  page it wrote. Counted: acknowledged pages lost (memwork checksum
  errors; goal 0), the guest still running, time from kill to the export
  serving again.
* ``diskfull``: memstore's state directory on a ``--tmpfs-mib`` tmpfs
  (RAM quota 16 MiB) under a guest that swaps more than fits: memstore
  alive, writes refused (ENOSPC) counted, acknowledged pages lost (goal 0).
* ``services``: memmut-agent and memmut-controller as processes over a
  private RabbitMQ and PostgreSQL, the agent managing two real guests: the
  agent SIGKILLed ``--agent-kills`` times at random points and restarted,
  then the broker and the database each stopped for ``--outage`` s
  ``--restarts`` times. Counted: time until reports flow again, reports
  lost (sequence gaps in what each agent run stored; goal 0), VMs
  unmanaged at the end, balloons below the floor.
* ``load``: ``--load-guests`` idle guests polled by one agent at the
  default poll interval (5 s): poll time p50/p99 against the interval.

Writes tests/benchmarks/results/faults.json and faults.md. About
15 minutes with the defaults; take the TCG lock::

    flock /tmp/memmut-tcg.lock .tox/functional/bin/python -m \\
        tests.benchmarks.bench_faults

Not part of CI.
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import time

from memmut.agent import manager
from memmut.evaluation import workloads
from memmut.virt.libvirt import driver as lv_driver
from tests.benchmarks import discipline
from tests.benchmarks import faults_report
from tests import common
from tests.harness import bed
from tests.harness import domain
from tests.harness import libvirt_faults

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, 'results')
MiB = 1024
CONFIGURED_FLOOR_KB = 64 * MiB
GUEST_RESERVE_KB = 32 * MiB


class Recorder:
    """Stands in for the controller: keeps every report."""

    def __init__(self):
        self.reports = []

    def report(self, report, timeout=None):
        self.reports.append((time.monotonic(), report))
        return True


def _pct(values, q):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def _conf(daemon, poll, **badis):
    return common.private_conf(
        DEFAULT={'host': 'faults-node'},
        libvirt=dict(daemon.memmut_options()),
        agent=dict(hypervisor_driver='libvirt', poll_interval=poll,
                   balloon_floor_kb=CONFIGURED_FLOOR_KB,
                   guest_reserve_kb=GUEST_RESERVE_KB),
        badis=dict(badis))


def _healthy(report, uuids):
    if report is None:
        return False
    vms = {v.uuid: v for v in report.vms}
    return all(u in vms and vms[u].state == 'running' for u in uuids)


def _boot_reserved(dom):
    stats = dom.memoryStats()
    return stats['actual'] - stats['available']


def campaign_libvirt(factory, daemon, args, seed=None):
    schedule = workloads.shape_schedule('W3', 96, 40)
    guests = []
    for i in range(args.guests):
        nova = (domain.NovaMetadata(name='floored', extra_specs={
            'memmut:balloon_floor_mb': '200'}) if i == 0 else None)
        guests.append(factory(memory_mib=384, schedule=schedule, loops=0,
                              nova=nova, stat_period=1))
    uuids = [g.uuid for g in guests]
    floors = {}
    for g in guests:
        g.dom.setMemoryStatsPeriod(1, 1)
    time.sleep(3)
    for i, g in enumerate(guests):
        boot = _boot_reserved(g.dom)
        floor = max(CONFIGURED_FLOOR_KB, boot + GUEST_RESERVE_KB,
                    200 * MiB if i == 0 else 0)
        floors[g.uuid] = min(384 * MiB, floor)

    seed = args.seed if seed is None else seed
    load_before = discipline.loadavg()
    inj = libvirt_faults.Injector(args.p, seed, {
        'setMemoryFlags': args.p_balloon})

    class FaultyDriver(lv_driver.LibvirtDriver):
        def connect(self):
            super().connect()
            if not isinstance(self._conn, libvirt_faults.FaultyConnection):
                self._conn = libvirt_faults.FaultyConnection(self._conn, inj)

    conf = _conf(daemon, args.poll, round_interval=2.0, floor_kb=16 * MiB,
                 headroom_kb=8 * MiB, headroom_fraction=0.0)
    drv = FaultyDriver(conf)
    rec = Recorder()
    agent = manager.AgentManager(conf, drv, rec)
    polls, crashes, healthy_at = [], 0, []
    phase_end = time.monotonic() + args.duration
    recovery_end = phase_end + args.recovery
    injecting = True
    last = None
    while time.monotonic() < recovery_end:
        if injecting and time.monotonic() >= phase_end:
            inj.enabled, injecting = False, False
            stopped_at = time.monotonic()
        t0 = time.monotonic()
        try:
            last = agent.poll_once()
            agent.flush()
        except Exception as e:                    # a fault that escaped
            crashes += 1
            print('poll raised %s: %s' % (type(e).__name__, e))
            last = None
        dt = time.monotonic() - t0
        polls.append(dt)
        if _healthy(last, uuids):
            healthy_at.append(time.monotonic())
        time.sleep(max(0.0, args.poll - dt))
    first_healthy_after_stop = next(
        (t - stopped_at for t in healthy_at if t >= stopped_at), None)

    # time from each fault to the next report where every VM is read
    recoveries = []
    j = 0
    for tf, *_ in inj.faults:
        while j < len(healthy_at) and healthy_at[j] < tf:
            j += 1
        if j < len(healthy_at):
            recoveries.append(healthy_at[j] - tf)
    below = [(u, kib, floors[u]) for _, u, kib in inj.balloons
             if kib < floors[u]]
    actual, stopped = {}, {}
    for g in guests:
        try:
            actual[g.uuid] = g.dom.memoryStats()['actual']
        except Exception as e:      # the guest stopped: a finding, kept
            state = None
            try:
                state = g.dom.state()
            except Exception:
                pass
            stopped[g.uuid] = {'error': str(e), 'state': state,
                               'console_tail': g.log()[-3000:]}
            print('guest %s not running at the end: %s' % (g.uuid, e))
    below_end = [u for u in actual if actual[u] < floors[u] - 4 * MiB]
    vms = {v.uuid: v for v in (last.vms if last else [])}
    unmanaged = [u for u in uuids if u not in vms or vms[u].state !=
                 'running' or vms[u].wss_kb is None]
    by_code = {}
    for _, method, code, _ in inj.faults:
        by_code[code] = by_code.get(code, 0) + 1
    by_method = {}
    for _, method, code, _ in inj.faults:
        by_method[method] = by_method.get(method, 0) + 1
    for g in guests:
        try:
            g.destroy()
        except Exception as e:
            print('destroying guest %s: %s' % (g.uuid, e))
    return {
        'guests': args.guests, 'p': args.p, 'p_balloon': args.p_balloon,
        'seed': seed, 'load_before': load_before,
        'poll_interval_s': args.poll,
        'duration_s': args.duration, 'recovery_phase_s': args.recovery,
        'faults': len(inj.faults), 'faults_by_code': by_code,
        'faults_by_call': by_method, 'polls': len(polls),
        'polls_raised': crashes,
        'balloon_targets_applied': len(inj.balloons),
        'balloon_targets_raised_or_kept': sum(
            1 for _, u, kib in inj.balloons if kib <= floors[u]),
        'floor_violations': len(below), 'floor_violation_examples':
            below[:5], 'balloons_below_floor_at_end': len(below_end),
        'floors_kb': floors, 'balloon_actual_kb_at_end': actual,
        'guests_stopped': len(stopped), 'guests_stopped_detail': stopped,
        'unmanaged_after_recovery': len(unmanaged),
        'first_healthy_poll_after_faults_stop_s': first_healthy_after_stop,
        'recovery_s': {'p50': _pct(recoveries, 0.5),
                       'p99': _pct(recoveries, 0.99),
                       'max': max(recoveries) if recoveries else None,
                       'n': len(recoveries)},
        'poll_s': {'p50': _pct(polls, 0.5), 'p99': _pct(polls, 0.99)},
        'load_after': discipline.loadavg(),
    }


def campaign_memstore(factory, args):
    # 288 MiB touched in a guest of 256 MiB: steady swapping, every page
    # checksummed by memwork; memstore is killed while it serves.
    steps = [workloads.Step(288, args.kills * args.kill_every + 30)]
    g = factory(memory_mib=384, current_mib=256, schedule=steps, alloc='s',
                poweroff=True, swap='memstore', swap_mib=512,
                swap_quota_mib=64, stat_period=1, reconnect_delay=30)
    export = g.swap_server
    g.wait_for(r'MEMMUT-GUEST SWAP dev=/dev/vda', 30)
    g.wait_stat(lambda d: d['pswpout'] > 32 * 256, 120)
    back = []
    for _ in range(args.kills):
        time.sleep(args.kill_every)
        before = export.stats()['counters']['writes']
        export.process.kill(signal.SIGKILL)
        t0 = time.monotonic()
        export.process.start()
        # serving again: its counters move (the guest's client reconnected)
        deadline = t0 + 60
        while time.monotonic() < deadline:
            c = export.stats()['counters']
            if c['writes'] + c.get('reads', 0) > 0:
                break
            time.sleep(0.05)
        back.append(time.monotonic() - t0)
        del before
    done = g.wait_done(timeout=args.kills * args.kill_every + 300)
    ends = [d for d in g.workload_lines() if d['event'] == 'end']
    errors = done['errors'] + sum(e['errors'] for e in ends)
    result = {
        'kills': args.kills, 'kill_every_s': args.kill_every,
        'acknowledged_pages_lost': errors,
        'pages_verified': sum(e.get('verified', 0) for e in ends),
        'guest_finished': bool(done),
        'time_to_serve_again_s': {'p50': _pct(back, 0.5),
                                  'p99': _pct(back, 0.99),
                                  'max': max(back), 'values': back,
                                  'summary': discipline.summarize(back)},
    }
    g.destroy()
    return result


def campaign_diskfull(factory, args, work):
    """memstore's state directory on a tmpfs too small for what a guest
    swaps: writes past it must be refused (ENOSPC), memstore must live on
    and no page it acknowledged may be lost."""
    import subprocess
    import uuid as uuidlib
    from tests.harness import guest as guestmod
    from tests.harness import memstore as ms
    mnt = os.path.join(work, 'full-tmpfs')
    os.makedirs(mnt, exist_ok=True)
    subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=%dm'
                    % args.tmpfs_mib, 'tmpfs', mnt], check=True)
    proc = None
    try:
        proc = ms.MemstoreProcess(ms.find_binary(),
                                  os.path.join(mnt, 'state'),
                                  socket_dir=os.path.join(work, 'full-sock'))
        proc.start()
        name = str(uuidlib.uuid4())
        c = proc.client()
        try:
            c.create_export(name, 512 << 20, quota=16 << 20)
        finally:
            c.close()
        export = guestmod.MemstoreExport(proc, name)
        swap = domain.SwapDisk(nbd_socket=export.socket, nbd_export=name,
                               error_policy=args.error_policy)
        g = factory(memory_mib=384, current_mib=256,
                    schedule=[workloads.Step(288, 60)], alloc='s',
                    poweroff=True, swap=swap, uuid=name, stat_period=1)
        try:
            done = g.wait_done(timeout=400)
        except Exception as e:          # OOM or a hang: say which
            done = {'errors': None, 'outcome': '%s' % e}
        ends = [d for d in g.workload_lines() if d['event'] == 'end']
        log = g.log()
        state, reason = g.dom.state()
        alive = proc.proc.poll() is None
        counters = export.stats()['counters'] if alive else {}
        result = {
            'tmpfs_mib': args.tmpfs_mib, 'ram_quota_mib': 16,
            'error_policy': args.error_policy,
            # libvirt: 1 running, 3 paused (reason 3: I/O error)
            'domain_state': [state, reason],
            'memstore_alive': alive,
            'memstore_exit': proc.proc.poll(),
            'requests_refused': counters.get('errors'),
            'bytes_written': counters.get('write_bytes'),
            'guest_swap_write_errors': log.count('Write-error on swap'),
            'guest_oom_kills': log.count('Out of memory'),
            'memwork_finished': bool(ends),
            'acknowledged_pages_lost': sum(e['errors'] for e in ends)
            if ends else None,
            'memwork_outcome': done,
        }
        g.destroy()
        return result
    finally:
        if proc is not None:
            proc.stop()
        subprocess.run(['umount', '-l', mnt], check=False)


def _wait(what, check, timeout, interval=0.2):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        value = check()
        if value:
            return time.monotonic() - t0
        time.sleep(interval)
    raise RuntimeError('%s did not happen within %d s' % (what, timeout))


def campaign_services(factory, daemon, args, work, seed=None):
    """Agent SIGKILL mid-step, broker and database restarts, with
    memmut-agent and memmut-controller as processes over RabbitMQ and
    PostgreSQL and the agent managing real guests."""
    import pathlib
    import random
    from memmut.db import api as db_api
    from memmut.db import migration
    from tests.harness import services
    seed = args.seed if seed is None else seed
    rng = random.Random(seed)
    os.makedirs(work, exist_ok=True)
    pg = services.PrivatePostgres().start()
    rabbit = services.PrivateRabbit().start()
    host = 'faults-node'
    agent = controller = None
    try:
        url = pg.create_database()
        migration.upgrade(url)
        db = db_api.Database(url)
        schedule = workloads.shape_schedule('W3', 96, 40)
        guests = [factory(memory_mib=320, schedule=schedule, loops=0,
                          stat_period=1) for _ in range(2)]
        conf_file = services.write_service_conf(
            pathlib.Path(work) / 'services.conf', host, rabbit.url, url,
            daemon.memmut_options(),
            extra={'badis': {'round_interval': 5, 'floor_kb': 16 * MiB}})
        log = pathlib.Path(work)

        def start_agent():
            return services.ServiceProcess('memmut.cmd.agent', conf_file,
                                           log / 'agent.log').start()
        controller = services.ServiceProcess(
            'memmut.cmd.controller', conf_file, log / 'controller.log')
        controller.start()
        agent = start_agent()
        n = lambda: db.count_reports(host)        # noqa: E731
        _wait('first reports', lambda: n() >= 5, 120)
        recover = {'agent_sigkill': [], 'broker_restart': [],
                   'db_restart': []}
        for _ in range(args.agent_kills):
            time.sleep(rng.uniform(1.0, 6.0))       # anywhere in a step
            boots = {s.boot_id for s in db.host_samples(host)}
            agent.kill(signal.SIGKILL)
            agent = start_agent()
            recover['agent_sigkill'].append(_wait(
                'a report from the restarted agent',
                lambda: {s.boot_id for s in db.host_samples(host)} - boots,
                120))
        for kind, down, up in (
                ('broker_restart', rabbit.stop, rabbit.start),
                ('db_restart', pg.stop_server, pg.start_server)):
            for _ in range(args.restarts):
                time.sleep(rng.uniform(2.0, 5.0))
                before = n()
                down()
                time.sleep(args.outage)
                up()
                recover[kind].append(_wait(
                    'reports after the %s' % kind,
                    lambda: n() >= before + 2, 180))
        time.sleep(10)
        samples = db.host_samples(host)
        by_boot = {}
        for smp in samples:
            by_boot.setdefault(smp.boot_id, []).append(smp.seq)
        last_boot = samples[-1].boot_id
        # Reports still queued in a killed agent's memory die with it (by
        # design: they are a backlog, not a journal); what a run did store
        # must have no hole.
        gaps_running = 0
        for seqs in by_boot.values():
            seqs = sorted(seqs)
            gaps_running += len(set(range(1, seqs[-1] + 1)) - set(seqs))
        unmanaged = 0
        for g in guests:
            vs = db.vm_samples(g.uuid)
            if not vs or vs[-1].state != 'running' or vs[-1].wss_kb is None:
                unmanaged += 1
        below = sum(1 for g in guests if g.dom.memoryStats()['actual']
                    < CONFIGURED_FLOOR_KB)
        for g in guests:
            g.destroy()
        out = {'seed': seed, 'agent_kills': args.agent_kills,
               'broker_restarts': args.restarts, 'db_restarts':
               args.restarts, 'outage_s': args.outage,
               'reports_stored': len(samples), 'agent_runs': len(by_boot),
               'seq_gaps_in_stored_runs': gaps_running,
               'last_boot_reports': len(by_boot[last_boot]),
               'unmanaged_after_recovery': unmanaged,
               'balloons_below_floor_at_end': below}
        for kind, values in recover.items():
            out['recovery_%s_s' % kind] = {
                'p50': _pct(values, 0.5), 'p99': _pct(values, 0.99),
                'max': max(values) if values else None, 'values': values,
                'summary': discipline.summarize(values) if values
                else None}
        return out
    finally:
        for proc in (agent, controller):
            if proc is not None:
                proc.kill()
        rabbit.stop()
        pg.stop()


def campaign_load(factory, daemon, args):
    schedule = workloads.shape_schedule('W1', 32, 60)
    guests = [factory(memory_mib=160, schedule=schedule, loops=0,
                      wait_ready=False) for _ in range(args.load_guests)]
    for g in guests:
        g.wait_ready(timeout=600)
    conf = _conf(daemon, 5.0)
    drv = lv_driver.LibvirtDriver(conf)
    agent = manager.AgentManager(conf, drv, Recorder())
    times, cpu = [], []
    for _ in range(args.load_polls):
        t0, c0 = time.monotonic(), time.process_time()
        agent.poll_once()
        agent.flush()
        times.append(time.monotonic() - t0)
        cpu.append(time.process_time() - c0)
        time.sleep(max(0.0, 5.0 - times[-1]))
    for g in guests:
        g.destroy()
    return {'guests': args.load_guests, 'poll_interval_s': 5.0,
            'polls': len(times), 'poll_times_s': times,
            'poll_s': {'p50': _pct(times, 0.5), 'p99': _pct(times, 0.99),
                       'max': max(times)},
            'agent_cpu_s_per_poll': statistics.mean(cpu),
            'p99_under_interval': _pct(times, 0.99) < 5.0}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--sections',
                    default='libvirt,memstore,diskfull,services,load')
    ap.add_argument('--guests', type=int, default=4)
    ap.add_argument('--p', type=float, default=0.05)
    ap.add_argument('--p-balloon', type=float, default=0.3,
                    help='fault probability of balloon changes')
    ap.add_argument('--poll', type=float, default=0.25)
    ap.add_argument('--duration', type=float, default=600.0)
    ap.add_argument('--recovery', type=float, default=30.0)
    ap.add_argument('--seed', type=int, default=17)
    ap.add_argument('--kills', type=int, default=10)
    ap.add_argument('--kill-every', type=float, default=6.0)
    ap.add_argument('--tmpfs-mib', type=int, default=48)
    ap.add_argument('--error-policy', default='report',
                    help='libvirt error_policy of the swap disk (memmut '
                         'sets report; QEMU\'s default pauses on ENOSPC)')
    ap.add_argument('--agent-kills', type=int, default=10)
    ap.add_argument('--restarts', type=int, default=3)
    ap.add_argument('--outage', type=float, default=5.0)
    ap.add_argument('--load-guests', type=int, default=20)
    ap.add_argument('--load-polls', type=int, default=24)
    ap.add_argument('--repeats', type=int, default=1,
                    help='runs of every section, each with fresh guests '
                         '(and services, memstore, tmpfs) and, where '
                         'faults are drawn, seed --seed + repeat (the '
                         'interval is over them)')
    ap.add_argument('--lock', default='',
                    help='flock file each libvirt repeat and each other '
                         'section holds by itself (the TCG lock); then run '
                         'without flock(1)')
    ap.add_argument('--resume', action='store_true',
                    help='keep the repeats a section already has in the '
                         'result file and run only the missing ones, up to '
                         '--repeats in all (seeds go on from them)')
    ap.add_argument('--out', default=os.path.join(RESULTS, 'faults'))
    ap.add_argument('--report-only', action='store_true',
                    help='rewrite the .md from the .json, run nothing')
    args = ap.parse_args(argv)
    if args.report_only:
        with open(args.out + '.json') as f:
            res = json.load(f)
        with open(args.out + '.md', 'w') as f:
            f.write(faults_report.markdown(res))
        return
    sections = args.sections.split(',')
    daemon, img, work, factory = bed.start('memmut-faults-')
    res = {'machine': discipline.versions(), 'args': vars(args)}
    rec = discipline.Record(seed=args.seed, repeats=args.repeats)
    holds = []

    def hold(label):
        return discipline.lock_hold(args.lock, holds, label)
    old_discipline = {}

    def earlier(section):
        """With --resume: the section's runs already in the result file
        (those of a repeated run; a single earlier run is not one of
        them), which the repeats go on from."""
        if not args.resume:
            return []
        runs, d = faults_report.earlier_repeats(args.out, section)
        old_discipline[section] = d
        return runs
    try:
        if 'libvirt' in sections:
            runs = earlier('libvirt')
            for rep in range(len(runs), args.repeats):
                # fresh guests and a fault seed of their own per repeat
                with hold('libvirt-%d' % rep):
                    runs.append(campaign_libvirt(factory, daemon, args,
                                                 seed=args.seed + rep))
                print(json.dumps(runs[-1], indent=1, default=str))
                res['libvirt'] = faults_report.libvirt_repeats(runs)
                rec.finish()
                res['libvirt']['discipline'] = dict(rec.as_dict(),
                                                    holds=holds)
                if old_discipline.get('libvirt'):
                    res['libvirt']['earlier_discipline'] = \
                        old_discipline['libvirt']
                res['discipline'] = res['libvirt']['discipline']
                faults_report.save(args.out, res)
        if 'memstore' in sections:
            runs = earlier('memstore')
            for rep in range(len(runs), args.repeats):
                with hold('memstore-%d' % rep):
                    runs.append(campaign_memstore(factory, args))
                print(json.dumps(runs[-1], indent=1))
                res['memstore'] = faults_report.memstore_repeats(runs)
                # saved after every repeat: a stopped series keeps them
                res['discipline'] = dict(rec.as_dict(), holds=holds)
                faults_report.save(args.out, res)
        if 'diskfull' in sections:
            runs = earlier('diskfull')
            for rep in range(len(runs), args.repeats):
                # a fresh tmpfs, memstore and guest per repeat
                with hold('diskfull-%d' % rep):
                    runs.append(campaign_diskfull(factory, args, work))
                print(json.dumps(runs[-1], indent=1, default=str))
                res['diskfull'] = faults_report.diskfull_repeats(runs)
                res['discipline'] = dict(rec.as_dict(), holds=holds)
                faults_report.save(args.out, res)
        if 'services' in sections:
            runs = earlier('services')
            for rep in range(len(runs), args.repeats):
                # fresh services and guests, a kill schedule of their own
                with hold('services-%d' % rep):
                    runs.append(campaign_services(
                        factory, daemon, args, os.path.join(
                            work, 'services-%d' % rep),
                        seed=args.seed + rep))
                print(json.dumps(runs[-1], indent=1))
                res['services'] = faults_report.services_repeats(runs)
                res['discipline'] = dict(rec.as_dict(), holds=holds)
                faults_report.save(args.out, res)
        if 'load' in sections:
            runs = earlier('load')
            for rep in range(len(runs), args.repeats):
                # fresh guests per repeat
                with hold('load-%d' % rep):
                    runs.append(campaign_load(factory, daemon, args))
                print(json.dumps(runs[-1], indent=1))
                res['load'] = faults_report.load_repeats(runs)
                res['discipline'] = dict(rec.as_dict(), holds=holds)
                faults_report.save(args.out, res)
    finally:
        factory.cleanup()
        daemon.stop()
        shutil.rmtree(work, ignore_errors=True)
    rec.finish()
    res['discipline'] = dict(rec.as_dict(), holds=holds,
                             sections=sections)
    faults_report.save(args.out, res)


if __name__ == '__main__':
    main()
