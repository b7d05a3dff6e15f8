"""Which controller runs consolidation rounds: a lease row in the database.

Several memmut-controller processes may share one database and one queue
(reports and RPC calls are spread over them); consolidation rounds must
still run in one of them at a time, or two planners would move the same
VMs. The right to run rounds is the ``consolidation`` row of the
``leases`` table (:meth:`memmut.db.api.Database.acquire_lease`): a
controller takes it when it is free or expired, holds it for ``[controller]
leader_lease`` seconds and renews it at the start of each round and every
third of that time while a round runs. Times are the controllers' own
clocks (keep them NTP-synchronized: a lease is only as exclusive as the
clocks agree within ``leader_lease``).

A round that cannot take the lease is not started (status ``busy``). A
round whose renewal fails (another controller took an expired lease, or
the database is away) stops: before executing migrations it executes
none; while executing, no new migration starts. A leader that stops gives
the lease up, so another controller takes over at its next round instead
of after the expiry.

A leader that is killed cannot give the lease up. A controller may still
take it at once, before it expires, when the lease's holder is a process
*it can see is gone*: the holder identity (:func:`holder_id`) records the
host, the kernel's boot id, the PID namespace, the pid and the process's
start time (``/proc/PID/stat`` field 22), and the lease is taken over when
the host, boot id and PID namespace are this controller's own and that
pid is no longer running, or is a zombie, or runs a process that started
at another time (the pid was reused). That is what a controller restarted
after a crash sees of its previous incarnation; it also lets another
controller of the same host take a dead one's lease. The check is
conservative, so two live controllers never both hold the lease:

* another boot id or PID namespace (another machine, a rebooted one, a
  restarted container, or one sharing the host name) cannot be checked
  from here: the lease runs to its expiry, as before;
* a pid that exists but whose ``/proc`` entry cannot be read (another
  user's process under ``hidepid``) counts as alive;
* a holder written by an older memmut, without the process fields, is
  never taken early;
* the takeover is one conditional UPDATE on the exact holder string seen
  dead (:meth:`memmut.db.api.Database.acquire_lease` ``replace=``), so of
  several controllers seeing the same dead holder only one gets it.

A PostgreSQL advisory lock would do the same on PostgreSQL only, and
would tie the leadership to one database connection (lost with the
connection, held by a hung process); the lease row works on every backend
memmut supports and says who holds it (``memmut-controller`` logs it).
"""

import dataclasses
import os
import re
import time
import uuid

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

CONSOLIDATION = 'consolidation'

# Longest holder the ``leases.holder`` column takes.
HOLDER_MAX = 255

# host:pid:token[:tag] proc=BOOT_ID/PIDNS/PID/START (see holder_id)
_HOLDER = re.compile(
    r'^(?P<host>.+):(?P<pid>\d+):[0-9a-f]{8}(?::[^: ]+)? '
    r'proc=(?P<boot>[0-9a-f-]{36})/(?P<pidns>\d+)/(?P=pid)/'
    r'(?P<start>\d+)$')


@dataclasses.dataclass(frozen=True)
class Process:
    """One process incarnation: who can tell whether it still runs."""
    boot_id: str                # /proc/sys/kernel/random/boot_id
    pidns: int                  # inode of /proc/PID/ns/pid
    pid: int
    start: int                  # /proc/PID/stat field 22 (ticks after boot)


def _read(path):
    with open(path, 'rb') as f:
        return f.read()


def _stat(pid):
    """(state, start time) of ``pid`` from ``/proc/PID/stat``."""
    data = _read('/proc/%s/stat' % pid)
    # The command name (field 2) may hold spaces and parentheses: the
    # fields after it start after the last ')'.
    rest = data[data.rindex(b')') + 2:].split()
    return rest[0].decode(), int(rest[19])      # fields 3 and 22


def _pidns(pid):
    link = os.readlink('/proc/%s/ns/pid' % pid)        # 'pid:[4026531836]'
    return int(link[link.index('[') + 1:link.index(']')])


def process(pid=None):
    """The :class:`Process` of ``pid`` (this process by default), or None
    where /proc cannot tell (then its leases are only ever taken over at
    expiry)."""
    try:
        boot = _read('/proc/sys/kernel/random/boot_id').decode().strip()
        pid = os.getpid() if pid is None else pid
        return Process(boot, _pidns(pid), pid, _stat(pid)[1])
    except (OSError, ValueError, IndexError):
        return None


