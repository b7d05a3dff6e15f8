"""Find, build, start and stop the memmut-memstore binary.

Operators install the binary on PATH (or give ``[memstore] binary`` as an
absolute path); in a source tree, ``cargo build --release`` in ``memstore/``
leaves it in ``memstore/target/release/memmut-memstore``, which is used
when nothing is found on PATH.
"""

import os
import shutil
import signal
import subprocess
import time

from memmut.memstore import client as clientmod

BINARY = 'memmut-memstore'
SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
CRATE_DIR = os.path.join(SOURCE_ROOT, 'memstore')
SOURCE_TREE_BINARY = os.path.join(CRATE_DIR, 'target', 'release', BINARY)


class MemstoreNotFound(RuntimeError):
    pass


def find_binary(binary=BINARY):
    """Absolute path of the memmut-memstore executable: ``binary`` itself
    if it is a path, else from PATH, else the source tree's release
    build."""
    if os.sep in binary:
        if os.access(binary, os.X_OK):
            return os.path.abspath(binary)
        raise MemstoreNotFound('%s is not an executable file' % binary)
    found = shutil.which(binary)
    if found:
        return found
    if binary == BINARY and os.access(SOURCE_TREE_BINARY, os.X_OK):
        return SOURCE_TREE_BINARY
    raise MemstoreNotFound(
        '%s not found on PATH nor at %s; build it with "cargo build '
        '--release" in %s' % (binary, SOURCE_TREE_BINARY, CRATE_DIR))


def build(timeout=900):
    """``cargo build --release`` of the source tree's crate; returns the
    binary's path."""
    cargo = shutil.which('cargo') or os.path.expanduser('~/.cargo/bin/cargo')
    if not os.access(cargo, os.X_OK):
        raise MemstoreNotFound('cargo is not installed (see '
                               'tools/test-setup.sh)')
    subprocess.run([cargo, 'build', '--release', '--locked', '--quiet'],
                   cwd=CRATE_DIR, check=True, timeout=timeout)
    return SOURCE_TREE_BINARY


def wait_control(path, timeout=15):
    """A control client of the memstore answering on ``path`` (one started
    elsewhere, e.g. in a network namespace), once it says hello."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            c = clientmod.ControlClient(path, timeout=2)
            c.hello()
            return c
        except clientmod.MemstoreError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class MemstoreProcess:
    """One memmut-memstore process (for tests, benchmarks and tools; in
    production it runs as its own service)."""

    def __init__(self, binary, state_dir, socket_dir=None, host_quota=None,
                 bucket_pages=None, log_path=None, extra_args=(),
                 user=None, wrapper=()):
        self.binary = binary
        self.state_dir = state_dir
        self.socket_dir = socket_dir or state_dir
        self.host_quota = host_quota
        self.bucket_pages = bucket_pages
        self.extra_args = list(extra_args)
        self.user = user            # uid to run as (tests of permissions)
        # a command that runs the binary elsewhere and execs it (so the
        # pid stays the server's), e.g. NetnsBed.command(host, [])
        self.wrapper = list(wrapper)
        self.log_path = log_path or os.path.join(self.state_dir,
                                                 'memstore.log')
        self.proc = None

    @property
    def control_path(self):
        return os.path.join(self.socket_dir, 'control.sock')

    def socket_path(self, name):
        return os.path.join(self.socket_dir, name + '.sock')

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def client(self, timeout=5.0):
        return clientmod.ControlClient(self.control_path, timeout)

    def start(self, timeout=15):
        os.makedirs(self.state_dir, exist_ok=True)
        os.makedirs(self.socket_dir, exist_ok=True)
        args = self.wrapper + [self.binary, '--state-dir', self.state_dir,
                               '--socket-dir', self.socket_dir]
        if self.host_quota is not None:
            args += ['--host-quota', str(int(self.host_quota))]
        if self.bucket_pages is not None:
            args += ['--bucket-pages', str(int(self.bucket_pages))]
        args += self.extra_args
        try:
            os.unlink(self.control_path)   # so readiness means *this* one
        except FileNotFoundError:
            pass
        log = open(self.log_path, 'ab')
        try:
            ids = ({} if self.user is None
                   else {'user': self.user, 'group': self.user,
                         'extra_groups': []})
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=log,
                                         start_new_session=True, **ids)
        finally:
            log.close()
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError('memmut-memstore exited with %s; log:\n%s'
                                   % (self.proc.returncode, self.log()))
            try:
                c = self.client(timeout=2)
                c.hello()
                c.close()
                return self
            except clientmod.MemstoreError:
                if time.monotonic() > deadline:
                    self.kill()     # never leave a half-started server
                    raise RuntimeError('memmut-memstore did not answer on %s'
                                       % self.control_path)
                time.sleep(0.05)

    def log(self):
        try:
            with open(self.log_path, errors='replace') as f:
                return f.read()
        except FileNotFoundError:
            return ''

    def kill(self, sig=signal.SIGKILL, timeout=10):
        """Send ``sig`` and wait for the process to end."""
        if not self.proc or self.proc.poll() is not None:
            return
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout)

    def stop(self, timeout=10):
        self.kill(signal.SIGTERM, timeout)

    def restart(self, timeout=15):
        self.stop()
        return self.start(timeout)
