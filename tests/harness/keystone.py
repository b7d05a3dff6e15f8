"""A real keystone on loopback for functional tests.

keystone (from PyPI, in the functional env) with its own SQLite database
and fernet keys in a temporary directory, bootstrapped by
``keystone-manage bootstrap`` and served by uwsgi on a free 127.0.0.1
port, stopped and removed at the end of the session.

    def test_x(keystone): keystone.auth_url, keystone.admin_session() ...
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile

import pytest

from tests.harness import services

__all__ = ['keystone', 'Keystone', 'PASSWORD', 'tool']

PASSWORD = 'memmut-functional-pw'
REGION = 'RegionOne'


def tool(name):
    """A console script of this Python environment (tox's), else PATH's."""
    path = os.path.join(os.path.dirname(sys.executable), name)
    return path if os.path.exists(path) else shutil.which(name)


def uwsgi_command(port, module, env):
    """uwsgi serving ``module`` over HTTP on 127.0.0.1:``port``."""
    cmd = [tool('uwsgi'), '--http-socket', '127.0.0.1:%d' % port,
           '--module', module, '--master', '--processes', '1',
           '--threads', '2', '--enable-threads', '--die-on-term',
           '--lazy-apps', '--need-app', '--disable-logging',
           # as devstack: uwsgi's HTTP socket does not keep connections
           '--add-header', 'Connection: close']
    for k, v in env.items():
        cmd += ['--env', '%s=%s' % (k, v)]
    return cmd


class Server:
    """A process in its own session, logging to a file."""

    def __init__(self, cmd, log_path, env=None, cwd=None):
        self.cmd = cmd
        self.log_path = log_path
        self.env = env
        self.cwd = cwd
        self.proc = None

    def start(self):
        with open(self.log_path, 'ab') as log:
            self.proc = subprocess.Popen(
                self.cmd, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, env=self.env, cwd=self.cwd,
                start_new_session=True)
        return self

    def output(self, tail=4000):
        try:
            with open(self.log_path, errors='replace') as f:
                return f.read()[-tail:]
        except OSError:
            return ''

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self.proc = None


class Keystone:
    """``token_expiration`` (seconds) shortens keystone's ``[token]
    expiration`` (default one hour): for a test that waits a token out."""

    def __init__(self, token_expiration=None):
        self.dir = None
        self.port = services.free_port()
        self.server = None
        self.token_expiration = token_expiration

    @property
    def auth_url(self):
        return 'http://127.0.0.1:%d/v3' % self.port

    def _manage(self, *args):
        subprocess.run([tool('keystone-manage'), '--config-file', self.conf]
                       + list(args), check=True, capture_output=True,
                       text=True, timeout=300)

    def start(self):
        self.dir = tempfile.mkdtemp(prefix='memmut-keystone-')
        self.conf = os.path.join(self.dir, 'keystone.conf')
        with open(self.conf, 'w') as f:
            f.write('[DEFAULT]\nlog_file = %s/keystone.log\n'
                    '[database]\nconnection = sqlite:///%s/keystone.db\n'
                    '[fernet_tokens]\nkey_repository = %s/fernet-keys\n'
                    '[fernet_receipts]\nkey_repository = %s/fernet-receipts\n'
                    '[credential]\nkey_repository = %s/credential-keys\n'
                    % ((self.dir,) * 5))
            if self.token_expiration is not None:
                f.write('[token]\nexpiration = %d\n'
                        % self.token_expiration)
        user = str(os.geteuid())
        group = str(os.getegid())
        self._manage('db_sync')
        self._manage('fernet_setup', '--keystone-user', user,
                     '--keystone-group', group)
        self._manage('credential_setup', '--keystone-user', user,
                     '--keystone-group', group)
        self._manage('bootstrap', '--bootstrap-password', PASSWORD,
                     '--bootstrap-admin-url', self.auth_url,
                     '--bootstrap-public-url', self.auth_url,
                     '--bootstrap-internal-url', self.auth_url,
                     '--bootstrap-region-id', REGION)
        self.server = Server(
            uwsgi_command(self.port, 'keystone.wsgi.api:application',
                          {'OS_KEYSTONE_CONFIG_FILES': self.conf}),
            os.path.join(self.dir, 'uwsgi.log')).start()
        services.wait_for_port(self.port, 60, self.server.proc, 'keystone',
                               self.server.log_path)
        return self

    def stop(self):
        if self.server:
            self.server.stop()
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    # -- clients --------------------------------------------------------

    def session(self, username='admin', password=PASSWORD,
                project='admin'):
        from keystoneauth1 import session
        from keystoneauth1.identity import v3
        return session.Session(auth=v3.Password(
            auth_url=self.auth_url, username=username, password=password,
            user_domain_id='default', project_name=project,
            project_domain_id='default'))

    def admin(self):
        from keystoneclient.v3 import client
        return client.Client(session=self.session())

    def cli_env(self, username='admin', password=PASSWORD, project='admin'):
        """Environment for the ``openstack`` command as this user."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith('OS_')}
        env.update({
            'OS_AUTH_URL': self.auth_url, 'OS_AUTH_TYPE': 'password',
            'OS_USERNAME': username, 'OS_PASSWORD': password,
            'OS_PROJECT_NAME': project, 'OS_USER_DOMAIN_ID': 'default',
            'OS_PROJECT_DOMAIN_ID': 'default', 'OS_IDENTITY_API_VERSION': '3',
            'OS_REGION_NAME': REGION, 'OS_INTERFACE': 'public',
        })
        return env

    def ensure(self, kind, name, **kwargs):
        """Get or create a project, user, role or service by name."""
        manager = getattr(self.admin(), kind)
        found = [o for o in manager.list() if o.name == name]
        return found[0] if found else manager.create(name=name, **kwargs)

    def register_service(self, name, service_type, url, user,
                         password=PASSWORD):
        """A service user with the service role, a service and its
        endpoints, as devstack's plugin functions do."""
        ks = self.admin()
        project = self.ensure('projects', 'service', domain='default')
        role = self.ensure('roles', 'service')
        svc_user = self.ensure('users', user, domain='default',
                               password=password)
        ks.roles.grant(role, user=svc_user, project=project)
        service = self.ensure('services', name, type=service_type)
        for interface in ('public', 'internal'):
            ks.endpoints.create(service, url, interface=interface,
                                region=REGION)
        return service

    def user_with_role(self, username, role, project):
        ks = self.admin()
        proj = self.ensure('projects', project, domain='default')
        user = self.ensure('users', username, domain='default',
                           password=PASSWORD)
        ks.roles.grant(self.ensure('roles', role), user=user, project=proj)
        return user


@pytest.fixture(scope='session')
def keystone():
    if not tool('keystone-manage') or not tool('uwsgi'):
        services._unavailable('keystone and uwsgi are not installed in '
                              'this environment (tox -e functional '
                              'installs them)')
    server = Keystone()
    try:
        server.start()
        yield server
    finally:
        server.stop()
