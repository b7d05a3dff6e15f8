"""Micro-benchmark: what one report costs the controller to ingest.

The reports of ``bench_controller_scale`` (``--vms`` VMs each, libvirt
memoryStats and all) go through the controller's steps one at a time,
in this process, against a private PostgreSQL (tests/harness/services):

- ``json_loads``: the message body as the RPC transport decodes it;
- ``from_primitive``: :meth:`memmut.objects.HostReport.from_primitive`;
- ``check``: :func:`memmut.globals.allocations.report_problem`;
- ``store``: :meth:`memmut.db.api.Database.store_reports`, with the CPU
  the PostgreSQL server spent meanwhile (all its processes, /proc).

``--hosts`` hosts report ``--polls`` times each, every host once per
poll; the first poll creates the hosts and VMs and is left out of the
figures (steady state: every VM known). Then every report is sent again
(``resend``: must store nothing). Figures are per report: CPU ms of this
process (``time.process_time``), wall ms, PostgreSQL CPU ms.

``--batch`` stores that many reports per transaction
(:meth:`memmut.db.api.Database.store_reports`, what the controller's
report writer does under load); figures stay per report.

``--label`` names the run in the results (e.g. ``before``, ``after``);
a run replaces the one of the same label in ``--out``.json and the
Markdown is rewritten from all labels. ``--profile`` writes the cProfile
of the ``store`` step, sorted by own time, to ``--out``_<label>.prof.txt.
Not part of CI::

    .tox/functional/bin/python -m tests.benchmarks.bench_ingest \\
        --label after
"""

import argparse
import cProfile
import io
import json
import os
import pstats
import time
import uuid as uuidlib

from tests.benchmarks import bench_controller_scale as bcs

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, 'results')
GIB_KB = 1 << 20


def make_report(h, boot, s, t, start, vms):
    """One HostReport as bench_controller_scale's senders build it."""
    from memmut import objects
    return objects.HostReport(
        host=h, boot_id=boot, seq=s, timestamp=t, hypervisor='kvm',
        memory_total_kb=256 * GIB_KB, memory_free_kb=64 * GIB_KB,
        cpu_count=64, cpu_util=0.3, vms=[objects.VMReport(
            uuid=u, name='vm-%d' % j, timestamp=t, state='running',
            booked_kb=8 * GIB_KB, balloon_kb=8 * GIB_KB,
            memory_stats=bcs.memory_stats(t, j),
            cpu_time_ns=int((t - start) * 0.5e9) + j,
            nova_instance=True, wss_kb=3 * GIB_KB,
            wss_max_avg_kb=3 * GIB_KB, max_avg_window=5,
            max_avg_slice_s=3600.0, wss_estimator='badis',
            badis_mode='V') for j, u in enumerate(vms)])


def _ticks(path):
    try:
        with open(path) as f:
            fields = f.read().rsplit(')', 1)[1].split()
    except OSError:
        return 0, 0
    return int(fields[11]) + int(fields[12]), int(fields[13]) + int(
        fields[14])


def postgres_cpu(datadir):
    """CPU seconds of a PostgreSQL server so far: the postmaster, its
    live children and the children it has reaped."""
    with open(os.path.join(datadir, 'postmaster.pid')) as f:
        pm = int(f.readline())
    own, reaped = _ticks('/proc/%d/stat' % pm)
    total = own + reaped
    for pid in os.listdir('/proc'):
        if not pid.isdigit() or int(pid) == pm:
            continue
        try:
            with open('/proc/%s/stat' % pid) as f:
                fields = f.read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pm:
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf('SC_CLK_TCK')


