"""Benchmark: the controller at scale (issue 19).

Simulated agents — sender processes speaking the controller's real RPC API
(``report``, version 1.3, one context per simulated host) over a private
RabbitMQ — report ``--hosts`` hosts of ``--vms`` VMs each, every host once
per ``--interval`` seconds at its own phase, for ``--duration`` seconds,
into ``--controllers`` memmut-controller processes (the same topic:
RabbitMQ shares the reports between them) over a private PostgreSQL.
Meanwhile one consolidation round (dry run, ``memmut-consolidate run``)
runs, and controller 0 is SIGKILLed at mid-run and restarted
(``--kill-controller``).

A report whose call fails or times out is sent again later with the same
(boot id, seq), as an agent's backlog does. Measured: ingestion latency
(send to the controller's "stored" answer) p50/p99, ingestion lag (from
the report's making to that answer: the time it waited for a sender
thread and its resends too) p50/p99, reports generated vs
stored (lost or doubled: goal 0), the round's wall time, the database's
growth per simulated day, the controllers' CPU, and the CPU per stored
report of every part (controllers, PostgreSQL, RabbitMQ, senders).

One machine plays every part here (senders, broker, database, controllers
on 2 shared cores), so the figures are a floor for a real control plane,
not a ceiling. Every (hosts, controllers) configuration runs
``--repeats`` times in a blocked random order (tests/benchmarks/
discipline.py); each run holds the TCG lock by itself (``--lock``), so
that no guest benchmark runs beside it and no hold lasts longer than a
run; the summary gives each figure's mean with its 95 % interval, and the
versions and the machine's load. Writes tests/benchmarks/results/
controller_scale.json and .md (run it without ``flock``)::

    .tox/functional/bin/python -m \\
        tests.benchmarks.bench_controller_scale --hosts 1000 --repeats 3

Not part of CI.
"""

import argparse
import concurrent.futures
import json
import os
import pathlib
import resource
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid as uuidlib

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, 'results')
GIB_KB = 1 << 20


def _pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values \
        else None


# -- the sender (a child process) --------------------------------------------


def memory_stats(t, j):
    """What libvirt's memoryStats() gives for a Linux guest with a
    balloon driver (the keys an agent stores with each sample)."""
    n = int(t) + j
    return {'actual': 8 * GIB_KB, 'swap_in': n % 97, 'swap_out': n % 89,
            'major_fault': 1000 + n % 1013, 'minor_fault': 500000 + n,
            'unused': 4 * GIB_KB + n % 4096, 'available': 8 * GIB_KB - 2048,
            'usable': 5 * GIB_KB + n % 8192, 'last_update': int(t),
            'disk_caches': GIB_KB + n % 1024, 'hugetlb_pgalloc': 0,
            'hugetlb_pgfail': 0, 'rss': 8 * GIB_KB + 40000}


