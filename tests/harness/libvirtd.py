"""A private libvirtd for the functional tests.

The machine's own libvirt state is never touched: libvirtd runs inside its
own mount namespace (``unshare -m``) where /etc/libvirt, /run/libvirt,
/var/lib/libvirt, /var/log/libvirt and /var/cache/libvirt are bind mounts of
directories under one private temp dir.  Where a mount point does not exist
on the host, the parent is covered by an overlay whose upper layer is also
private, so not even an empty directory is created on the machine.

QEMU processes inherit that mount namespace; stop() uses it to find and kill
any QEMU the daemon leaves behind, and start() reaps what a killed earlier
test session left.
"""

import ctypes
import glob
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

from tests.harness import domain

try:
    import libvirt
except ImportError:  # the fixtures turn this into a skip (or a CI failure)
    libvirt = None

LIBVIRTD = '/usr/sbin/libvirtd'
STATE_PREFIX = 'memmut-libvirtd-'

QEMU_CONF = '''\
# Written by memmut's functional test harness (private libvirtd).
user = "root"
group = "root"
security_driver = "none"
stdio_handler = "file"
remember_owner = 0
# No cgroups: the machine's cgroup tree stays as it is, and nothing in it can
# outlive the tests.
cgroup_controllers = [ ]
# QEMU stays in libvirtd's mount namespace (no private /dev namespace per
# domain), which is how the harness finds every QEMU it started.
namespaces = [ ]
'''

LIBVIRTD_CONF = '''\
# Written by memmut's functional test harness (private libvirtd).
unix_sock_group = "root"
unix_sock_ro_perms = "0700"
unix_sock_rw_perms = "0700"
auth_unix_ro = "none"
auth_unix_rw = "none"
log_outputs = "3:file:/var/log/libvirt/libvirtd.log"
'''

# (mount point, private subdir); /var/run is a link to /run on Debian.
MOUNTS = (('/etc/libvirt', 'etc'), ('/run/libvirt', 'run'),
          ('/var/lib/libvirt', 'lib'), ('/var/log/libvirt', 'log'),
          ('/var/cache/libvirt', 'cache'))


class LibvirtdError(RuntimeError):
    pass


def ensure_qemu_user():
    """libvirtd refuses to start without the libvirt-qemu user and group,
    even with user = "root" in qemu.conf (normally made by
    libvirt-daemon-system, which is not installed here)."""
    if subprocess.run(['getent', 'group', 'libvirt-qemu'],
                      capture_output=True).returncode:
        subprocess.run(['groupadd', '--system', 'libvirt-qemu'], check=True)
    if subprocess.run(['getent', 'passwd', 'libvirt-qemu'],
                      capture_output=True).returncode:
        subprocess.run(['useradd', '--system', '--no-create-home',
                        '--home-dir', '/var/lib/libvirt',
                        '--shell', '/usr/sbin/nologin',
                        '--gid', 'libvirt-qemu', 'libvirt-qemu'], check=True)


def _mnt_ns(pid):
    try:
        return os.readlink('/proc/%s/ns/mnt' % pid)
    except OSError:
        return None


def _pids_in_ns(ns):
    """Processes in mount namespace ``ns`` (never ours: see the guard)."""
    if not ns or ns == _mnt_ns('self'):
        return []
    return [int(p) for p in os.listdir('/proc')
            if p.isdigit() and _mnt_ns(p) == ns]


def _kill_all(pids, grace=10):
    """SIGTERM, up to ``grace`` seconds, then SIGKILL what is left."""
    signals = [(signal.SIGTERM, grace)] if grace else []
    for sig, wait in signals + [(signal.SIGKILL, 10)]:
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while pids and time.monotonic() < deadline:
            pids = [p for p in pids if os.path.exists('/proc/%d' % p)
                    and not _is_zombie(p)]
            time.sleep(0.05)
        if not pids:
            return


def _is_zombie(pid):
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] == 'Z'
    except OSError:
        return True


