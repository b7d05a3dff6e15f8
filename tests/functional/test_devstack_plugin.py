"""memmut's devstack plugin, run through devstack's own function library
(the unmodified snapshot in ../shared/devstack), then the services it
configured started for real against the test bed's keystone, PostgreSQL
and RabbitMQ, and asked through the openstack command.

Only package installation, sudo and systemd are replaced by recorders
(tests/functional/devstack_driver.sh); the unit files devstack writes
(into the sandbox) give the commands that are then started.
"""

import configparser
import os
import random
import re
import shlex
import subprocess
import sys

import pytest

from tests.functional import api_support
from tests.harness import keystone as ks
from tests.harness import services

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DEVSTACK = os.path.normpath(os.path.join(ROOT, '..', 'shared', 'devstack'))
DRIVER = os.path.join(ROOT, 'tests', 'functional', 'devstack_driver.sh')
SECRET = re.compile(r'(password|transport_url|connection)(\s*=\s*)(.*)')


def mask(text):
    """memmut.conf with its secrets hidden (for logs and reports)."""
    def hide(m):
        value = re.sub(r'//([^:/@]+):[^@]*@', r'//\1:***@', m.group(3))
        if m.group(1) == 'password':
            value = '***'
        return m.group(1) + m.group(2) + value
    return SECRET.sub(hide, text)


@pytest.fixture(scope='module')
def rabbit_5672():
    """A private RabbitMQ on port 5672 of its own loopback address:
    devstack's transport URLs always name port 5672."""
    if not os.path.exists('/usr/sbin/rabbitmq-server') and \
            not services.shutil.which('rabbitmq-server'):
        services._unavailable('rabbitmq-server is not installed')
    for _ in range(20):
        host = '127.%d.%d.%d' % (random.randint(1, 254),
                                 random.randint(1, 254),
                                 random.randint(1, 254))
        probe = services.socket.socket()
        try:
            probe.bind((host, 5672))
        except OSError:
            continue
        finally:
            probe.close()
        break
    server = services.PrivateRabbit(host=host, port=5672)
    try:
        server.start()
        yield server
    finally:
        server.stop()


def _unit(path):
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str
    parser.read(path)
    return parser


