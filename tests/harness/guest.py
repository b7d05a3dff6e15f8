"""A running test guest, its serial console, and baseline swap backends."""

import os
import re
import signal
import subprocess
import time

try:
    import libvirt
except ImportError:  # the libvirtd fixture reports it
    libvirt = None

from memmut.evaluation import workloads

READY = r'MEMMUT-GUEST READY'
# What makes waiting pointless: the guest cannot print the line any more.
_FATAL = re.compile(r'Kernel panic|MEMWORK fatal')


class GuestError(AssertionError):
    """The guest failed, or did not print what was awaited."""


def workload_cmdline(schedule, alloc='d', loops=1, period_ms=0,
                     poweroff=False, pattern=None):
    """Kernel command line words that make /init run memwork.

    ``schedule`` is a list of :class:`memmut.evaluation.workloads.Step` or an
    already
    encoded string (``64x10,128x7.5``); ``pattern`` a
    :class:`memmut.evaluation.workloads.Pattern` or its text (None: memwork's
    default, seq).
    """
    if not isinstance(schedule, str):
        schedule = workloads.encode(schedule)
    workloads.decode(schedule)                 # fail early on a bad one
    if alloc not in workloads.ALLOCATIONS:
        raise ValueError('alloc must be one of %s' % (workloads.ALLOCATIONS,))
    words = ['memwork.sched=' + schedule, 'memwork.alloc=' + alloc,
             'memwork.loops=%d' % loops]
    if period_ms:
        words.append('memwork.period_ms=%d' % period_ms)
    if poweroff:
        words.append('memwork.poweroff=1')
    if pattern is not None:
        if isinstance(pattern, str):
            pattern = workloads.parse_pattern(pattern)
        words.append('memwork.pattern=' + pattern.encode())
    return ' '.join(words)


def _value(text):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def parse_lines(text, prefix):
    """``PREFIX [event] k=v ...`` lines as dicts; ``event`` is the bare
    word after the prefix, or 'pass' for MEMWORK progress lines."""
    out = []
    for m in re.finditer(r'^%s ([^\r\n]*)' % re.escape(prefix), text, re.M):
        d = {}
        for i, tok in enumerate(m.group(1).split()):
            k, sep, v = tok.partition('=')
            if sep:
                d[k] = _value(v)
            elif i == 0:
                d['event'] = tok
        d.setdefault('event', 'pass')
        out.append(d)
    return out


STAT_FIELDS = ('t', 'memtotal_kb', 'memfree_kb', 'memavail_kb',
               'swaptotal_kb', 'swapfree_kb', 'pswpin', 'pswpout')


def stat_lines(text):
    """The complete GUESTSTAT lines of ``text`` as dicts. A line the
    guest kernel's console output cut in two lacks fields (CI after stop
    33: a wait on ``pswpout`` failed with KeyError): dropped."""
    return [d for d in parse_lines(text, 'GUESTSTAT')
            if all(k in d for k in STAT_FIELDS)]


def wait_until(fetch, check, timeout, what='condition', interval=0.2):
    """Call ``fetch()`` until ``check(value)`` holds; return that value."""
    deadline = time.monotonic() + timeout
    while True:
        value = fetch()
        if check(value):
            return value
        if time.monotonic() > deadline:
            raise GuestError('timed out after %ss waiting for %s; last value: '
                             '%r' % (timeout, what, value))
        time.sleep(interval)


