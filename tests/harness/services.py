"""Private PostgreSQL and RabbitMQ servers on loopback for functional tests.

Each runs from the Debian packages (tools/test-setup.sh installs them) in a
temporary directory, on a free 127.0.0.1 port, and is stopped and removed at
the end of the session even when a test fails. Nothing of the system's own
instances (if any) is used or touched.

    def test_x(postgres_url, rabbit_url): ...

``postgres_url`` is a fresh, empty database per test
(``postgresql+psycopg://memmut:...@127.0.0.1:PORT/test_N``).
"""

import glob
import itertools
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

__all__ = ['postgres_server', 'postgres_url', 'rabbit_url']

PG_USER = 'memmut'
PG_PASSWORD = 'memmut-functional'
RABBIT_USER = 'memmut'
RABBIT_PASSWORD = 'memmut-functional'


def _unavailable(reason):
    if os.environ.get('CI') == 'true':
        pytest.fail('control-plane prerequisite missing (CI=true, so this '
                    'is a failure, not a skip): ' + reason, pytrace=False)
    pytest.skip(reason)


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def wait_for_port(port, timeout, proc=None, what='server', log=None,
                  host='127.0.0.1'):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            break
        try:
            socket.create_connection((host, port), 1).close()
            return
        except OSError:
            time.sleep(0.2)
    tail = ''
    if log and os.path.exists(log):
        with open(log, errors='replace') as f:
            tail = f.read()[-3000:]
    raise RuntimeError('%s did not answer on %s:%d within %d s\n%s'
                       % (what, host, port, timeout, tail))


def write_service_conf(path, host, rabbit_url, pg_url, libvirt_opts,
                       extra=None):
    """A memmut.conf for an agent and a controller on the private
    services; ``extra`` = {section: {option: value}} appended."""
    lines = ['[DEFAULT]', 'host = %s' % host,
             'transport_url = %s' % rabbit_url, 'rpc_response_timeout = 5',
             '', '[database]', 'connection = %s' % pg_url, '',
             '[agent]', 'hypervisor_driver = libvirt', 'poll_interval = 1',
             'report_timeout = 2', '', '[libvirt]']
    lines += ['%s = %s' % kv for kv in libvirt_opts.items()]
    for section, values in (extra or {}).items():
        lines += ['', '[%s]' % section]
        lines += ['%s = %s' % kv for kv in values.items()]
    path.write_text('\n'.join(lines) + '\n')
    return str(path)


class ServiceProcess:
    """``python -m module --config-file conf`` in its own session."""

    def __init__(self, module, conf_file, log_path):
        self.cmd = [sys.executable, '-m', module, '--config-file', conf_file]
        self.log_path = log_path
        self.proc = None

    def start(self):
        self.log = open(self.log_path, 'ab')
        self.proc = subprocess.Popen(self.cmd, stdout=self.log,
                                     stderr=subprocess.STDOUT,
                                     start_new_session=True)
        return self

    def kill(self, sig=signal.SIGKILL):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            self.proc.wait(30)
        self.log.close()

    def output(self):
        with open(self.log_path, errors='replace') as f:
            return f.read()


class PrivatePostgres:
    """initdb + postgres as the ``postgres`` system user (it refuses root),
    listening on 127.0.0.1 only, password authentication."""

    def __init__(self):
        bins = sorted(glob.glob('/usr/lib/postgresql/*/bin/initdb'))
        if not bins:
            raise FileNotFoundError('PostgreSQL server binaries not found '
                                    '(apt-get install postgresql)')
        self.bindir = os.path.dirname(bins[-1])
        self.port = free_port()
        self.dir = None
        self._ids = itertools.count(1)

    def _as_postgres(self, args, **kw):
        return subprocess.run(['runuser', '-u', 'postgres', '--'] + args,
                              check=True, capture_output=True, text=True,
                              **kw)

    def start(self):
        self.dir = tempfile.mkdtemp(prefix='memmut-pg-')
        pw = pwd.getpwnam('postgres')
        os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        data = os.path.join(self.dir, 'data')
        pwfile = os.path.join(self.dir, 'pw')
        with open(pwfile, 'w') as f:
            f.write(PG_PASSWORD)
        os.chown(pwfile, pw.pw_uid, pw.pw_gid)
        self._as_postgres([os.path.join(self.bindir, 'initdb'), '-D', data,
                           '-U', PG_USER, '--pwfile', pwfile,
                           '--auth', 'scram-sha-256', '-E', 'UTF8'])
        self.log = os.path.join(self.dir, 'postgres.log')
        self.start_server()
        return self

    def start_server(self):
        """(Re)start the server on its existing data."""
        self._as_postgres([
            os.path.join(self.bindir, 'pg_ctl'), '-D',
            os.path.join(self.dir, 'data'), '-l', self.log,
            '-o', "-c listen_addresses=127.0.0.1 -p %d -k %s "
                  "-c fsync=off" % (self.port, self.dir),
            '-w', '-t', '60', 'start'])
        wait_for_port(self.port, 30, what='PostgreSQL', log=self.log)

    def stop_server(self):
        """Stop the server (an outage), keeping its data."""
        self._as_postgres([os.path.join(self.bindir, 'pg_ctl'), '-D',
                           os.path.join(self.dir, 'data'), '-m', 'fast',
                           '-w', 'stop'])

    def stop(self):
        if self.dir is None:
            return
        try:
            self._as_postgres([os.path.join(self.bindir, 'pg_ctl'), '-D',
                               os.path.join(self.dir, 'data'), '-m',
                               'immediate', '-w', 'stop'])
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None

    def url(self, database):
        return 'postgresql+psycopg://%s:%s@127.0.0.1:%d/%s' % (
            PG_USER, PG_PASSWORD, self.port, database)

    def create_database(self):
        import psycopg
        name = 'test_%d' % next(self._ids)
        with psycopg.connect(host='127.0.0.1', port=self.port, user=PG_USER,
                             password=PG_PASSWORD, dbname='postgres',
                             autocommit=True) as conn:
            conn.execute('CREATE DATABASE %s' % name)
        return self.url(name)