def _set_pdeathsig():
    # If the test process dies without cleaning up, libvirtd gets SIGTERM
    # (its QEMUs are then reaped by the next session's reap_stale()).
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def reap_stale(tmp_root=None):
    """Kill leftovers of earlier sessions whose test process is gone."""
    tmp_root = tmp_root or tempfile.gettempdir()
    for name in os.listdir(tmp_root):
        path = os.path.join(tmp_root, name)
        state = os.path.join(path, 'state.json')
        if not name.startswith(STATE_PREFIX) or not os.path.isfile(state):
            continue
        try:
            with open(state) as f:
                info = json.load(f)
        except (OSError, ValueError):
            continue
        if os.path.exists('/proc/%d' % info.get('owner', 0)):
            continue                      # its session is still running
        pids = [p for p in _pids_in_ns(info.get('ns'))
                if _is_ours(p)]
        # helpers (nbdkit) daemonize outside the namespace, and a QEMU may
        # have been given its own: by pid file too
        for pidfile in (glob.glob(os.path.join(path, '*', '*.pid')) +
                        glob.glob(os.path.join(path, 'run', 'qemu', '*.pid'))):
            try:
                with open(pidfile) as f:
                    pid = int(f.read().strip())
            except (OSError, ValueError):
                continue
            if _is_ours(pid):
                pids.append(pid)
        _kill_all(pids, grace=0)          # leftovers: no need to be gentle
        shutil.rmtree(path, ignore_errors=True)


def _is_ours(pid):
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            exe = os.path.basename(f.read().split(b'\0')[0])
    except OSError:
        return False
    return exe.startswith(b'qemu') or exe in (b'libvirtd', b'nbdkit')


