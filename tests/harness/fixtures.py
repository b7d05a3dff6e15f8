"""pytest fixtures for real-hypervisor tests (imported by conftest.py).

    def test_x(libvirtd, guest_factory):
        g = guest_factory(memory_mib=384,
                          schedule=workloads.shape_schedule('W3', 200, 2),
                          alloc='s', swap='nbd')
        g.wait_done()
        libvirtd.uri, libvirtd.qemu_pid_dir, g.dom, g.qemu_pid(), ...

Missing prerequisites (binaries, root, libvirt-python, kernel, busybox, gcc)
skip the tests, except with CI=true where they fail: CI must not go green
by skipping everything.
"""

import concurrent.futures
import os
import shutil
import signal
import subprocess
import threading
import uuid as uuidlib

import pytest

from memmut.virt.libvirt import swapdisk
from tests.harness import memstore as memstore_process
from tests.harness import domain
from tests.harness import guest as guestmod
from tests.harness import image
from tests.harness import libvirtd as libvirtd_mod

__all__ = ['libvirtd', 'guest_image', 'guest_factory', 'GuestFactory',
           'memstore_binary']


def _unavailable(reason):
    if os.environ.get('CI') == 'true':
        pytest.fail('real-hypervisor prerequisite missing (CI=true, so this '
                    'is a failure, not a skip): ' + reason, pytrace=False)
    pytest.skip(reason)


def find_or_build_memstore():
    """The memmut-memstore binary, built with cargo if it is missing."""
    try:
        return memstore_process.find_binary()
    except memstore_process.MemstoreNotFound:
        try:
            return memstore_process.build()
        except (memstore_process.MemstoreNotFound, OSError,
                subprocess.SubprocessError) as e:
            _unavailable('memmut-memstore cannot be built: %s' % e)


@pytest.fixture(scope='session')
def memstore_binary():
    return find_or_build_memstore()


def _cache_dir():
    return os.environ.get('MEMMUT_TEST_CACHE', image.DEFAULT_CACHE)


@pytest.fixture(scope='session')
def libvirtd():
    """A private, running libvirtd (PrivateLibvirtd): ``.uri``, ``.conn``,
    ``.open()``, ``.qemu_pid_dir``, ``.log_dir``, ``.memmut_options()``."""
    if os.geteuid() != 0:
        _unavailable('the private libvirtd needs root')
    if libvirtd_mod.libvirt is None:
        _unavailable('libvirt-python is not installed')
    for binary in (libvirtd_mod.LIBVIRTD, 'qemu-system-x86_64', 'unshare',
                   'nbdkit'):
        if not shutil.which(binary):
            _unavailable('%s not found (see tools/test-setup.sh)' % binary)
    # A SIGTERM (e.g. a CI job timeout) becomes an interrupt, so that the
    # teardown below still destroys the guests and stops the daemon.
    previous = signal.getsignal(signal.SIGTERM)
    if previous == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _raise_interrupt)
    daemon = libvirtd_mod.PrivateLibvirtd(
        cache_dir=os.path.join(_cache_dir(), 'libvirt-cache'))
    try:
        daemon.start()
        yield daemon
    finally:
        daemon.stop()
        if previous == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, previous)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt('SIGTERM')


@pytest.fixture(scope='session')
def guest_image():
    """The guest kernel + initramfs (image.GuestImage), built once."""
    try:
        return image.build_image(_cache_dir())
    except image.ImageError as e:
        _unavailable(str(e))


