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

A PostgreSQL advisory lock would do the same on PostgreSQL only, and
would tie the leadership to one database connection (lost with the
connection, held by a hung process); the lease row works on every backend
memmut supports and says who holds it (``memmut-controller`` logs it).
"""

import os
import time
import uuid

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

CONSOLIDATION = 'consolidation'


def holder_id(host):
    """This process's identity in the lease table: host, pid, token."""
    return '%s:%d:%s' % (host, os.getpid(), uuid.uuid4().hex[:8])


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
        ``now + duration``); never raises (a database error is False)."""
        was = self.held
        try:
            self.held = self.db.acquire_lease(self.name, self.holder,
                                              self.duration, self._clock())
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
