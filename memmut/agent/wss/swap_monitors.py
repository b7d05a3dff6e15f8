"""Swap monitoring for Geiger (seed 004 §2.4.4): reuse distances or a
balloon-statistics fallback, behind one interface.

Geiger needs to see the VM's swap traffic where it happens: memmut's
memstore serves each VM's swap disk over NBD and keeps the ghost queue and
the reuse-distance histogram per export (its control socket's ``stats``
reply, read by :mod:`memmut.agent.swap.swapdisk`). :class:`MemstoreSwapMonitor`
turns it into Geiger's estimate (m_cur + m_ghost). A VM whose swap disk
memstore does not serve has no reuse distances:
:class:`BalloonStatsSwapMonitor` then detects swapping from the balloon
statistics' ``swap_in`` (and optionally ``major_fault``) deltas and
estimates WSS = m_cur + swap-in of the round
(:func:`memmut.agent.wss.techniques.swap_fallback_estimate`), capped at what
currently lives in swap. Every reading names its source, which goes into
the estimate's source string.
"""

import abc
import collections
import dataclasses
import time
import typing

from oslo_log import log as logging

from memmut import units
from memmut.agent.wss import reentry
from memmut.agent.wss import techniques
from memmut.memstore import reuse

LOG = logging.getLogger(__name__)

SOURCE_MEMSTORE = 'memstore'
SOURCE_BALLOON_STATS = 'balloon_stats'


@dataclasses.dataclass(frozen=True)
class SwapReading:
    """Swap activity of one VM over one round.

    ``grown_kb`` is how much what the VM keeps in swap (written out, not
    read back) grew since the previous reading, ``pressure`` whether it grew
    at the monitor's rate threshold or faster: the guest evicted pages to
    make room for memory it touched. Whether that means a shortage depends on
    the balloon (a shrink makes the guest evict too): the caller decides.
    ``out_kb`` is what the guest wrote to swap over the reading's interval
    (gross): a guest that evicts has no free memory at its current size.
    ``in_kb`` is what it read back over the interval and ``seconds`` how
    long the interval was (None: unknown): their ratio, the swap-in rate,
    says whether the guest stalled on swap (its access sample then reads
    low, see :func:`memmut.agent.wss.badis.stalled`).
    """
    swapping: bool
    ghost: typing.Optional[techniques.TechniqueEstimate]
    source: str
    detail: str = ''
    grown_kb: int = 0
    pressure: bool = False
    out_kb: int = 0
    in_kb: int = 0
    seconds: typing.Optional[float] = None
    # The interval's swap-ins by reuse distance: ``(least distance KiB,
    # KiB read)`` per histogram bucket, swap-ins without a distance left
    # out (pages written before memstore's monitor saw them: old). None:
    # the monitor has no distances (memmut.agent.wss.hindsight).
    in_distances: typing.Optional[tuple] = None
    # KiB read back over the interval that are left out of all the above
    # as re-entries under the swap-in bound (memmut.agent.wss.reentry):
    # not a shortage, but the guest waited for them
    reentry_kb: int = 0
    # the reading with them counted, when some were left out (the round
    # counts them after all when its sample fills the allocation)
    with_reentries: typing.Optional['SwapReading'] = None


def distances_kb(histogram, bucket_pages):
    """:attr:`SwapReading.in_distances` from memstore's interval
    histogram (bucket -> swap-ins, bucket ``b`` holding the distances in
    ``[b, b + 1)`` x ``bucket_pages`` pages)."""
    page_kb = 4
    return tuple((int(b) * bucket_pages * page_kb, int(n) * page_kb)
                 for b, n in sorted(histogram.items()))


class SwapMonitor(abc.ABC):
    name = None

    @abc.abstractmethod
    def read(self, vm, m_cur_kb, keep_quiet=False):
        """A :class:`SwapReading` for the round that just ended, or None
        when this monitor has nothing for the VM (try the next one).

        ``keep_quiet``: a look between two rounds; a reading without swap
        activity then does not start a new interval, so that activity too
        small to count over part of a round still counts over the whole
        round."""

    def forget(self, uuid):
        pass


def _net_swapped_kb(stats):
    out, into = stats.get('swap_out'), stats.get('swap_in')
    if out is None or into is None:
        return None
    return max(0, out - into)