class Devstack:
    def __init__(self, sandbox, keystone, postgres_server, rabbit, port):
        self.sandbox = sandbox
        self.record = sandbox / 'record'
        self.conf = sandbox / 'etc' / 'memmut' / 'memmut.conf'
        self.nova_conf = sandbox / 'etc' / 'nova' / 'nova.conf'
        self.port = port
        (sandbox / 'etc' / 'nova').mkdir(parents=True)
        clouds = sandbox / 'clouds.yaml'
        clouds.write_text(
            'clouds:\n  devstack-system-admin:\n    auth:\n'
            '      auth_url: %s\n      username: admin\n'
            '      password: %s\n      user_domain_id: default\n'
            '      system_scope: all\n    identity_api_version: 3\n'
            '    region_name: RegionOne\n'
            % (keystone.auth_url, ks.PASSWORD))
        bindir = os.path.dirname(sys.executable)
        self.env = {
            'PATH': bindir + os.pathsep + os.environ['PATH'],
            'HOME': str(sandbox), 'LANG': 'C.UTF-8',
            'OS_CLIENT_CONFIG_FILE': str(clouds),
            'SANDBOX': str(sandbox), 'RECORD': str(self.record),
            'DEVSTACK_DIR': DEVSTACK, 'MEMMUT_DIR': ROOT,
            'DEST': str(sandbox / 'opt' / 'stack'),
            'DATA_DIR': str(sandbox / 'data'),
            'HOST_IP': '127.0.0.1', 'SERVICE_HOST': '127.0.0.1',
            'ENABLED_SERVICES': 'key,n-cpu',
            'GLOBAL_VENV': 'True', 'DEVSTACK_VENV': sys.prefix,
            'os_PACKAGE': 'deb', 'API_WORKERS': '1',
            'SERVICE_PASSWORD': ks.PASSWORD,
            'TEST_KEYSTONE_URI': keystone.auth_url.rsplit('/v3', 1)[0],
            'TEST_BASE_SQL_CONN': 'postgresql://%s:%s@127.0.0.1:%d' % (
                services.PG_USER, services.PG_PASSWORD,
                postgres_server.port),
            'DATABASE_USER': services.PG_USER, 'DATABASE_HOST': '127.0.0.1',
            'PGPORT': str(postgres_server.port),
            'PGPASSWORD': services.PG_PASSWORD,
            'RABBIT_HOST': rabbit.host, 'RABBIT_USERID': services.RABBIT_USER,
            'RABBIT_PASSWORD': services.RABBIT_PASSWORD,
            'MEMMUT_CONF_DIR': str(sandbox / 'etc' / 'memmut'),
            'MEMMUT_API_HTTP': '127.0.0.1:%d' % port,
            'NOVA_CONF': str(self.nova_conf),
            'NOVA_CPU_CONF': str(sandbox / 'etc' / 'nova' / 'nova-cpu.conf'),
            'MEMMUT_LIBVIRT_TYPE': 'qemu',
            # tools/test-setup.sh built memstore already
            'MEMMUT_BUILD_MEMSTORE': 'False',
        }

    def run(self, *phases):
        proc = subprocess.run(['bash', DRIVER] + list(phases), env=self.env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, '%s failed:\n%s\n%s' % (
            phases, proc.stdout[-4000:], proc.stderr[-4000:])
        return proc

    def recorded(self):
        return self.record.read_text().splitlines()

    def exec_start(self, service):
        unit = _unit(self.sandbox / 'systemd' /
                     ('devstack@%s.service' % service))
        return shlex.split(unit['Service']['ExecStart'])


def test_devstack_plugin_stacks_and_serves(keystone, postgres_server,
                                           rabbit_5672, tmp_path):
    if not os.path.isdir(DEVSTACK):
        pytest.skip('devstack snapshot not found at %s (the plugin test '
                    'sources devstack\'s function library from '
                    '../shared/devstack)' % DEVSTACK)
    # as a fresh devstack: the service project, no memmut service yet
    keystone.ensure('projects', 'service', domain='default')
    port = services.free_port()
    ds = Devstack(tmp_path, keystone, postgres_server, rabbit_5672, port)
    ds.run('stack install', 'stack post-config', 'stack extra')

    # -- what the plugin wrote -------------------------------------------
    conf_text = ds.conf.read_text()
    print('memmut.conf written by the plugin (secrets masked):\n'
          + mask(conf_text))
    conf = configparser.ConfigParser(interpolation=None)
    conf.read_string(conf_text)
    assert conf['DEFAULT']['transport_url'] == (
        'rabbit://%s:%s@%s:5672/' % (services.RABBIT_USER,
                                     services.RABBIT_PASSWORD,
                                     rabbit_5672.host))
    assert conf['database']['connection'].startswith(
        'postgresql+psycopg://%s:' % services.PG_USER)
    assert conf['database']['connection'].endswith(
        '/memmut?client_encoding=utf8')
    auth = conf['keystone_authtoken']
    assert (auth['username'], auth['service_type'], auth['auth_type']) == (
        'memmut', 'memmut', 'password')
    assert conf['nova']['username'] == 'memmut'
    assert conf['nova']['project_name'] == 'service'
    assert conf['libvirt']['connection_uri'] == 'qemu:///system'
    assert conf['libvirt']['domain_type'] == 'qemu'
    nova = configparser.ConfigParser(interpolation=None)
    nova.read(ds.nova_conf)
    assert nova['libvirt']['mem_stats_period_seconds'] == '10'
    recorded = ds.recorded()
    assert 'setup_develop %s' % ROOT in recorded
    for service in ('memmut-api', 'memmut-controller', 'memmut-agent',
                    'memmut-memstore'):
        assert 'systemctl enable devstack@%s.service' % service in recorded
        assert 'systemctl start devstack@%s.service' % service in recorded
    agent = ds.exec_start('memmut-agent')
    assert agent[0].endswith('/memmut-agent')
    assert agent[1:] == ['--config-file', str(ds.conf)]
    assert _unit(tmp_path / 'systemd' / 'devstack@memmut-agent.service')[
        'Service']['User'] == 'root'
    # keystone has the service, its endpoint and its user
    admin = keystone.admin()
    (svc,) = [s for s in admin.services.list() if s.type == 'memmut']
    urls = {e.url for e in admin.endpoints.list(service=svc)}
    assert urls == {'http://127.0.0.1:%d' % port}

    # -- start what systemd would have started ---------------------------
    servers = []
    try:
        for service in ('memmut-controller', 'memmut-api'):
            servers.append(ks.Server(
                ds.exec_start(service), str(tmp_path / (service + '.log')),
                env=dict(os.environ, PATH=ds.env['PATH'])).start())
        services.wait_for_port(port, 60, servers[-1].proc, 'memmut-api',
                               servers[-1].log_path)
        api_support.seed(conf['database']['connection'])
        cloud = api_support.MemmutCloud(keystone, str(ds.conf), port,
                                        tmp_path)
        cloud.servers = servers
        keystone.user_with_role('alice', 'reader', 'demo')
        transcript = []

        def cli(*args, **kw):
            proc = cloud.cli(*args, json_out=False, check=False, **kw)
            transcript.append('$ openstack memmut %s\n%s%s' % (
                ' '.join(args), proc.stdout, proc.stderr))
            return proc

        proc = cli('host', 'list')
        assert proc.returncode == 0 and api_support.NODE in proc.stdout, (
            proc.stderr + cloud.logs())
        proc = cli('round', 'create', '--dry-run', '--wait')
        assert proc.returncode == 0, proc.stderr + cloud.logs()
        assert 'completed' in proc.stdout
        round_id = re.search(r'\|\s*id\s*\|\s*(\d+)', proc.stdout).group(1)
        proc = cli('round', 'show', round_id)
        assert proc.returncode == 0 and 'dry run:' in proc.stdout
        proc = cli('round', 'create', '--dry-run', user='alice',
                   project='demo')
        assert proc.returncode != 0 and 'HTTP 403' in proc.stderr
        transcript[-1] = transcript[-1].replace(
            '$ openstack', '$ # as alice (reader)\n$ openstack', 1)
        print('\n'.join(transcript))
        out = os.environ.get('MEMMUT_DEVSTACK_TRANSCRIPT')
        if out:
            with open(out, 'w') as f:
                f.write('# memmut.conf written by the devstack plugin '
                        '(secrets masked)\n' + mask(conf_text) + '\n'
                        + '\n'.join(transcript))
    finally:
        for s in servers:
            s.stop()

    # -- unstack and clean undo it ----------------------------------------
    ds.run('unstack', 'clean')
    recorded = ds.recorded()
    for service in ('memmut-api', 'memmut-controller'):
        assert 'systemctl stop devstack@%s.service' % service in recorded
        assert 'systemctl disable devstack@%s.service' % service in recorded
    assert not ds.conf.exists()
    nova = configparser.ConfigParser(interpolation=None)
    nova.read(ds.nova_conf)
    assert 'mem_stats_period_seconds' not in nova['libvirt']
