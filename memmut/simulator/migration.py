"""Live migrations that take time.

A migration planned by a round copies the VM's memory (the memory it is
packed on: its booking, or WSS^max_avg plus headroom) at the migration
bandwidth: ``size / bandwidth`` seconds. Each host sends at most
``concurrency`` migrations at a time (nova's
``max_concurrent_live_migrations``, default 1: nova-compute runs the
live migrations *leaving* it in a pool of that size and does not limit
those arriving); with ``incoming`` set, a host also receives at most that
many at a time (a destination link that that many migrations at the
bandwidth fill). With ``parallel`` set, at most that many migrations
copy at once in all (memmut's executor hands a round's moves to nova
``[nova] max_parallel`` at a time). The others wait in the order the
rounds planned them, and a waiting migration starts as soon as its hosts
have a free slot, even if an earlier one still waits.
With ``order`` ``priority`` (``[consolidation] move_order``, the
controller's executor's order: :mod:`memmut.consolidation.move_order`)
the waiting migrations are taken overload first, the most overloaded
source first, and an underload move waits while an overload move not
finished shares one of its hosts.
Migrations left over at the end of a round's interval carry on into the
next one.

While a migration waits or copies the VM is *in flight*: it stays on its
source, the next rounds do not re-plan it, and its memory is reserved on
both hosts. While it copies, the VM's memory counts on both hosts and both
spend ``cpu_mhz`` on the copy. It runs on the destination from the end of
the copy. A VM that leaves the trace cancels its migration.
"""

import bisect
import dataclasses

from memmut.consolidation import move_order


@dataclasses.dataclass
class InFlightMigration:
    vm: int
    source: int
    destination: int
    size_mb: float
    duration: float
    planned: float
    start: float = None
    end: float = None
    kind: str = move_order.OVERLOAD
    load: float = 0.0
    seq: int = 0

    def entry(self):
        return move_order.Entry(self.kind, self.source, self.destination,
                                self.load)


@dataclasses.dataclass
class Overlap:
    """A migration's share of one accounting window: ``copy`` is the
    fraction of the window spent copying, ``before`` the fraction before
    the switch-over (the VM runs on the source), ``done`` whether it
    completed in the window."""
    migration: InFlightMigration
    copy: float
    before: float
    done: bool


class Scheduler:
    """In-flight migrations with per-host concurrency limits: at most
    ``concurrency`` leaving a host at a time, at most ``incoming``
    arriving (0: no limit, as nova), and at most ``parallel`` in all
    (0: no limit)."""

    def __init__(self, bandwidth_mb_s, concurrency=1,
                 order=move_order.PLAN, incoming=0, parallel=0):
        if bandwidth_mb_s <= 0:
            raise ValueError('migration bandwidth must be positive')
        if concurrency < 1:
            raise ValueError('need at least one migration per host')
        if incoming < 0 or parallel < 0:
            raise ValueError('the incoming and parallel limits must not '
                             'be negative')
        self.bandwidth = float(bandwidth_mb_s)
        self.concurrency = int(concurrency)
        self.incoming = int(incoming)
        self.parallel = int(parallel)
        self.order = move_order.check(order)
        self._seq = 0
        self.waiting = []
        self.running = []
        # host -> migrations leaving it, and arriving at it, now copying
        self.sending = {}
        self.receiving = {}
        self.completed = []
        self.cancelled = 0

    @property
    def in_flight(self):
        """VM -> its migration, waiting or copying."""
        return {m.vm: m for m in self.waiting + self.running}

    def add(self, vm, source, destination, size_mb, now,
            kind=move_order.OVERLOAD, load=0.0):
        self._seq += 1
        m = InFlightMigration(vm, source, destination, float(size_mb),
                              float(size_mb) / self.bandwidth, float(now),
                              kind=kind, load=float(load), seq=self._seq)
        if self.order == move_order.PLAN:
            self.waiting.append(m)
        else:
            # kept in order as they come, not sorted again at every add
            bisect.insort(self.waiting, m,
                          key=lambda w: move_order.key(w.entry(), w.seq))
        return m

    def cancel(self, vms):
        """Drop the migrations of ``vms`` (VMs that left)."""
        vms = set(vms)
        for m in [m for m in self.running if m.vm in vms]:
            self.running.remove(m)
            self._release(m)
            self.cancelled += 1
        before = len(self.waiting)
        self.waiting = [m for m in self.waiting if m.vm not in vms]
        self.cancelled += before - len(self.waiting)

    def _free(self, m):
        if self.sending.get(m.source, 0) >= self.concurrency:
            return False
        return (not self.incoming or
                self.receiving.get(m.destination, 0) < self.incoming)

    def _release(self, m):
        self.sending[m.source] -= 1
        self.receiving[m.destination] -= 1

    def _start_ready(self, now):
        still = []
        busy = set()
        if self.order != move_order.PLAN:
            busy = move_order.overload_hosts(
                [m.entry() for m in self.waiting + self.running])
        for m in self.waiting:
            if self.parallel and len(self.running) >= self.parallel:
                still.append(m)
            elif busy and move_order.held_back(m.entry(), busy):
                still.append(m)
            elif self._free(m):
                m.start, m.end = now, now + m.duration
                self.sending[m.source] = self.sending.get(m.source, 0) + 1
                self.receiving[m.destination] = (
                    self.receiving.get(m.destination, 0) + 1)
                self.running.append(m)
            else:
                still.append(m)
        self.waiting = still

    def advance(self, t0, t1, on_complete):
        """Run the migrations over ``[t0, t1)``; returns the
        :class:`Overlap` of every migration that copied in it.
        ``on_complete(migration)`` is called at each switch-over, in
        time order."""
        span = float(t1 - t0)
        now = float(t0)
        seen = {}
        while True:
            self._start_ready(now)
            for m in self.running:
                seen[id(m)] = m
            nxt = min((m.end for m in self.running), default=None)
            if nxt is None or nxt >= t1:
                break
            now = nxt
            for m in [m for m in self.running if m.end <= now]:
                self.running.remove(m)
                self._release(m)
                self.completed.append(m)
                on_complete(m)
        out = []
        running = {id(m) for m in self.running}
        for m in seen.values():
            lo, hi = max(t0, m.start), min(t1, m.end)
            if hi <= lo and m.end > t0:
                continue
            done = id(m) not in running
            out.append(Overlap(m, max(0.0, hi - lo) / span,
                               (min(t1, m.end) - t0) / span if done else 1.0,
                               done))
        return out