def _growth(before, now_kb, now_t, rate_kb):
    """(growth of what lives in swap since ``before`` = (KiB, time), KiB,
    >= 0; whether it grew at ``rate_kb`` KiB/s or faster: pressure)."""
    if before is None or before[0] is None or now_kb is None:
        return 0, False
    grown = max(0, now_kb - before[0])
    elapsed = max(1e-3, now_t - before[1])
    return grown, rate_kb > 0 and grown > 0 and grown >= rate_kb * elapsed


class BalloonStatsSwapMonitor(SwapMonitor):
    """Swap activity from two ``memoryStats()`` samples (no distances)."""

    name = SOURCE_BALLOON_STATS

    def __init__(self, swap_in_threshold_kb=4096, major_fault_threshold=0,
                 min_grow_kb=4096, growth_rate_kb=0, probe_kb=0,
                 clock=time.monotonic):
        self.swap_in_threshold_kb = swap_in_threshold_kb
        self.major_fault_threshold = major_fault_threshold
        self.min_grow_kb = min_grow_kb
        self.growth_rate_kb = growth_rate_kb
        self.probe_kb = probe_kb
        self.clock = clock
        self._prev = {}          # uuid -> (stats, time read)
        self._probes = {}        # uuid -> (escalations, last request KiB)

    @classmethod
    def from_conf(cls, conf, clock=time.monotonic):
        b = conf.badis
        return cls(b.swap_in_threshold_kb, b.major_fault_threshold,
                   b.fallback_min_grow_kb, b.swap_growth_rate_kb,
                   b.fallback_probe_kb, clock=clock)

    def _probe(self, uuid, m_cur_kb, ghost):
        """Bound the estimate of a VM that swaps: without reuse distances
        the swap-in count includes every re-read of the same pages, so a
        VM cycling over a working set a little above its allocation would
        ask for its whole booking. The first swapping round asks for
        ``probe_kb`` more; each later one that found the previous request
        granted and still swaps asks for twice the step; a request not
        granted yet (the host is short) is held, not escalated. Never more
        than the swap-in estimate itself."""
        level, last = self._probes.get(uuid, (-1, None))
        slack = 4 * 1024            # balloon rounding, pages in flight
        if last is not None and m_cur_kb + slack < last:
            request = last
        else:
            level += 1
            request = m_cur_kb + max(self.min_grow_kb,
                                     self.probe_kb << min(level, 16))
        request = min(ghost.wss_kb, request)
        self._probes[uuid] = (level, request)
        return techniques.TechniqueEstimate(request, ghost.source)

    def read(self, vm, m_cur_kb, keep_quiet=False):
        stats = dict(vm.memory_stats or {})
        now = self.clock()
        prev, prev_t = self._prev.get(vm.uuid, (None, None))
        if prev is None or not keep_quiet:
            self._prev[vm.uuid] = (stats, now)
        if prev is None:
            return SwapReading(False, None, self.name,
                               'first sample: no delta yet')
        act = techniques.swap_activity(
            prev, stats, self.swap_in_threshold_kb,
            self.major_fault_threshold)
        ghost = techniques.swap_fallback_estimate(act, m_cur_kb,
                                                  self.min_grow_kb)
        detail = 'swap_in +%s KiB, major_fault +%s' % (act.swap_in_kb,
                                                       act.major_faults)
        net = _net_swapped_kb(stats)
        if ghost is not None and net is not None:
            # Under thrashing the same pages come back many times a round:
            # the VM never lacks more than what currently lives in swap
            # (written out and not read back).
            cap = m_cur_kb + max(self.min_grow_kb, net)
            if ghost.wss_kb > cap:
                ghost = techniques.TechniqueEstimate(cap, ghost.source)
                detail += ', capped by %d KiB net in swap' % net
        if ghost is not None and self.probe_kb:
            probed = self._probe(vm.uuid, m_cur_kb, ghost)
            if probed.wss_kb < ghost.wss_kb:
                detail += ', probing %d KiB' % (probed.wss_kb - m_cur_kb)
            ghost = probed
        elif not act.active and not keep_quiet:
            self._probes.pop(vm.uuid, None)
        grown, pressure = (0, False)
        if not act.counter_reset:
            grown, pressure = _growth((_net_swapped_kb(prev), prev_t), net,
                                      now, self.growth_rate_kb)
        if grown:
            detail += ', +%d KiB in swap' % grown
        if act.counter_reset:
            detail += ' (counters restarted: guest reboot?)'
        if keep_quiet and (act.active or pressure):
            self._prev[vm.uuid] = (stats, now)
        return SwapReading(act.active, ghost, self.name, detail,
                           grown_kb=grown, pressure=pressure,
                           out_kb=0 if act.counter_reset else max(
                               0, act.swap_out_kb or 0),
                           in_kb=0 if act.counter_reset else max(
                               0, act.swap_in_kb or 0),
                           seconds=max(1e-3, now - prev_t))

    def forget(self, uuid):
        self._prev.pop(uuid, None)
        self._probes.pop(uuid, None)