def sender(args):
    from oslo_config import cfg
    import oslo_messaging as messaging

    from memmut import conf as memmut_conf
    from memmut.globals import rpcapi
    from memmut import objects
    from memmut import rpc

    conf = cfg.ConfigOpts()
    memmut_conf.register_opts(conf)
    rpc.set_defaults(conf)
    conf(['--config-file', args.conf], project='memmut')
    client = rpc.get_client(rpc.get_transport(conf), conf.controller_topic,
                            rpcapi.VERSION)
    hosts = ['sim-%05d' % i for i in range(args.first,
                                           args.first + args.count)]
    vms = {h: [str(uuidlib.uuid5(uuidlib.NAMESPACE_DNS, '%s-%d' % (h, j)))
               for j in range(args.vms)] for h in hosts}
    boot = {h: str(uuidlib.uuid4()) for h in hosts}
    seq = dict.fromkeys(hosts, 0)
    pending = []                 # reports to send again
    in_flight = [0]
    lock = threading.Lock()
    out = open(args.out, 'w')
    start = time.time()

    def build(h, s, t):
        return objects.HostReport(
            host=h, boot_id=boot[h], seq=s, timestamp=t, hypervisor='kvm',
            memory_total_kb=256 * GIB_KB, memory_free_kb=64 * GIB_KB,
            cpu_count=64, cpu_util=0.3, vms=[objects.VMReport(
                uuid=u, name='vm-%d' % j, timestamp=t, state='running',
                booked_kb=8 * GIB_KB, balloon_kb=8 * GIB_KB,
                memory_stats=memory_stats(t, j),
                cpu_time_ns=int((t - start) * 0.5e9) + j,
                nova_instance=True, wss_kb=3 * GIB_KB,
                wss_max_avg_kb=3 * GIB_KB, max_avg_window=5,
                max_avg_slice_s=3600.0, wss_estimator='badis',
                badis_mode='V') for j, u in enumerate(vms[h])])

    def send(h, s, t):
        report = build(h, s, t)
        t0 = time.time()
        try:
            client.prepare(timeout=args.timeout).call(
                {'host': h}, 'report', report=report.to_primitive())
            ok = True
        except messaging.MessagingException:
            ok = False
        dt = time.time() - t0
        with lock:
            out.write(json.dumps([h, s, t0, dt, ok, t]) + '\n')
            if not ok:
                pending.append((h, s, t))
            in_flight[0] -= 1

    def submit(pool, *item):
        with lock:
            in_flight[0] += 1
        pool.submit(send, *item)

    with concurrent.futures.ThreadPoolExecutor(args.threads) as pool:
        n = len(hosts)
        step = args.interval / max(1, n)
        k = 0
        while time.time() - start < args.duration:
            h = hosts[k % n]
            due = start + k * step
            time.sleep(max(0.0, due - time.time()))
            seq[h] += 1
            submit(pool, h, seq[h], time.time())
            k += 1
            with lock:
                retry, pending[:] = list(pending), []
            for item in retry:
                submit(pool, *item)
        # drain: resend until every report is acknowledged (bounded)
        deadline = time.time() + args.drain
        while time.time() < deadline:
            time.sleep(0.5)
            with lock:
                retry, pending[:] = list(pending), []
                idle = not retry and in_flight[0] == 0
            if idle:
                break
            for item in retry:
                submit(pool, *item)
    out.close()
    with open(args.out + '.sum', 'w') as f:
        json.dump({'generated': sum(seq.values())}, f)


# -- the driver ---------------------------------------------------------------


def _pg_size(url):
    import sqlalchemy as sa
    eng = sa.create_engine(url)
    with eng.connect() as c:
        size = c.execute(sa.text(
            'SELECT pg_database_size(current_database())')).scalar()
    eng.dispose()
    return int(size)


def _tables(url):
    """{table: (rows, bytes with indexes and TOAST)} of the sample tables
    (after ANALYZE-free exact counts)."""
    import sqlalchemy as sa
    eng = sa.create_engine(url)
    out = {}
    with eng.connect() as c:
        for t in ('vm_samples', 'vm_sample_rollups', 'host_samples'):
            rows = c.execute(sa.text('SELECT count(*) FROM %s' % t)).scalar()
            size = c.execute(sa.text(
                "SELECT pg_total_relation_size('%s')" % t)).scalar()
            out[t] = (int(rows), int(size))
    eng.dispose()
    return out


def _stored_reports(url):
    """{(host name, seq)} of the reports stored (one boot per simulated
    host)."""
    import sqlalchemy as sa
    eng = sa.create_engine(url)
    with eng.connect() as c:
        rows = c.execute(sa.text(
            'SELECT h.name, s.seq FROM host_samples s '
            'JOIN hosts h ON h.id = s.host_id'))
        out = {(name, seq) for name, seq in rows}
    eng.dispose()
    return out