class PrivateLibvirtd:
    """A libvirtd of our own.

    ``uri`` is the URI to connect to, ``qemu_pid_dir`` the host path where
    QEMU pid files appear (memmut's ``[libvirt] qemu_pid_dir``), ``log_dir``
    holds libvirtd.log and qemu/<domain>.log.  ``cache_dir`` (optional, kept
    across sessions) saves the ~8 s QEMU capability probe of a cold start.
    """

    def __init__(self, cache_dir=None, binary=LIBVIRTD):
        self.binary = binary
        self.cache_dir = cache_dir
        self.root = None
        self.proc = None
        self.ns = None
        self._conn = None

    # paths seen from the host
    def _p(self, sub):
        return os.path.join(self.root, sub)

    @property
    def run_dir(self):
        return self._p('run')

    @property
    def socket(self):
        return os.path.join(self.run_dir, 'libvirt-sock')

    @property
    def uri(self):
        return 'qemu:///system?socket=%s' % self.socket

    @property
    def qemu_pid_dir(self):
        return os.path.join(self.run_dir, 'qemu')

    @property
    def log_dir(self):
        return self._p('log')

    def _script(self):
        # mount -n: no /run/mount/utab on the host (libmount would make it)
        lines = ['set -e']
        for target, sub in MOUNTS:
            src = self._p(sub)
            if sub == 'cache' and self.cache_dir:
                src = self.cache_dir
            if not os.path.isdir(target):
                parent = os.path.dirname(target)
                ovl = self._p('ovl' + parent.replace('/', '-'))
                os.makedirs(ovl + '/upper', exist_ok=True)
                os.makedirs(ovl + '/work', exist_ok=True)
                # An overlay with a private upper layer gives a mount point
                # without creating it on the host (once per parent).
                lines.append(
                    'mountpoint -q %s || mount -n -t overlay overlay -o '
                    'lowerdir=%s,upperdir=%s/upper,workdir=%s/work %s'
                    % (parent, parent, ovl, ovl, parent))
                lines.append('mkdir -p %s' % target)
            lines.append('mount -n --bind %s %s' % (src, target))
        lines.append('exec %s --pid-file /run/libvirt/libvirtd.pid'
                     % self.binary)
        return '\n'.join(lines)

    def start(self, timeout=60):
        if libvirt is None:
            raise LibvirtdError('libvirt-python is not installed')
        ensure_qemu_user()
        reap_stale()
        self.root = tempfile.mkdtemp(prefix=STATE_PREFIX)
        try:
            self._start(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self, timeout):
        for _, sub in MOUNTS:
            os.makedirs(self._p(sub), exist_ok=True)
        if self.cache_dir:
            os.makedirs(self.cache_dir, exist_ok=True)
        # Top-level config files only: no domains or networks of the machine.
        if os.path.isdir('/etc/libvirt'):
            for name in os.listdir('/etc/libvirt'):
                src = os.path.join('/etc/libvirt', name)
                if os.path.isfile(src):
                    shutil.copy(src, self._p('etc'))
        with open(self._p('etc/qemu.conf'), 'w') as f:
            f.write(QEMU_CONF)
        with open(self._p('etc/libvirtd.conf'), 'w') as f:
            f.write(LIBVIRTD_CONF)
        self._write_state()        # owner first: reapable from now on
        # Overlay mount points are created by _script(): call it first.
        script = self._script()
        self._stderr = open(self._p('libvirtd.stderr'), 'wb')
        self.proc = subprocess.Popen(
            ['unshare', '--mount', '--propagation', 'private',
             'sh', '-c', script], stdin=subprocess.DEVNULL,
            stdout=self._stderr, stderr=self._stderr,
            start_new_session=True, preexec_fn=_set_pdeathsig)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise LibvirtdError('libvirtd exited with %s:\n%s' % (
                    self.proc.returncode, self.diagnostics()))
            if os.path.exists(self.socket):
                try:
                    self._conn = libvirt.open(self.uri)
                    break
                except libvirt.libvirtError:
                    pass
            if time.monotonic() > deadline:
                raise LibvirtdError('libvirtd socket %s did not answer in %ds:'
                                    '\n%s' % (self.socket, timeout,
                                              self.diagnostics()))
            time.sleep(0.1)
        # libvirtd runs now, so its namespace is the new one; never record
        # ours (stop() would kill every process of the machine's namespace).
        ns = _mnt_ns(self.proc.pid)
        if ns == _mnt_ns('self'):
            raise LibvirtdError('libvirtd is not in a private mount namespace')
        self.ns = ns
        self._write_state()

    def _write_state(self):
        with open(self._p('state.json.tmp'), 'w') as f:
            json.dump({'owner': os.getpid(), 'ns': self.ns,
                       'pid': self.proc and self.proc.pid}, f)
        os.rename(self._p('state.json.tmp'), self._p('state.json'))

    @property
    def conn(self):
        """A connection shared by the session (open() for a fresh one)."""
        if self._conn is None:
            self._conn = libvirt.open(self.uri)
        return self._conn

    def open(self):
        return libvirt.open(self.uri)

    def scratch_dir(self):
        """A new short directory for sockets and pid files of helpers
        (unix socket paths are limited to 107 bytes); what is left in it
        when a session is killed is reaped by the next one."""
        return tempfile.mkdtemp(prefix='s', dir=self.root)

    def memmut_options(self, domain_type=None):
        """memmut's [libvirt] options for this daemon."""
        return {'connection_uri': self.uri,
                'domain_type': domain_type or domain.default_domain_type(),
                'qemu_pid_dir': self.qemu_pid_dir}

    def qemu_pid(self, domain_name):
        with open(os.path.join(self.qemu_pid_dir, domain_name + '.pid')) as f:
            return int(f.read().strip())

    def diagnostics(self, lines=40):
        out = []
        for path in (self._p('libvirtd.stderr'),
                     os.path.join(self.log_dir, 'libvirtd.log')):
            try:
                with open(path, errors='replace') as f:
                    tail = f.read().splitlines()[-lines:]
                out.append('--- %s\n%s' % (path, '\n'.join(tail)))
            except OSError:
                pass
        return '\n'.join(out)

    def stop(self):
        """Destroy every domain, kill libvirtd and its QEMUs, remove the
        private dirs.  Safe to call more than once and after a failed start.
        """
        if self._conn is not None:
            try:
                for dom in self._conn.listAllDomains(0):
                    try:
                        if dom.isActive():
                            dom.destroy()
                        if dom.isPersistent():
                            dom.undefine()
                    except libvirt.libvirtError:
                        pass
                self._conn.close()
            except libvirt.libvirtError:
                pass
            self._conn = None
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            self.proc = None
        # Whatever is left in the namespace is a QEMU of ours.
        _kill_all(_pids_in_ns(self.ns))
        if getattr(self, '_stderr', None):
            self._stderr.close()
            self._stderr = None
        if self.root:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