class MemstoreSwapMonitor(SwapMonitor):
    """Geiger from memstore's reuse distances of the VM's swap export.

    ``read(vm)`` returns one reading of the VM's export monitor that also
    starts a new interval (:meth:`memmut.agent.swap.swapdisk.SwapDiskManager.
    monitor`, a :class:`memmut.memstore.reuse.ReuseReading`: the interval's
    histogram, ``interval_swap_ins`` with a distance, ``interval_cold``
    without one, and ``extra_bytes``, m_ghost for the configured
    percentile as memstore counts distances), or None when the VM has no
    export or memstore cannot be read: the next monitor (balloon
    statistics) is then used.
    """

    name = SOURCE_MEMSTORE

    def __init__(self, read, swap_in_threshold_pages=1, growth_rate_kb=0,
                 clock=time.monotonic, reentries=None):
        self._read = read
        self.threshold = swap_in_threshold_pages
        self.growth_rate_kb = growth_rate_kb
        self.clock = clock
        self.reentries = reentries or reentry.Params()
        self._failed = set()
        # uuid -> (KiB in swap, time, pages written) at the last round
        self._queued = {}
        # uuid -> deque of (time, KiB written) over the re-entry horizon
        self._writes = {}
        self._budgets = {}       # uuid -> reentry.Budget
        self._left_out = {}      # uuid -> KiB of re-entries left out

    def read(self, vm, m_cur_kb, keep_quiet=False):
        # (A reading starts a new interval in memstore; one without
        # swap-ins has an empty histogram: nothing of Geiger's is lost.)
        try:
            mon = self._read(vm)
            if mon is None:
                raise LookupError('no reading')
            swap_ins = int(mon.interval_swap_ins)
            cold = int(mon.interval_cold)
            ghost_kb = int(mon.extra_bytes) // 1024
            queued_kb = int(mon.queue_pages) * 4
            out_pages = int(mon.swap_out_pages)
            distances = distances_kb(mon.histogram, int(mon.bucket_pages))
        except Exception as e:       # memstore away, or no export
            if vm.uuid not in self._failed:
                LOG.warning('VM %s (%s): no reuse distances from memstore '
                            '(%s); its swap monitoring falls back to the '
                            'balloon statistics', vm.name, vm.uuid, e)
                self._failed.add(vm.uuid)
            return None
        if vm.uuid in self._failed:
            LOG.info('VM %s (%s): memstore reuse distances available '
                     'again', vm.name, vm.uuid)
            self._failed.discard(vm.uuid)
        now = self.clock()
        left_out = self._reentries(vm, now, mon)
        before = self._queued.get(vm.uuid)
        grown, pressure = _growth(before and before[:2], queued_kb, now,
                                  self.growth_rate_kb)
        out_kb = 0
        if before is not None and out_pages >= before[2]:
            out_kb = (out_pages - before[2]) * 4
        seconds = max(1e-3, now - before[1]) if before is not None else None
        full = self._reading(m_cur_kb, swap_ins, cold, ghost_kb, distances,
                             grown, pressure, out_kb, seconds)
        reading = full
        if left_out is not None and left_out[1]:
            # re-entries under the bound: not a shortage (reentry.py)
            recent, left_kb = left_out      # the recent histogram
            self._left_out[vm.uuid] = self._left_out.get(vm.uuid, 0) + left_kb
            if left_kb >= 1024:
                LOG.info('VM %s (%s): %s read back from swap left out as '
                         're-entries (pages evicted more than %gs ago, '
                         'their pace under %s/s): no shortage',
                         vm.name, vm.uuid, units.fmt_kb(left_kb),
                         self.reentries.horizon_s, units.fmt_kb(
                             int(self.reentries.limit_kb_s)))
            bucket_pages = int(mon.bucket_pages)
            ghost_kb = reuse.extra_pages(
                recent, float(mon.percentile), bucket_pages) * 4
            reading = self._reading(
                m_cur_kb, sum(int(n) for n in recent.values()), 0, ghost_kb,
                distances_kb(recent, bucket_pages), grown, pressure, out_kb,
                seconds)
            reading = dataclasses.replace(
                reading, reentry_kb=left_kb, with_reentries=full,
                detail='%s, %d KiB of re-entries left out (under %s/s)'
                       % (reading.detail, left_kb, units.fmt_kb(
                           int(self.reentries.limit_kb_s))))
        swapping = reading.swapping
        if before is None or not keep_quiet or swapping or pressure:
            # (a quiet look between rounds leaves the growth to the round)
            self._queued[vm.uuid] = (queued_kb, now, out_pages)
        return reading

    def _reading(self, m_cur_kb, swap_ins, cold, ghost_kb, distances, grown,
                 pressure, out_kb, seconds):
        ghost = None
        if ghost_kb > 0:
            ghost = techniques.TechniqueEstimate(int(m_cur_kb + ghost_kb),
                                                 techniques.SOURCE_GEIGER)
        return SwapReading(swap_ins + cold >= self.threshold, ghost,
                           self.name,
                           '%d swap-ins (%d without a distance), m_ghost '
                           '%d KiB, +%d KiB in swap, %d KiB written'
                           % (swap_ins + cold, cold, ghost_kb, grown,
                              out_kb),
                           grown_kb=grown, pressure=pressure, out_kb=out_kb,
                           in_kb=(swap_ins + cold) * 4, seconds=seconds,
                           in_distances=distances)

    def _reentries(self, vm, now, mon):
        """``(recent histogram, KiB left out)`` when this reading's
        re-entries are under the bound and left out, else None (off, or
        over the bound: every swap-in counts)."""
        p = self.reentries
        if not p.horizon_s:
            return None
        out_kb = int(mon.swap_out_pages) * 4
        writes = self._writes.setdefault(vm.uuid, collections.deque())
        if writes and out_kb < writes[-1][1]:
            writes.clear()                    # memstore restarted
        writes.append((now, out_kb))
        while len(writes) > 2 and writes[1][0] <= now - p.horizon_s:
            writes.popleft()
        recent, old = reentry.split(
            mon.histogram, int(mon.bucket_pages), int(mon.interval_cold) * 4,
            reentry.line_kb(writes, now, p.horizon_s))
        budget, event = reentry.update(
            self._budgets.get(vm.uuid, reentry.Budget()), old,
            float(mon.interval_seconds), p, now=now)
        self._budgets[vm.uuid] = budget
        if event:
            LOG.info('VM %s (%s): %s', vm.name, vm.uuid, event)
        if budget.counted:
            return None
        recent_kb = sum(int(n) for n in recent.values()) * 4
        if old and reentry.part_of_a_move(recent_kb, old):
            return {}, old + recent_kb
        return recent, old

    def left_out_kb(self, uuid):
        """KiB of the VM's swap-ins left out as re-entries so far."""
        return self._left_out.get(uuid, 0)

    def forget(self, uuid):
        self._failed.discard(uuid)
        self._queued.pop(uuid, None)
        self._writes.pop(uuid, None)
        self._budgets.pop(uuid, None)
        self._left_out.pop(uuid, None)


class SwapMonitors:
    """The first monitor with a reading wins; balloon statistics last."""

    def __init__(self, monitors):
        self.monitors = list(monitors)

    def read(self, vm, m_cur_kb, keep_quiet=False):
        # Every monitor sees every round (so the fallback's deltas stay
        # one round long); the first with a reading is used.
        if keep_quiet:
            readings = [m.read(vm, m_cur_kb, keep_quiet=True)
                        for m in self.monitors]
        else:
            readings = [m.read(vm, m_cur_kb) for m in self.monitors]
        for r in readings:
            if r is not None:
                return r
        return None

    def forget(self, uuid):
        for m in self.monitors:
            m.forget(uuid)
