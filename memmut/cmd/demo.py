"""memmut-demo: memmut's main job on its embedded default.

Controller and agent run in this one process, over the in-process RPC
transport, with an embedded SQLite database and the simulated hypervisor, so
the whole pipeline (poll -> report -> controller -> database) runs on a
laptop with no cloud. The live table is read back from the controller's
database, not from the agent, so what it shows has crossed the pipeline.
"""

import os
import shutil
import sys
import tempfile
import threading
import time

from oslo_log import log as logging

from memmut.agent import service as agent_service
from memmut.conf import demo as demo_conf
from memmut.db import api as db_api
from memmut.db import migration
from memmut.globals import service as controller_service
from memmut import rpc
from memmut import service
from memmut.virt import simulated

LOG = logging.getLogger(__name__)
MIB = 1024

DEMO_DEFAULTS = {
    ('simulated_hypervisor', 'time_scale'): 30.0,
    ('agent', 'poll_interval'): 1.0,
    # Badis rounds every 2 s of wall time (1 simulated minute at the demo's
    # time scale, the published prototype's interval), max-average over
    # 5 rounds and a 10 s slice, so estimates and balloons move visibly.
    ('badis', 'round_interval'): 2.0,
    ('badis', 'time_slice'): 10.0,
}


def vm_row(vm_name, samples):
    """One table row from a VM's last two samples (newest last)."""
    last = samples[-1]
    stats = last.memory_stats or {}
    unused = stats.get('unused', 0)
    cache = stats.get('disk_caches', 0)
    used = max(0, last.balloon_kb - unused - cache)
    swap_rate = 0.0
    if len(samples) > 1:
        prev = samples[-2]
        dt = last.timestamp - prev.timestamp
        if dt > 0:
            swap_rate = (stats.get('swap_in', 0) - (prev.memory_stats or {})
                         .get('swap_in', 0)) / MIB / dt
    wss = getattr(last, 'wss_kb', None)
    return (vm_name, last.booked_kb // MIB, last.balloon_kb // MIB,
            used // MIB, cache // MIB, unused // MIB, swap_rate,
            '-' if wss is None else str(wss // MIB),
            getattr(last, 'wss_estimator', None) or '-')


HEADER = ('VM', 'booked', 'balloon', 'used', 'cache', 'unused', 'swap-in',
          'wss', 'estimator')


def render_table(rows):
    """Fixed-width text table; sizes in MiB, swap-in in MiB/s; wss is the
    agent's working-set estimate and estimator where it came from."""
    lines = ['%-12s %8s %8s %8s %8s %8s %9s %6s  %s' % HEADER]
    for (name, booked, balloon, used, cache, unused, swap, wss,
         source) in rows:
        lines.append('%-12s %8d %8d %8d %8d %8d %9.1f %6s  %s'
                     % (name[:12], booked, balloon, used, cache, unused,
                        swap, wss, source))
    return '\n'.join(lines)


def snapshot(db):
    """The table as the controller's database holds it now."""
    rows = []
    for vm in sorted(db.list_vms(), key=lambda v: v.name):
        samples = db.vm_samples(vm.uuid, limit=2)
        if samples:
            rows.append(vm_row(vm.name, samples))
    return rows


def main(argv=None):
    # A fresh state directory per run unless the operator names one; the
    # fresh one is removed when the demo ends (--help included).
    defaults = dict(DEMO_DEFAULTS)
    scratch = tempfile.mkdtemp(prefix='memmut-demo-')
    defaults[(None, 'state_path')] = scratch
    try:
        conf = service.prepare(sys.argv[1:] if argv is None else argv,
                               defaults=defaults,
                               cli_opts={'demo': demo_conf.opts})
        if conf.state_path != scratch:
            shutil.rmtree(scratch, ignore_errors=True)
            scratch = None
        _run(conf, scratch)
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)


def _run(conf, scratch):
    os.makedirs(conf.state_path, exist_ok=True)
    url = conf.database.connection
    try:
        migration.upgrade(url)
        db = db_api.Database(url)
    except db_api.DBError as e:
        service.fail(str(e))
    transport = rpc.get_transport(conf)
    try:
        agent = agent_service.AgentService(conf, transport)
    except simulated.SimSpecError as e:
        service.fail(str(e))
    controller = controller_service.ControllerService(conf, transport, db)

    interactive = sys.stdout.isatty()
    print('memmut demo: agent + controller in one process, %d simulated VMs, '
          'database %s' % (len(conf.simulated_hypervisor.vms), url))
    stop = threading.Event()
    controller.start()
    agent.start()
    deadline = time.monotonic() + conf.demo.duration
    try:
        while not stop.wait(min(conf.demo.refresh,
                                max(0.0, deadline - time.monotonic()))):
            table = render_table(snapshot(db))
            if interactive:
                sys.stdout.write('\x1b[H\x1b[J')
            print('t=%5.1fs (simulated %6.0fs)   reports stored: %d'
                  % (conf.demo.duration - (deadline - time.monotonic()),
                     agent.driver.now(), db.count_reports(conf.host)))
            print(table)
            sys.stdout.flush()
            if time.monotonic() >= deadline:
                break
    except KeyboardInterrupt:
        pass
    finally:
        agent.stop()
        controller.stop()
    print('memmut demo finished: %d reports from %s stored in %s%s'
          % (db.count_reports(conf.host), conf.host, url,
             ' (a temporary directory, now removed: set [DEFAULT] '
             'state_path to keep the database)' if scratch else ''))
    db.close()


if __name__ == '__main__':
    main()