class Meter:
    """Sums of this process's CPU, wall time and PostgreSQL CPU."""

    def __init__(self, datadir=None):
        self.datadir = datadir
        self.cpu = self.wall = self.pg = 0.0
        self.n = 0

    def __enter__(self):
        self._pg = postgres_cpu(self.datadir) if self.datadir else 0.0
        self._cpu = time.process_time()
        self._wall = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.wall += time.perf_counter() - self._wall
        self.cpu += time.process_time() - self._cpu
        if self.datadir:
            self.pg += postgres_cpu(self.datadir) - self._pg
        return False

    def per_report(self):
        n = max(1, self.n)
        out = {'reports': self.n, 'cpu_ms': 1e3 * self.cpu / n,
               'wall_ms': 1e3 * self.wall / n}
        if self.datadir:
            out['postgres_cpu_ms'] = 1e3 * self.pg / n
        return out


def run(args):
    from memmut.db import api as db_api
    from memmut.db import migration
    from memmut import objects
    from memmut.globals import allocations
    from tests.harness import services

    pg = services.PrivatePostgres().start()
    datadir = os.path.join(pg.dir, 'data')
    try:
        url = pg.create_database()
        migration.upgrade(url)
        db = db_api.Database(url)
        start = time.time() - args.polls * args.interval - 60
        hosts = ['sim-%05d' % i for i in range(args.hosts)]
        vms = {h: [str(uuidlib.uuid5(uuidlib.NAMESPACE_DNS,
                                     '%s-%d' % (h, j)))
                   for j in range(args.vms)] for h in hosts}
        boot = {h: str(uuidlib.uuid4()) for h in hosts}
        meters = {k: Meter() for k in ('json_loads', 'from_primitive',
                                       'check')}
        meters['store'] = Meter(datadir)
        meters['resend'] = Meter(datadir)
        first = Meter(datadir)
        prof = cProfile.Profile() if args.profile else None
        sent = []
        batch = []
        body_bytes = 0
        for poll in range(args.polls):
            for i, h in enumerate(hosts):
                t = start + poll * args.interval + i * args.interval / len(
                    hosts)
                body = json.dumps(make_report(h, boot[h], poll + 1, t, start,
                                              vms[h]).to_primitive())
                body_bytes += len(body)
                steady = poll > 0
                with meters['json_loads']:
                    prim = json.loads(body)
                with meters['from_primitive']:
                    report = objects.HostReport.from_primitive(prim)
                with meters['check']:
                    problem = allocations.report_problem(
                        report, t + 1, 3600.0)
                assert problem is None, problem
                for k in ('json_loads', 'from_primitive', 'check'):
                    meters[k].n += steady
                batch.append(report)
                if len(batch) < args.batch and i < len(hosts) - 1:
                    continue
                meter = meters['store'] if steady else first
                with meter:
                    if steady and prof:
                        prof.enable()
                    stored = db.store_reports(batch)
                    if steady and prof:
                        prof.disable()
                assert all(stored), (h, poll)
                sent.extend(batch)
                meter.n += len(batch)
                batch = []
        for i in range(0, len(sent), args.batch):
            with meters['resend']:
                stored = db.store_reports(sent[i:i + args.batch])
            assert not any(stored), i
            meters['resend'].n += len(stored)
        counts = dict(reports=db.count_reports())
        db.close()
        assert counts['reports'] == len(sent), counts
        res = {'label': args.label, 'hosts': args.hosts, 'vms': args.vms,
               'batch': args.batch,
               'polls': args.polls, 'body_bytes': body_bytes / len(sent),
               'first_poll': first.per_report(),
               'steps': {k: m.per_report() for k, m in meters.items()}}
        ctrl = sum(res['steps'][k]['cpu_ms'] for k in (
            'json_loads', 'from_primitive', 'check', 'store'))
        res['controller_cpu_ms'] = ctrl
        res['postgres_cpu_ms'] = res['steps']['store']['postgres_cpu_ms']
        if prof:
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats('tottime').print_stats(
                40)
            res['profile'] = '%s_%s.prof.txt' % (args.out, args.label)
            with open(res['profile'], 'w') as f:
                f.write(out.getvalue())
            res['profile'] = os.path.basename(res['profile'])
        return res
    finally:
        pg.stop()


