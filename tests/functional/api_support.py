"""memmut-api + memmut-controller against the test bed's keystone,
PostgreSQL and RabbitMQ, and the ``openstack`` command against them."""

import json
import os
import subprocess
import sys
import time

from memmut.db import api as db_api
from memmut.db import migration
from memmut import objects
from tests.harness import keystone as ks
from tests.harness import services

NODE = 'node-1.functional'
VM_UUIDS = ['6f1f9b3e-0000-4000-8000-00000000000%d' % i for i in (1, 2)]


ROLLUP_INTERVAL = 300.0


def _report(boot_id, seq, t):
    return objects.HostReport(
        host=NODE, boot_id=boot_id, seq=seq, timestamp=t,
        hypervisor='libvirt', memory_total_kb=16 << 20,
        memory_free_kb=6 << 20, cpu_count=8, cpu_util=0.25,
        reservoir_kb=512 << 10, vms=[objects.VMReport(
            uuid=u, name='vm-%d' % i, timestamp=t, state='running',
            booked_kb=2 << 20, balloon_kb=(1536 + 128 * i) << 10,
            memory_stats={'swap_in': 0, 'swap_out': 64 * i},
            cpu_time_ns=int(t * 1e6), nova_instance=True,
            wss_kb=(700 + 100 * i) << 10,
            wss_max_avg_kb=(750 + 100 * i) << 10, max_avg_window=5,
            max_avg_slice_s=3600.0, badis_mode='VG',
            wss_estimator='badis/page_idle+memstore',
            mut_role='server' if i == 1 else 'client',
            mem_init_kb=2 << 20, lent_kb=256 << 10 if i == 1 else 0,
            borrowed_kb=0 if i == 1 else 256 << 10)
            for i, u in enumerate(VM_UUIDS, 1)])


def seed(db_url, now=None):
    """Two reports of one host with two nova VMs (what an agent sends),
    and ten polls of a day ago, rolled up into two 5-minute intervals."""
    now = time.time() if now is None else now
    db = db_api.Database(db_url)
    day_ago = (now // ROLLUP_INTERVAL * ROLLUP_INTERVAL - 86400)
    polls = [now - 60, now] + [day_ago + 60 * k for k in range(1, 11)]
    for seq, t in enumerate(polls, 1):
        db.store_report(_report('functional', seq, t))
    db.rollup_samples(now - 43200, ROLLUP_INTERVAL)
    db.close()


def report_now(db_url):
    """One more report, now (the host is down ``host_down_after`` seconds
    after the last one)."""
    db = db_api.Database(db_url)
    now = time.time()
    db.store_report(_report('functional-%d' % now, 1, now))
    db.close()


def write_conf(path, keystone, db_url, rabbit_url, extra=''):
    path.write_text('\n'.join([
        '[DEFAULT]', 'host = controller-1', 'transport_url = %s' % rabbit_url,
        'rpc_response_timeout = 10', 'use_stderr = true', '',
        '[database]', 'connection = %s' % db_url, '',
        '[api]', 'round_start_timeout = 20', '',
        '[keystone_authtoken]',
        'www_authenticate_uri = %s' % keystone.auth_url,
        'auth_url = %s' % keystone.auth_url, 'auth_type = password',
        'username = memmut', 'password = %s' % ks.PASSWORD,
        'user_domain_name = Default', 'project_name = service',
        'project_domain_name = Default', 'service_type = memmut',
        # every request validated afresh: a revoked token is refused at once
        'token_cache_time = -1', '',
    ]) + extra + '\n')
    return str(path)


class MemmutCloud:
    """memmut-controller (RabbitMQ, PostgreSQL) and memmut-api (uwsgi),
    registered in keystone as the ``memmut`` service."""

    def __init__(self, keystone, conf_file, api_port, workdir):
        self.keystone = keystone
        self.conf_file = conf_file
        self.api_port = api_port
        self.url = 'http://127.0.0.1:%d' % api_port
        self.workdir = workdir
        self.servers = []

    def start(self, env=None):
        controller = ks.Server(
            [sys.executable, '-m', 'memmut.cmd.controller', '--config-file',
             self.conf_file], str(self.workdir / 'controller.log'),
            env=env).start()
        api = ks.Server(
            ks.uwsgi_command(self.api_port, 'memmut.wsgi.api:application',
                             {'OS_MEMMUT_CONFIG_FILES': self.conf_file}),
            str(self.workdir / 'api.log'), env=env).start()
        self.servers = [controller, api]
        services.wait_for_port(self.api_port, 60, api.proc, 'memmut-api',
                               api.log_path)
        return self

    def logs(self):
        return '\n'.join('--- %s\n%s' % (s.log_path, s.output())
                         for s in self.servers)

    def stop(self):
        for s in self.servers:
            s.stop()

    def cli(self, *args, user='admin', project='admin', extra_env=None,
            check=True, json_out=True):
        """Run ``openstack memmut ARGS`` as ``user``; parsed JSON output
        (``-f json``) or the CompletedProcess when ``check`` is false."""
        cmd = [ks.tool('openstack'), 'memmut'] + list(args)
        if json_out:
            cmd += ['-f', 'json']
        env = self.keystone.cli_env(user, project=project)
        for k, v in (extra_env or {}).items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True,
                              timeout=180)
        if not check:
            return proc
        assert proc.returncode == 0, (
            '%s failed (%d):\n%s\n%s\n%s' % (
                ' '.join(cmd), proc.returncode, proc.stdout, proc.stderr,
                self.logs()))
        return json.loads(proc.stdout) if json_out else proc


def start_cloud(keystone, postgres_server, rabbit_url, workdir):
    db_url = postgres_server.create_database()
    migration.upgrade(db_url)
    seed(db_url)
    api_port = services.free_port()
    keystone.register_service('memmut', 'memmut',
                              'http://127.0.0.1:%d' % api_port, 'memmut')
    keystone.user_with_role('alice', 'reader', 'demo')
    conf_file = write_conf(workdir / 'memmut.conf', keystone, db_url,
                           rabbit_url)
    env = dict(os.environ)
    cloud = MemmutCloud(keystone, conf_file, api_port, workdir)
    cloud.db_url = db_url
    return cloud.start(env)