def _cpu_seconds(pid):
    try:
        with open('/proc/%d/stat' % pid) as f:
            fields = f.read().rsplit(')', 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf(
            'SC_CLK_TCK')
    except OSError:
        return 0.0


def run(args):
    from memmut.db import api as db_api
    from memmut.db import migration
    from tests.benchmarks import proccpu
    from tests.harness import services
    work = pathlib.Path(tempfile.mkdtemp(prefix='memmut-scale-'))
    pg = services.PrivatePostgres().start()
    rabbit = services.PrivateRabbit().start()
    controllers, senders = [], []
    try:
        url = pg.create_database()
        migration.upgrade(url)
        conf_file = work / 'memmut.conf'
        conf_file.write_text(
            '[DEFAULT]\nhost = controller-0\ntransport_url = %s\n'
            'rpc_response_timeout = %d\nexecutor_thread_pool_size = %d\n'
            '[database]\nconnection = %s\n'
            '[controller]\nhost_down_after = %d\n'
            'raw_sample_retention = %d\nreport_batch_size = %d\n'
            'report_writers = %d\n'
            '[consolidation]\ninterval = %d\nhistory_length = 6\n'
            % (rabbit.url, args.timeout, args.pool, url,
               3 * args.interval, args.raw_retention, args.batch,
               args.writers, args.round_interval))
        size0 = _pg_size(url)

        def start_controller(i):
            cfile = work / ('controller-%d.conf' % i)
            cfile.write_text(conf_file.read_text().replace(
                'host = controller-0', 'host = controller-%d' % i))
            return services.ServiceProcess(
                'memmut.cmd.controller', str(cfile),
                work / ('controller-%d.log' % i)).start()
        controllers = [start_controller(i) for i in range(args.controllers)]
        time.sleep(5)
        per = -(-args.hosts // args.senders)
        for i in range(args.senders):
            first = i * per
            count = min(per, args.hosts - first)
            if count <= 0:
                break
            out = work / ('sender-%d.jsonl' % i)
            senders.append((out, subprocess.Popen(
                [sys.executable, '-m', 'tests.benchmarks.'
                 'bench_controller_scale', 'sender', '--conf',
                 str(conf_file), '--first', str(first), '--count',
                 str(count), '--vms', str(args.vms), '--interval',
                 str(args.interval), '--duration', str(args.duration),
                 '--timeout', str(args.timeout), '--threads',
                 str(args.threads), '--out', str(out)])))
        t0 = time.time()
        cpu0 = {}
        # CPU of every part (controllers, PostgreSQL, RabbitMQ, senders)
        # from t0: the newest reading of each process tree.
        with open(os.path.join(pg.dir, 'data', 'postmaster.pid')) as f:
            pg_pid = int(f.readline())
        servers = {'postgres': pg_pid, 'rabbitmq': rabbit.proc.pid}
        parts0 = proccpu.trees_seconds(
            list(servers.values()) + [c.proc.pid for c in controllers])
        busy0 = proccpu.machine_busy_seconds()
        parts = {}

        def read_parts():
            pids = {('controllers', c.proc.pid) for c in controllers}
            pids |= {('senders', p.pid) for _, p in senders
                     if p.poll() is None}
            pids |= set(servers.items())
            now = proccpu.trees_seconds([pid for _, pid in pids])
            for key in pids:
                if now[key[1]] is not None:
                    parts[key] = now[key[1]] - (parts0.get(key[1]) or 0.0)
        killed_at = round_s = round_cpu = None
        round_out = ''
        while any(p.poll() is None for _, p in senders):
            el = time.time() - t0
            if args.kill_controller and killed_at is None and \
                    el > args.duration / 2:
                read_parts()
                os.killpg(controllers[0].proc.pid, signal.SIGKILL)
                controllers[0].proc.wait()
                controllers[0].log.close()
                killed_at = el
                time.sleep(2)
                controllers[0] = start_controller(0)
            if round_s is None and el > args.duration * 0.6:
                r0 = time.time()
                ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                done = subprocess.run(
                    [sys.executable, '-m', 'memmut.cmd.consolidate',
                     '--config-file', str(conf_file), 'run', '--dry-run'],
                    capture_output=True, text=True)
                round_s = time.time() - r0
                ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                round_cpu = (ru1.ru_utime + ru1.ru_stime -
                             ru0.ru_utime - ru0.ru_stime)
                round_out = (done.stdout or done.stderr).strip()[:300]
            for c in controllers:
                cpu0.setdefault(c.proc.pid, 0.0)
                cpu0[c.proc.pid] = _cpu_seconds(c.proc.pid)
            read_parts()
            time.sleep(1)
        read_parts()
        wall = time.time() - t0
        busy = proccpu.machine_busy_seconds() - busy0
        lat, lag, failed, generated = [], [], 0, 0
        made_lag = []
        acked = set()
        for out, _ in senders:
            with open(out) as f:
                for line in f:
                    h, s, ts, dt, ok, made = json.loads(line)
                    if ok:
                        acked.add((h, s))
                        lat.append(dt)
                        # from the report's making to its storing: the
                        # time it queued in the sender and its resends too
                        lag.append(ts + dt - made)
                        made_lag.append((made, ts + dt - made))
                    else:
                        failed += 1
            with open(str(out) + '.sum') as f:
                generated += json.load(f)['generated']
        last = last_interval_lag(made_lag, args.interval)
        db = db_api.Database(url)
        stored = db.count_reports()
        unstored = acked - _stored_reports(url)
        if args.raw_retention:
            # The rollups the housekeeping has not reached yet.
            db.rollup_samples(time.time() - args.raw_retention,
                              args.round_interval)
        tables = _tables(url)
        size1 = _pg_size(url)
        growth = size1 - size0
        per_day = growth * 86400.0 / max(1.0, args.duration)
        res = {
            'hosts': args.hosts, 'vms_per_host': args.vms,
            'interval_s': args.interval, 'duration_s': args.duration,
            'controllers': args.controllers, 'senders': args.senders,
            'reports_per_s_offered': args.hosts / args.interval,
            'reports_generated': generated, 'reports_stored': stored,
            'lost_or_doubled': generated - stored,
            # A report the controller said it stored must be stored (0);
            # a report never acknowledged (still failing when the senders
            # stopped resending) is the senders' backlog, not a loss.
            'acknowledged': len(acked),
            'acknowledged_not_stored': len(unstored),
            'never_acknowledged': generated - len(acked),
            'failed_calls_resent': failed,
            'latency_s': {'p50': _pct(lat, 0.5), 'p99': _pct(lat, 0.99),
                          'max': max(lat) if lat else None},
            'lag_s': {'p50': _pct(lag, 0.5), 'p99': _pct(lag, 0.99),
                      'max': max(lag) if lag else None},
            # the reports made in the last interval: whether the
            # controller keeps up once the restart's backlog is behind
            'lag_last_interval_s': {'p50': _pct(last, 0.5),
                                    'p99': _pct(last, 0.99)},
            'lag_series_s': lag_series(made_lag),
            'controller_killed_at_s': killed_at,
            'round_wall_s': round_s, 'round_output': round_out,
            'db_growth_bytes': growth,
            'db_bytes_per_day': per_day,
            'round_interval_s': args.round_interval,
            'raw_sample_retention_s': args.raw_retention,
            'report_batch_size': args.batch,
            'report_writers': args.writers,
            'tables': tables,
            'history_per_day': history_per_day(args, tables),
            'controller_cpu_s': sum(cpu0.values()),
            'cpu_s': cpu_by_part(parts, round_cpu),
            'cpu_ms_per_report': {
                k: 1e3 * v / max(1, stored)
                for k, v in cpu_by_part(parts, round_cpu).items()},
            'machine_busy_cores': busy / wall,
            'controller_cpu_share_of_a_core': sum(cpu0.values()) / wall,
            'wall_s': wall,
        }
        return res
    finally:
        for _, p in senders:
            if p.poll() is None:
                p.kill()
        for c in controllers:
            c.kill()
        rabbit.stop()
        pg.stop()


def cpu_by_part(parts, round_cpu):
    """CPU seconds by part from {(part, pid): seconds}, their total, and
    the consolidation round's (not in the total: one per round)."""
    out = {}
    for (part, _), v in parts.items():
        out[part] = out.get(part, 0.0) + v
    out['total'] = sum(out.values())
    out['round'] = round_cpu
    return out


def history_per_day(args, tables):
    """Bytes per day per 1000 hosts of the sample tables, from the bytes
    per row measured here: raw VM samples (one per VM and poll), rollups
    (one per VM and round interval), host samples (one per host and
    poll); and what stays stored with raw samples kept for
    ``raw_day_fraction`` of a day."""
    polls = 86400.0 / args.interval
    vms = 1000.0 * args.vms

    def per_row(table):
        rows, size = tables.get(table, (0, 0))
        return size / rows if rows else None
    raw, roll, host = (per_row('vm_samples'), per_row('vm_sample_rollups'),
                       per_row('host_samples'))
    out = {'bytes_per_raw_vm_sample': raw,
           'bytes_per_rollup': roll,
           'bytes_per_host_sample': host,
           'raw_vm_samples': raw and raw * vms * polls,
           'host_samples': host and host * 1000.0 * polls}
    if roll:
        out['rollups'] = roll * vms * 86400.0 / args.round_interval
    return out


def lag_series(made_lag, step=30.0):
    """The lag p50 and p99 of the reports made in each ``step`` seconds
    of the sending, from ``(made, lag)`` pairs: ``[[from_s, n, p50,
    p99], ...]`` (from the first report's making). Where a restart's
    backlog starts and whether it drains."""
    if not made_lag:
        return []
    t0 = min(m for m, _ in made_lag)
    bins = {}
    for m, lag in made_lag:
        bins.setdefault(int((m - t0) // step), []).append(lag)
    return [[k * step, len(v), _pct(v, 0.5), _pct(v, 0.99)]
            for k, v in sorted(bins.items())]


def last_interval_lag(made_lag, interval):
    """The lags of the reports made in the last ``interval`` seconds of
    the sending, from ``(made, lag)`` pairs (every host reports once in
    it)."""
    if not made_lag:
        return []
    end = max(m for m, _ in made_lag)
    return [lag for m, lag in made_lag if m > end - interval]


def markdown(results, doc=None):
    from tests.benchmarks import discipline
    rows = []
    for r in results:
        rows.append([r['hosts'], r['controllers'], r.get('repeat', 0),
                     '%.1f' % r['reports_per_s_offered'],
                     '%.3f / %.3f' % (r['latency_s']['p50'] or 0,
                                      r['latency_s']['p99'] or 0),
                     '%.3f / %.3f' % (r['lag_s']['p50'] or 0,
                                      r['lag_s']['p99'] or 0)
                     if r.get('lag_s') else '-',
                     '%.3f / %.3f' % (r['lag_last_interval_s']['p50'] or 0,
                                      r['lag_last_interval_s']['p99'] or 0)
                     if r.get('lag_last_interval_s') else '-',
                     r['lost_or_doubled'],
                     '%d / %d' % (r['acknowledged_not_stored'],
                                  r['never_acknowledged'])
                     if 'acknowledged' in r else '-',
                     r['failed_calls_resent'],
                     '%.1f' % (r['round_wall_s'] or 0),
                     '%.2f' % (r['db_bytes_per_day'] / 2 ** 30),
                     '%.2f' % r['controller_cpu_share_of_a_core']])
    store = []
    gib = 2.0 ** 30
    for r in results:
        h = r.get('history_per_day')
        if not h:
            continue
        store.append([
            r['hosts'], r['raw_sample_retention_s'] or 'off',
            r['round_interval_s'],
            ', '.join('%s %d rows %.1f MiB' % (t, n, b / 2.0 ** 20)
                      for t, (n, b) in sorted(r['tables'].items())),
            '%.0f' % (h['bytes_per_raw_vm_sample'] or 0),
            '%.0f' % (h['bytes_per_rollup'] or 0),
            '%.2f' % ((h['raw_vm_samples'] or 0) / gib),
            '%.2f' % (h.get('rollups', 0) / gib),
            '%.2f' % ((h['host_samples'] or 0) / gib)])
    cpu = []
    for r in results:
        c = r.get('cpu_ms_per_report')
        if c:
            cpu.append([r['hosts'], r['controllers'], r.get('repeat', 0),
                        r['reports_stored']] + [
                '%.1f' % (c.get(k) or 0) for k in (
                    'controllers', 'postgres', 'rabbitmq', 'senders',
                    'total')] + [
                '%.1f' % (r['cpu_s']['round'] or 0),
                '%.2f' % r['machine_busy_cores']])
    extra = []
    if cpu:
        extra += ['', 'CPU per stored report by part (ms; each process '
                  'tree from the senders\' start to their end, reaped '
                  'children included), the round\'s CPU and how many of '
                  'the 2 cores the machine kept busy:', '',
                  discipline.markdown_table(
                      ['hosts', 'controllers', 'repeat', 'reports stored',
                       'controllers', 'PostgreSQL', 'RabbitMQ', 'senders',
                       'total', 'round CPU (s)', 'busy cores'], cpu)]
    if store:
        extra += ['', 'Sample tables at the end of the run, and what '
                  'they cost per day per 1000 hosts at the bytes per row '
                  'measured:', '', discipline.markdown_table(
                      ['hosts', 'raw retention (s)', 'rollup interval (s)',
                       'tables', 'B/raw VM sample', 'B/rollup',
                       'raw VM samples GiB/day', 'rollups GiB/day',
                       'host samples GiB/day'], store)]
    summary = []
    if doc:
        d = doc['discipline']
        fmt = discipline.fmt
        srows = [[s['hosts'], s['controllers'],
                  fmt(s['latency_p50_s'], '.3f'),
                  fmt(s['latency_p99_s'], '.3f'),
                  fmt(s['lag_p99_s'], '.3f') if s.get('lag_p99_s')
                  else '-',
                  fmt(s['round_wall_s'], '.1f') if s['round_wall_s']
                  else '-', fmt(s['controller_cores'], '.2f'),
                  'yes' if s['none_lost_or_doubled'] else 'NO']
                 for s in doc['summary']]
        summary = [
            'Command: `%s`; %d repeat(s) per configuration in a blocked '
            'random order (seed %d), each run one hold of the TCG lock; '
            'load average %s before, %s after; versions: %s.' % (
                doc['command'], d['repeats'], d['seed'], d['load_before'],
                d['load_after'], ', '.join(
                    '%s %s' % (k, (v or '-')[:12] if isinstance(v, str)
                               else v) for k, v in d['versions'].items())),
            '', 'Mean ± 95 % t-interval half-width over the repeats '
            '(± ? with one repeat):', '',
            discipline.markdown_table(
                ['hosts', 'controllers', 'latency p50 (s)',
                 'latency p99 (s)', 'lag p99 (s)', 'round (s)',
                 'controller cores',
                 'none lost or doubled (every repeat)'], srows),
            '', 'Every run:', '']
    return '\n'.join([
        '# The controller at scale (issue 19)', '',
        'Produced by `tests/benchmarks/bench_controller_scale.py`; every '
        'part on one 2-core machine.', ''] + summary + [
        discipline.markdown_table(
            ['hosts', 'controllers', 'repeat', 'reports/s',
             'latency p50 / p99 (s)', 'lag p50 / p99 (s)',
             'lag in the last interval p50 / p99 (s)',
             'lost or doubled', 'acknowledged not stored / never '
             'acknowledged', 'calls resent', 'round (s)',
             'DB GiB/day', 'controller cores'], rows)] + extra + [''])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd')
    s = sub.add_parser('sender')
    s.add_argument('--conf', required=True)
    s.add_argument('--first', type=int, required=True)
    s.add_argument('--count', type=int, required=True)
    s.add_argument('--vms', type=int, default=30)
    s.add_argument('--interval', type=float, default=60.0)
    s.add_argument('--duration', type=float, default=180.0)
    s.add_argument('--timeout', type=int, default=30)
    s.add_argument('--threads', type=int, default=32)
    s.add_argument('--drain', type=float, default=120.0)
    s.add_argument('--out', required=True)
    ap.add_argument('--hosts', default='1000',
                    help='comma-separated host counts, one run each')
    ap.add_argument('--vms', type=int, default=30)
    ap.add_argument('--interval', type=int, default=60)
    ap.add_argument('--duration', type=float, default=180.0)
    ap.add_argument('--controllers', default='1',
                    help='comma-separated controller counts')
    ap.add_argument('--senders', type=int, default=2)
    ap.add_argument('--threads', type=int, default=32)
    ap.add_argument('--timeout', type=int, default=30)
    ap.add_argument('--pool', type=int, default=64)
    ap.add_argument('--round-interval', type=int, default=300,
                    help='[consolidation] interval (the rollups\' too)')
    ap.add_argument('--raw-retention', type=int, default=0,
                    help='[controller] raw_sample_retention (0: no '
                         'rollups)')
    ap.add_argument('--batch', type=int, default=64,
                    help='[controller] report_batch_size (1: one '
                         'transaction per report, as before group commit)')
    ap.add_argument('--writers', type=int, default=2,
                    help='[controller] report_writers')
    ap.add_argument('--no-kill', dest='kill_controller',
                    action='store_false')
    ap.add_argument('--out', default=os.path.join(RESULTS,
                                                  'controller_scale'))
    ap.add_argument('--repeats', type=int, default=3,
                    help='runs of every (hosts, controllers) configuration '
                         '(default %(default)s)')
    ap.add_argument('--seed', type=int, default=19)
    ap.add_argument('--lock', default='/tmp/memmut-tcg.lock',
                    help='flock file each run holds ("" for none)')
    args = ap.parse_args(argv)
    if args.cmd == 'sender':
        args.drain = getattr(args, 'drain', 120.0)
        return sender(args)
    from tests.benchmarks import discipline
    configs = [(int(h), int(c)) for h in args.hosts.split(',')
               for c in args.controllers.split(',')]
    rec = discipline.Record(seed=args.seed, repeats=args.repeats)
    order = discipline.blocked_order(configs, args.repeats, args.seed)
    rec.orders['runs'] = [[h, c, r] for (h, c), r in order]
    results, holds = [], []
    for (hosts, n), rep in order:
        one = argparse.Namespace(**vars(args))
        one.hosts, one.controllers = hosts, n
        # one run per hold of the lock: no guest benchmark beside it
        with discipline.lock_hold(args.lock, holds, [hosts, n, rep]):
            load = discipline.loadavg()
            r = run(one)
        r.update(repeat=rep, load_before=load)
        print(json.dumps(r, indent=1))
        results.append(r)
    rec.finish()
    doc = {'command': 'python -m tests.benchmarks.bench_controller_scale '
                      + shlex.join(argv if argv is not None
                                   else sys.argv[1:]),
           'discipline': rec.as_dict(), 'holds': holds,
           'summary': summarize_runs(results), 'runs': results}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out + '.json', 'w') as f:
        json.dump(doc, f, indent=1)
    with open(args.out + '.md', 'w') as f:
        f.write(markdown(results, doc))
    print('wrote %s.json and .md' % args.out)


# the figures of a run summarized over its repeats (mean, 95 % interval)
SUMMARIZED = (('latency_p50_s', lambda r: r['latency_s']['p50']),
              ('latency_p99_s', lambda r: r['latency_s']['p99']),
              ('lag_p99_s', lambda r: r.get('lag_s', {}).get('p99')),
              ('lost_or_doubled', lambda r: r['lost_or_doubled']),
              ('failed_calls_resent', lambda r: r['failed_calls_resent']),
              ('round_wall_s', lambda r: r['round_wall_s']),
              ('db_gib_per_day', lambda r: r['db_bytes_per_day'] / 2 ** 30),
              ('controller_cores',
               lambda r: r['controller_cpu_share_of_a_core']))


def summarize_runs(results):
    """Per (hosts, controllers): every figure of SUMMARIZED over the
    repeats, with its 95 % interval (discipline.summarize), and the goal
    of no report lost or doubled, which holds only if no repeat lost
    one."""
    from tests.benchmarks import discipline
    by = {}
    for r in results:
        by.setdefault((r['hosts'], r['controllers']), []).append(r)
    out = []
    for (hosts, n), rs in sorted(by.items()):
        row = {'hosts': hosts, 'controllers': n, 'n': len(rs)}
        for key, get in SUMMARIZED:
            vals = [get(r) for r in rs if get(r) is not None]
            row[key] = discipline.summarize(vals) if vals else None
        row['none_lost_or_doubled'] = all(r['lost_or_doubled'] == 0
                                          for r in rs)
        out.append(row)
    return out


if __name__ == '__main__':
    main()