def holder_id(host, tag=None):
    """This process's identity in the lease table: ``host:pid:token``
    (``:tag``, e.g. ``cli``), then `` proc=BOOT_ID/PIDNS/PID/START`` so
    another process of the same host can tell when it is gone."""
    holder = '%s:%d:%s' % (host, os.getpid(), uuid.uuid4().hex[:8])
    if tag:
        holder += ':' + tag
    me = process()
    if me is not None:
        full = '%s proc=%s/%d/%d/%d' % (holder, me.boot_id, me.pidns,
                                        me.pid, me.start)
        if len(full) <= HOLDER_MAX:
            holder = full
    return holder


def parse_holder(holder):
    """``(host, Process)`` of a holder written by :func:`holder_id`, or
    None for one without the process fields."""
    m = _HOLDER.match(holder or '')
    if m is None:
        return None
    return m.group('host'), Process(m.group('boot'), int(m.group('pidns')),
                                    int(m.group('pid')),
                                    int(m.group('start')))


def gone(holder, host):
    """Why ``holder`` is a process of this ``host`` that no longer runs
    (a reason text), or None if it may be alive or cannot be checked from
    here. See the module doc for the rule."""
    parsed = parse_holder(holder)
    me = process()
    if parsed is None or me is None:
        return None
    their_host, them = parsed
    if (their_host != host or them.boot_id != me.boot_id or
            them.pidns != me.pidns or them.pid == me.pid and
            them.start == me.start):
        return None
    try:
        os.kill(them.pid, 0)
    except ProcessLookupError:
        return 'its process %d is gone' % them.pid
    except PermissionError:
        pass                # exists, another user's
    try:
        state, start = _stat(them.pid)
    except (OSError, ValueError, IndexError):
        # The pid exists but /proc does not show it (another user's
        # process under hidepid) or it just exited: maybe alive.
        return None
    if start != them.start:
        return 'pid %d now runs another process' % them.pid
    if state in ('Z', 'X'):
        return 'its process %d has exited' % them.pid
    return None


class Leadership:
    """One controller's hold on a lease; see the module doc.

    ``acquire()`` takes or renews it; :attr:`new` tells whether the last
    acquire took it over from nobody/another holder (the new leader then
    closes the rounds its predecessor left running).
    """

    def __init__(self, db, holder, duration, name=CONSOLIDATION,
                 clock=time.time):
        self.db = db
        self.holder = holder
        self.duration = float(duration)
        self.name = name
        self._clock = clock
        self.held = False
        self.new = False

    def acquire(self):
        """True if this controller holds the lease now (renewed until
        ``now + duration``); never raises (a database error is False).
        A lease whose holder is a dead process of this host is taken over
        at once (see the module doc)."""
        was = self.held
        try:
            self.held = self.db.acquire_lease(self.name, self.holder,
                                              self.duration, self._clock())
            if not self.held:
                self.held = self._take_from_dead()
        except Exception as e:
            LOG.error('Cannot take or renew the %s lease: %s', self.name, e)
            self.held = False
        self.new = self.held and not was
        if self.new:
            LOG.info('This controller (%s) now holds the %s lease',
                     self.holder, self.name)
        elif was and not self.held:
            LOG.warning('This controller (%s) lost the %s lease',
                        self.holder, self.name)
        return self.held

    def _take_from_dead(self):
        lease = self.db.get_lease(self.name)
        if lease is None or lease.expires_at <= self._clock():
            return False
        parsed = parse_holder(self.holder)
        why = parsed and gone(lease.holder, parsed[0])
        if not why:
            return False
        if not self.db.acquire_lease(self.name, self.holder, self.duration,
                                     self._clock(), replace=lease.holder):
            return False        # another controller took it first
        LOG.warning('Took the %s lease over from %s before its expiry: %s '
                    '(same host, boot and PID namespace)', self.name,
                    lease.holder, why)
        return True

    def holder_now(self):
        """Who holds the lease (None if nobody does or it cannot be read)."""
        try:
            lease = self.db.get_lease(self.name)
        except Exception:
            return None
        if lease is None or lease.expires_at <= self._clock():
            return None
        return lease.holder

    def release(self):
        if not self.held:
            return False
        self.held = False
        try:
            return self.db.release_lease(self.name, self.holder,
                                         self._clock())
        except Exception as e:
            LOG.warning('Cannot release the %s lease (it expires by '
                        'itself): %s', self.name, e)
            return False