class GuestFactory:
    """Creates test guests; everything it made is torn down by cleanup()."""

    def __init__(self, daemon, img, workdir):
        self.libvirtd = daemon
        self.image = img
        self.workdir = str(workdir)
        self.sock_dir = daemon.scratch_dir()   # nbdkit sockets + pid files
        self.conn = daemon.open()
        self.guests = []
        self.servers = []
        self.memstore = None         # shared memmut-memstore, on demand
        # Benchmarks create guests from several threads: without the lock
        # two could each start a memstore and one would outlive cleanup().
        self._lock = threading.RLock()

    def nbd_server(self, size_mib=512, log=True):
        """A started ``nbdkit memory`` server; ``.socket``, ``.requests()``."""
        n = len(self.servers)
        server = guestmod.NbdkitServer(
            os.path.join(self.sock_dir, 'nbd%d.sock' % n), size_mib,
            log=os.path.join(self.workdir, 'nbd%d.log' % n) if log else None)
        self.servers.append(server)
        return server.start()

    def memstore_server(self, host_quota_mib=1024, bucket_pages=None):
        """The factory's memmut-memstore (started on first use, built
        with cargo if the binary is missing): a MemstoreProcess."""
        with self._lock:
            if self.memstore is None:
                self.memstore = self._start_memstore(host_quota_mib,
                                                     bucket_pages)
        return self.memstore

    def _start_memstore(self, host_quota_mib, bucket_pages):
        binary = find_or_build_memstore()
        server = memstore_process.MemstoreProcess(
            binary, os.path.join(self.workdir, 'memstore-state'),
            socket_dir=self.sock_dir,
            host_quota=host_quota_mib * 1024 * 1024,
            bucket_pages=bucket_pages,
            log_path=os.path.join(self.workdir, 'memstore.log'))
        return server.start()

    def memstore_export(self, name, size_mib=512, quota_mib=None):
        """A new export of the factory's memstore: MemstoreExport."""
        server = self.memstore_server()
        c = server.client()
        try:
            c.create_export(name, size_mib * 1024 * 1024,
                            quota=None if quota_mib is None
                            else quota_mib * 1024 * 1024)
        finally:
            c.close()
        return guestmod.MemstoreExport(server, name)

    def swap_file(self, size_mib=512):
        return guestmod.create_swap_file(
            os.path.join(self.workdir, 'swap%d.img' % len(self.guests)),
            size_mib)

    def spec(self, memory_mib=384, current_mib=None, schedule=None,
             alloc='d', loops=1, period_ms=0, poweroff=False, swap=None,
             cmdline='', stat_period=None, name=None, pattern=None,
             **options):
        """A DomainSpec for the harness image (``options`` are further
        DomainSpec fields: nova, memfd, tb_cache_mib, domain_type, uuid)."""
        words = [cmdline] if cmdline else []
        if schedule is not None:
            words.append(guestmod.workload_cmdline(
                schedule, alloc, loops, period_ms, poweroff, pattern))
        if stat_period:
            words.append('memmut.statperiod=%d' % stat_period)
        uuid = options.pop('uuid', None) or str(uuidlib.uuid4())
        name = name or 'mmtest-' + uuid[:8]
        return domain.DomainSpec(
            name=name, uuid=uuid, kernel=self.image.kernel,
            initrd=self.image.initrd,
            serial_log=os.path.join(self.workdir, name + '.console.log'),
            memory_mib=memory_mib, current_mib=current_mib, swap=swap,
            cmdline=' '.join(words), **options)

    def __call__(self, *, swap=None, swap_mib=512, start=True,
                 wait_ready=True, swap_quota_mib=None, reconnect_delay=10,
                 **kwargs):
        """Build, start and (by default) wait for READY.

        ``swap``: None, 'file', 'nbd' (a fresh logged nbdkit, on
        ``guest.swap_server``), 'memstore' (an export named after the
        guest's UUID on the factory's memmut-memstore, a MemstoreExport on
        ``guest.swap_server``; ``swap_quota_mib`` is its RAM quota,
        ``reconnect_delay`` QEMU's reconnect delay) or a domain.SwapDisk.
        Other keywords as for :meth:`spec`.
        """
        server = None
        if swap == 'memstore':
            kwargs.setdefault('uuid', str(uuidlib.uuid4()))
            server = self.memstore_export(kwargs['uuid'], swap_mib,
                                          swap_quota_mib)
            if (reconnect_delay and self.conn.getLibVersion()
                    < swapdisk.LIBVIRT_NBD_RECONNECT):
                # libvirt < 9.2 drops <reconnect/>: QEMU passthrough, as
                # memmut's libvirt driver does
                # (memmut/virt/libvirt/swapdisk.py)
                kwargs['qemu_args'] = swapdisk.passthrough_args(
                    server.socket, server.name, reconnect_delay)
                swap = None
            else:
                swap = domain.SwapDisk(nbd_socket=server.socket,
                                       nbd_export=server.name,
                                       reconnect_delay=reconnect_delay)
        elif swap == 'nbd':
            server = self.nbd_server(swap_mib)
            swap = domain.SwapDisk(nbd_socket=server.socket)
        elif swap == 'file':
            swap = domain.SwapDisk(file=self.swap_file(swap_mib))
        g = guestmod.Guest(self.conn, self.spec(swap=swap, **kwargs))
        g.swap_server = server
        g.pid_dir = self.libvirtd.qemu_pid_dir
        self.guests.append(g)
        if start:
            g.start()
            if wait_ready:
                g.wait_ready()
        return g

    def cleanup(self):
        # libvirt takes ~1.6 s to destroy a TCG guest: do them together
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda g: g.destroy(), self.guests))
        for s in self.servers:
            s.stop()
        if self.memstore is not None:
            self.memstore.stop()
        try:
            self.conn.close()
        except Exception:
            pass
        shutil.rmtree(self.sock_dir, ignore_errors=True)


@pytest.fixture
def guest_factory(libvirtd, guest_image, tmp_path):
    """``guest_factory(memory_mib=..., schedule=..., ...)`` -> started Guest;
    all guests and NBD servers are destroyed when the test ends."""
    factory = GuestFactory(libvirtd, guest_image, tmp_path)
    try:
        yield factory
    finally:
        factory.cleanup()


def guest_factory_on(build):
    """A guest-factory fixture on the image ``build()`` returns (built once
    per test session: images with extras, e.g. the kernel helper or
    redis); unavailable (a skip, a failure under CI) when it cannot be
    built."""
    built = {}

    @pytest.fixture
    def factory(libvirtd, tmp_path):
        if 'image' not in built:
            try:
                built['image'] = build()
            except image.ImageError as e:
                _unavailable(str(e))
        made = GuestFactory(libvirtd, built['image'], tmp_path)
        try:
            yield made
        finally:
            made.cleanup()
    return factory