class PrivateRabbit:
    """rabbitmq-server in the foreground of its own process group, with its
    own node name, ports, Erlang cookie and epmd, so it never meets another
    RabbitMQ on the machine."""

    def __init__(self, host='127.0.0.1', port=None):
        # another loopback address lets a test use the standard port 5672
        # (what devstack's transport URLs assume) without meeting anyone
        self.host = host
        self.fixed_port = port is not None
        self.port = port or free_port()
        self.dist_port = free_port()
        self.epmd_port = free_port()
        self.dir = None
        self.proc = None

    def _env(self):
        env = dict(os.environ)
        env.update({
            'HOME': self.dir,     # the Erlang cookie lives in $HOME
            'RABBITMQ_NODENAME': 'memmut%d@localhost' % self.port,
            'RABBITMQ_NODE_IP_ADDRESS': self.host,
            'RABBITMQ_NODE_PORT': str(self.port),
            'RABBITMQ_DIST_PORT': str(self.dist_port),
            'ERL_EPMD_PORT': str(self.epmd_port),
            'ERL_EPMD_ADDRESS': '127.0.0.1',
            'RABBITMQ_MNESIA_BASE': os.path.join(self.dir, 'mnesia'),
            'RABBITMQ_LOG_BASE': self.dir,
            'RABBITMQ_CONFIG_FILE': os.path.join(self.dir, 'rabbitmq.conf'),
            'RABBITMQ_ENABLED_PLUGINS_FILE': os.path.join(self.dir,
                                                          'plugins'),
        })
        return env

    # what the Erlang VM says when a port free_port() found was taken by
    # someone else before it bound it (a guest's NBD connection, another
    # test's server): start again on new ports
    PORT_TAKEN = ('already_used', 'eaddrinuse')

    def start(self, timeout=90, attempts=3):
        for attempt in range(attempts):
            try:
                return self._start(timeout)
            except RuntimeError:
                taken = self._log_says(self.PORT_TAKEN)
                self.stop()
                if not taken or attempt == attempts - 1:
                    raise
                if not self.fixed_port:
                    self.port = free_port()
                self.dist_port, self.epmd_port = free_port(), free_port()

    def _log_says(self, words):
        try:
            with open(self.log, errors='replace') as f:
                text = f.read()
        except (OSError, AttributeError):
            return False
        return any(w in text for w in words)

    def _start(self, timeout):
        self.dir = tempfile.mkdtemp(prefix='memmut-rabbit-')
        with open(os.path.join(self.dir, 'rabbitmq.conf'), 'w') as f:
            # the default user may only log in from loopback anyway; a
            # private user makes the test independent of that rule
            f.write('default_user = %s\ndefault_pass = %s\n'
                    'loopback_users = none\n'
                    % (RABBIT_USER, RABBIT_PASSWORD))
        with open(os.path.join(self.dir, 'plugins'), 'w') as f:
            f.write('[].\n')
        self.log = os.path.join(self.dir, 'server.log')
        # Debian's wrapper drops root for the rabbitmq user.
        try:
            pw = pwd.getpwnam('rabbitmq')
            for path in (self.dir, *(os.path.join(self.dir, n)
                                     for n in os.listdir(self.dir))):
                os.chown(path, pw.pw_uid, pw.pw_gid)
        except KeyError:
            pass
        with open(self.log, 'wb') as out:
            self.proc = subprocess.Popen(
                ['rabbitmq-server'], env=self._env(), stdout=out,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                cwd=self.dir, start_new_session=True)
        wait_for_port(self.port, timeout, self.proc, 'RabbitMQ', self.log,
                      host=self.host)
        return self

    def stop(self):
        if self.proc is not None:
            subprocess.run(['rabbitmqctl', '-n',
                            'memmut%d@localhost' % self.port, 'stop'],
                           env=self._env(), capture_output=True, timeout=60)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            # epmd daemonizes out of the process group
            subprocess.run(['epmd', '-port', str(self.epmd_port), '-kill'],
                           capture_output=True, timeout=30)
            self.proc = None
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    @property
    def url(self):
        return 'rabbit://%s:%s@%s:%d/' % (
            RABBIT_USER, RABBIT_PASSWORD, self.host, self.port)


@pytest.fixture(scope='session')
def postgres_server():
    if os.geteuid() != 0:
        _unavailable('the private PostgreSQL needs root (runuser)')
    try:
        pwd.getpwnam('postgres')
        server = PrivatePostgres()
    except (KeyError, FileNotFoundError) as e:
        _unavailable('PostgreSQL is not installed (tools/test-setup.sh): '
                     '%s' % e)
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _unavailable('psycopg is not installed')
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server):
    """A fresh empty database on the private PostgreSQL."""
    return postgres_server.create_database()


@pytest.fixture(scope='session')
def rabbit_url():
    if not shutil.which('rabbitmq-server'):
        _unavailable('rabbitmq-server is not installed '
                     '(tools/test-setup.sh)')
    server = PrivateRabbit()
    try:
        server.start()
        yield server.url
    finally:
        server.stop()