def markdown(doc):
    from tests.benchmarks import discipline
    rows = []
    for r in doc['runs']:
        s = r['steps']
        rows.append([r['label'], r.get('commit', '-'), r['hosts'], r['vms'],
                     r.get('batch', 1), r['polls'] - 1,
                     '%.2f' % s['json_loads']['cpu_ms'],
                     '%.2f' % s['from_primitive']['cpu_ms'],
                     '%.2f' % s['check']['cpu_ms'],
                     '%.2f / %.2f' % (s['store']['cpu_ms'],
                                      s['store']['wall_ms']),
                     '%.2f' % s['store']['postgres_cpu_ms'],
                     '%.2f' % r['controller_cpu_ms'],
                     '%.2f / %.2f' % (s['resend']['cpu_ms'],
                                      s['resend']['postgres_cpu_ms']),
                     '%.2f' % r['first_poll']['cpu_ms']])
    return '\n'.join([
        '# Ingesting one report (issue 19 item 6)', '',
        'Produced by `tests/benchmarks/bench_ingest.py`: the reports of '
        '`bench_controller_scale` (30 VMs with libvirt memoryStats, '
        '~%d bytes of JSON) through the controller\'s steps in one '
        'process, against a private PostgreSQL (fsync off) on the same '
        '2-core machine. Milliseconds per report; steady state (every VM '
        'already known; the first poll, which creates them, apart). '
        'Reports per transaction: `--batch`, what the controller\'s report '
        'writer stores together under load (`[controller] '
        'report_batch_size`; 1 before it).' % (
            doc['runs'][0]['body_bytes'] if doc['runs'] else 0), '',
        discipline.markdown_table(
            ['label', 'commit', 'hosts', 'VMs/host', 'reports per '
             'transaction', 'polls timed',
             'json loads (ms)', 'from_primitive (ms)', 'check (ms)',
             'storing CPU / wall (ms)', 'PostgreSQL CPU (ms)',
             'controller CPU (ms)', 'resend CPU / PostgreSQL (ms)',
             'first poll CPU (ms)'], rows), '',
        'Controller CPU is the sum of the four steps in this process (not '
        'the oslo.messaging/kombu transport around them); PostgreSQL CPU '
        'is the server\'s, all processes, while storing; resend: '
        'the same reports again (stored nothing, as they must).', ''] +
        doc.get('notes', []))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--hosts', type=int, default=200)
    ap.add_argument('--vms', type=int, default=30)
    ap.add_argument('--polls', type=int, default=6)
    ap.add_argument('--interval', type=float, default=60.0)
    ap.add_argument('--label', default='run')
    ap.add_argument('--batch', type=int, default=1,
                    help='reports per transaction (Database.store_reports, '
                    'the controller\'s report_batch_size)')
    ap.add_argument('--profile', action='store_true')
    ap.add_argument('--out', default=os.path.join(RESULTS, 'ingest'))
    args = ap.parse_args(argv)
    from tests.benchmarks import discipline
    res = run(args)
    res['commit'] = (discipline.versions().get('memmut_commit') or '-')[:12]
    res['command'] = 'python -m tests.benchmarks.bench_ingest ' + ' '.join(
        argv if argv is not None else os.sys.argv[1:])
    doc = {'runs': []}
    if os.path.exists(args.out + '.json'):
        with open(args.out + '.json') as f:
            doc = json.load(f)
    doc['runs'] = [r for r in doc['runs'] if r['label'] != args.label]
    doc['runs'].append(res)
    with open(args.out + '.json', 'w') as f:
        json.dump(doc, f, indent=1)
    with open(args.out + '.md', 'w') as f:
        f.write(markdown(doc))
    print(json.dumps(res, indent=1))


if __name__ == '__main__':
    main()
