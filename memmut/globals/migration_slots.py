"""Which live migration starts next: the controller's slots.

nova-compute runs at most ``max_concurrent_live_migrations`` (default 1)
live migrations *leaving* its host and queues the others; a migration
handed to nova while another leaves the same host waits there, and an
executor thread waiting on it would hold one of ``[nova] max_parallel``
for nothing while migrations from other hosts could copy. The slots
here hand a migration to nova only when both limits have room: at most
``parallel`` running in all (across every round of the controller) and
at most ``per_source`` leaving each host. A migration waits in the
order it asked (its ``seq``), but one whose source host is busy lets a
later one from a free host go first, as in the simulator
(:class:`memmut.simulator.migration.Scheduler`).
"""

import itertools
import threading


class MigrationSlots:
    """``parallel`` migrations at once in all, ``per_source`` per source
    host (0: no limit per host)."""

    def __init__(self, parallel, per_source=1):
        if parallel < 1 or per_source < 0:
            raise ValueError('need parallel >= 1 and per_source >= 0')
        self.parallel = int(parallel)
        self.per_source = int(per_source)
        self._cond = threading.Condition()
        self._running = 0
        self._leaving = {}          # host -> migrations leaving it
        self._waiting = []          # (seq, host), in the order they asked
        self._seq = itertools.count()
        self.peak = 0               # the most running at once (a figure)

    def _free(self, host):
        return (not self.per_source or
                self._leaving.get(host, 0) < self.per_source)

    def _may_start(self, ticket):
        if self._running >= self.parallel:
            return False
        seq, host = ticket
        if not self._free(host):
            return False
        # The first waiter whose host is free goes first.
        for other in self._waiting:
            if other is ticket:
                return True
            if self._free(other[1]):
                return False
        return True

    def acquire(self, source, stop=None, poll=0.5):
        """Wait for a slot for a migration leaving ``source``. True once
        it has one; False if ``stop`` (an Event) was set first."""
        ticket = (next(self._seq), source)
        with self._cond:
            self._waiting.append(ticket)
            try:
                while not self._may_start(ticket):
                    if stop is not None and stop.is_set():
                        return False
                    self._cond.wait(poll)
                self._running += 1
                self._leaving[source] = self._leaving.get(source, 0) + 1
                self.peak = max(self.peak, self._running)
                return True
            finally:
                self._waiting.remove(ticket)
                # whoever was behind this waiter may go now
                self._cond.notify_all()

    def release(self, source):
        with self._cond:
            self._running -= 1
            self._leaving[source] -= 1
            if not self._leaving[source]:
                del self._leaving[source]
            self._cond.notify_all()

    @property
    def running(self):
        with self._cond:
            return self._running