class Guest:
    """A domain of the test harness: define + start, watch its console."""

    def __init__(self, conn, spec, persistent=True):
        self.conn = conn
        self.spec = spec
        self.persistent = persistent
        self.dom = None
        self.started_at = None
        self.ready_after = None
        self.pid_dir = None          # the libvirtd's qemu_pid_dir
        self.swap_server = None      # set by the factory for swap='nbd'

    @property
    def name(self):
        return self.spec.name

    @property
    def uuid(self):
        return self.spec.uuid

    def start(self):
        xml = self.spec.xml()
        if self.persistent:
            self.dom = self.conn.defineXML(xml)
            self.started_at = time.monotonic()
            self.dom.create()
        else:
            self.started_at = time.monotonic()
            self.dom = self.conn.createXML(xml, 0)
        return self

    def is_active(self):
        try:
            return bool(self.dom.isActive())
        except libvirt.libvirtError:
            return False

    def log(self):
        try:
            with open(self.spec.serial_log, errors='replace') as f:
                return f.read()
        except FileNotFoundError:
            return ''

    def mark(self):
        """Position in the console log; pass as ``after`` to wait_for."""
        return len(self.log())

    def wait_for(self, regex, timeout=60, after=0):
        """Wait until ``regex`` appears in the console log (past ``after``)
        and return the match; raise GuestError on timeout, panic, or when the
        domain stops without printing it."""
        pattern = re.compile(regex, re.M)
        deadline = time.monotonic() + timeout
        while True:
            text = self.log()[after:]
            m = pattern.search(text)
            if m:
                return m
            why = None
            if _FATAL.search(text):
                why = 'guest failed'
            elif not self.is_active():
                time.sleep(0.2)             # let the last output land
                m = pattern.search(self.log()[after:])
                if m:
                    return m
                why = 'domain is no longer running'
            elif time.monotonic() > deadline:
                why = 'timed out after %ss' % timeout
            if why:
                raise GuestError('%s: waiting for %r on %s; console tail:\n%s'
                                 % (why, regex, self.name,
                                    '\n'.join(text.splitlines()[-30:])))
            time.sleep(0.1)

    def wait_ready(self, timeout=90):
        """Wait for /init's READY line; returns seconds since start().
        Also waits for the GUESTSTAT line /init prints right after READY,
        so ``guest_stats()`` is never empty once the guest is ready."""
        self.wait_for(READY, timeout)
        if self.ready_after is None:
            self.ready_after = time.monotonic() - self.started_at
        self.wait_for(r'^GUESTSTAT ', 10)
        return self.ready_after

    def wait_done(self, timeout=120):
        """Wait for memwork's final line; returns its fields."""
        self.wait_for(r'^MEMWORK done ', timeout)
        return [d for d in self.workload_lines() if d['event'] == 'done'][-1]

    def wait_shutoff(self, timeout=30):
        deadline = time.monotonic() + timeout
        while self.is_active():
            if time.monotonic() > deadline:
                raise GuestError('%s still running after %ss'
                                 % (self.name, timeout))
            time.sleep(0.1)

    def workload_lines(self):
        """MEMWORK lines as dicts (event: start, pass, end, error, done,
        exit)."""
        return parse_lines(self.log(), 'MEMWORK')

    def guest_stats(self):
        """GUESTSTAT lines as dicts (t, memtotal_kb, memfree_kb,
        memavail_kb, swaptotal_kb, swapfree_kb, pswpin, pswpout)."""
        return stat_lines(self.log())

    def wait_stat(self, check, timeout=30, after=0):
        """First GUESTSTAT line past ``after`` (a mark()) for which
        ``check(dict)`` holds."""
        def fetch():
            return stat_lines(self.log()[after:])
        found = wait_until(fetch, lambda ls: any(map(check, ls)), timeout,
                           'a matching GUESTSTAT line on %s' % self.name)
        return next(d for d in found if check(d))

    def qemu_pid(self, pid_dir=None):
        with open(os.path.join(pid_dir or self.pid_dir,
                               self.name + '.pid')) as f:
            return int(f.read().strip())

    def destroy(self):
        """Stop and undefine; safe to call twice."""
        if self.dom is None:
            return
        try:
            if self.dom.isActive():
                self.dom.destroy()
        except libvirt.libvirtError:
            pass
        try:
            if self.dom.isPersistent():
                self.dom.undefine()
        except libvirt.libvirtError:
            pass
        self.dom = None


# -- swap backends ----------------------------------------------------------

def create_swap_file(path, size_mib):
    """A sparse raw file for a file-backed swap disk."""
    with open(path, 'wb') as f:
        f.truncate(size_mib * 1024 * 1024)
    return path


class NbdkitServer:
    """``nbdkit memory`` on a unix socket: the baseline NBD swap server.

    nbdkit is left to daemonize itself (-P pidfile): run with -f from a
    script it dies with that script.  With ``log`` the log filter records
    every request, which :meth:`requests` counts.
    """

    def __init__(self, socket, size_mib, log=None):
        self.socket = socket
        self.size_mib = size_mib
        self.log = log
        self.pidfile = socket + '.pid'
        self.pid = None

    def start(self, timeout=10):
        args = ['nbdkit', '--unix', self.socket, '-P', self.pidfile]
        if self.log:
            args += ['--filter=log']
        args += ['memory', '%dM' % self.size_mib]
        if self.log:
            args += ['logfile=' + self.log]
        subprocess.run(args, check=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while not (os.path.exists(self.socket) and self._read_pid()):
            if time.monotonic() > deadline:
                raise RuntimeError('nbdkit did not come up on %s'
                                   % self.socket)
            time.sleep(0.05)
        self.pid = self._read_pid()
        return self

    def _read_pid(self):
        try:
            with open(self.pidfile) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            return None

    def requests(self):
        """Counts of logged requests by type (Read, Write, Flush...), plus
        ``write_bytes``; needs ``log``."""
        counts = {'write_bytes': 0}
        with open(self.log) as f:
            for line in f:
                m = re.search(r' (Read|Write|Flush|Trim|Zero|Cache) id=\d+'
                              r'(?: offset=\S+ count=(0x[0-9a-f]+|\d+))?',
                              line)
                if m and '...' in line:     # the request, not its reply
                    counts[m.group(1)] = counts.get(m.group(1), 0) + 1
                    if m.group(1) == 'Write' and m.group(2):
                        counts['write_bytes'] += int(m.group(2), 0)
        return counts

    def stop(self, timeout=10):
        if not self.pid:
            return
        try:
            os.kill(self.pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while os.path.exists('/proc/%d' % self.pid):
                if time.monotonic() > deadline:
                    os.kill(self.pid, signal.SIGKILL)
                    break
                time.sleep(0.05)
        except ProcessLookupError:
            pass
        self.pid = None
        for path in (self.socket, self.pidfile):   # nbdkit leaves them
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass


class MemstoreExport:
    """A guest's swap disk on memmut-memstore (``swap='memstore'``): the
    export ``name`` of the shared server ``process``
    (tests.harness.memstore.MemstoreProcess)."""

    def __init__(self, process, name):
        self.process = process
        self.name = name
        self.socket = process.socket_path(name)

    def stats(self, **kwargs):
        c = self.process.client()
        try:
            return c.stats(self.name, **kwargs)
        finally:
            c.close()

    def requests(self):
        """Counts of requests by type, like NbdkitServer.requests()
        (since the server last started)."""
        c = self.stats()['counters']
        return {'Read': c['reads'], 'Write': c['writes'],
                'Flush': c['flushes'], 'Trim': c['trims'],
                'Zero': c['zeroes'], 'write_bytes': c['write_bytes'],
                'read_bytes': c['read_bytes']}
