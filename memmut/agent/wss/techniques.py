"""Working-set size (WSS) estimators: pure functions over collected data.

Every function here is pure: it takes what a collector measured (sampled
pages, a reuse-distance histogram, two balloon-statistics samples, a
``Committed_AS`` reading) and returns an :class:`TechniqueEstimate` naming its
``source``, or ``None`` when the data says nothing. Collecting the data
(clearing accessed bits, watching the swap device, reading
``memoryStats()``) is the collectors' job; combining the estimates is
:mod:`memmut.agent.wss.badis`.

All sizes are KiB (libvirt's unit); counts are plain integers.

The techniques are those of seed 004 §2.4:

* VMware sampling (§2.4.3): of ``n`` sampled pages, ``f`` were accessed
  during the interval; WSS = f / n × m_cur. It cannot see a WSS above
  m_cur.
* Geiger (§2.4.4): reuse distances of pages reloaded from swap, a histogram
  of them, and the X-percentile of that histogram as the ghost-buffer size
  m_ghost; WSS = m_cur + m_ghost when m_ghost > 0. It cannot see a WSS below
  m_cur.
* Zballoond (§2.4.2) and self-ballooning (§2.4.1, seed 002) need
  ``Committed_AS`` from inside the guest (intrusive): they are baselines for
  comparisons, in :mod:`memmut.evaluation.baselines`.
"""

import dataclasses
import typing

from memmut.agent.wss import ws_curve

SOURCE_VMWARE = 'vmware'
SOURCE_VMWARE_REFERENCED = 'vmware-referenced'
SOURCE_GEIGER = 'geiger'
SOURCE_SWAP_STATS = 'swap-stats'
SOURCE_BALLOON_USED = 'balloon-used'
SOURCE_BALLOON_USED_NOCACHE = 'balloon-used-nocache'


@dataclasses.dataclass(frozen=True)
class TechniqueEstimate:
    """One WSS estimate and the technique that produced it.

    ``low_kb``, for an access sample, is the lower end of its one-sided
    confidence interval (:func:`sample_low`): what the sample shows was
    accessed at least. It equals ``wss_kb`` for a back-end that reads
    every page, and is None for the estimates that are not a sample.
    """
    wss_kb: int
    source: str
    low_kb: typing.Optional[int] = None

    def __post_init__(self):
        if self.wss_kb < 0:
            raise ValueError('negative WSS estimate %r from %s'
                             % (self.wss_kb, self.source))
        if self.low_kb is not None and not 0 <= self.low_kb <= self.wss_kb:
            raise ValueError('the lower end %r of the estimate from %s '
                             'must be between 0 and %d'
                             % (self.low_kb, self.source, self.wss_kb))

    @property
    def exact(self):
        """Read every page: no sampling error."""
        return self.low_kb is not None and self.low_kb == self.wss_kb


def nonneg(name, value):
    if value is None or value < 0:
        raise ValueError('%s must be a non-negative number, got %r'
                         % (name, value))


# ---------------------------------------------------------------------------
# VMware sampling (seed 004 §2.4.3)


def vmware_sampling(accessed, sampled, m_cur_kb):
    """WSS from page sampling: ``accessed`` of ``sampled`` pages were used.

    WSS = accessed / sampled × m_cur (seed 004 §2.4.3), rounded down to a
    KiB. ``sampled`` is the number of pages whose accessed bit was cleared at
    the start of the interval (n = 100 in the published prototype).
    """
    if not isinstance(sampled, int) or sampled <= 0:
        raise ValueError('sampled must be a positive page count, got %r'
                         % (sampled,))
    if not 0 <= accessed <= sampled:
        raise ValueError('accessed (%r) must be between 0 and sampled (%d)'
                         % (accessed, sampled))
    nonneg('m_cur_kb', m_cur_kb)
    return TechniqueEstimate(accessed * m_cur_kb // sampled, SOURCE_VMWARE,
                             sample_low(accessed, sampled, m_cur_kb))


# One-sided 99.5 % (z = 2.576; with the discrete counts of 100 pages the
# truth is below it in up to 1 % of samples at small fractions): a bound
# taken over three independent samples in a row (badis._bound_by_used) is
# too low in all three with a chance of at most about 1e-6.
SAMPLE_Z = 2.576


def sample_low(accessed, sampled, span_kb, z=SAMPLE_Z):
    """The lower end, in KiB of ``span_kb``, of the one-sided confidence
    interval of the accessed fraction ``accessed`` / ``sampled``: the
    Wilson score bound (:func:`ws_curve.wilson_upper` of the pages not
    accessed), which stays inside [0, 1] and is right for the small
    counts of a 100-page sample (where p ± z·sqrt(p(1-p)/n) is not: 0
    accessed gives it no width at all)."""
    if accessed <= 0:
        return 0
    low = 1.0 - ws_curve.wilson_upper(sampled - accessed, sampled, z)
    return min(int(max(0.0, low) * span_kb), accessed * span_kb // sampled)


def sample_high(accessed, sampled, span_kb, z=SAMPLE_Z):
    """The upper end, in KiB of ``span_kb``, of the one-sided confidence
    interval of the accessed fraction ``accessed`` / ``sampled`` (the
    Wilson score bound, as :func:`sample_low`): what the sample shows was
    accessed at most."""
    if accessed >= sampled:
        return span_kb
    high = ws_curve.wilson_upper(accessed, sampled, z)
    return max(int(min(1.0, high) * span_kb), accessed * span_kb // sampled)


def vmware_referenced(referenced_kb, m_cur_kb, offset_kb=0):
    """WSS from the referenced size of the guest RAM mapping.

    The host-side variant of the accessed-bit technique: clear the accessed
    bits of the QEMU process's guest-RAM mapping (``/proc/PID/clear_refs``,
    idle page tracking, DAMON...), wait one interval, and read how much of
    the mapping was referenced. Every page is sampled, so f / n × m_cur is
    simply the referenced size; ballooned-out pages are never touched by
    the guest, so they do not count.

    ``offset_kb`` is a constant the back-end over-reports (transparent huge
    pages round touched 4 KiB pages up to 2 MiB) and is subtracted. Like
    every sampling technique the result is capped at ``m_cur_kb``: it
    cannot see a WSS above the current allocation.
    """
    nonneg('referenced_kb', referenced_kb)
    nonneg('m_cur_kb', m_cur_kb)
    nonneg('offset_kb', offset_kb)
    wss = int(min(max(0, referenced_kb - offset_kb), m_cur_kb))
    return TechniqueEstimate(wss, SOURCE_VMWARE_REFERENCED, wss)


# ---------------------------------------------------------------------------
# Geiger (seed 004 §2.4.4)


def reuse_histogram(distances_kb, bucket_kb=4096):
    """Bucket reuse distances (KiB) into a histogram.

    Bucket ``i`` counts the distances d with i × bucket ≤ d < (i + 1) ×
    bucket; the published prototype used buckets of 1024 pages (4 MiB).
    """
    if bucket_kb <= 0:
        raise ValueError('bucket_kb must be positive')
    hist = []
    for d in distances_kb:
        nonneg('distance', d)
        i = int(d // bucket_kb)
        if i >= len(hist):
            hist.extend([0] * (i + 1 - len(hist)))
        hist[i] += 1
    return hist


def geiger_ghost_kb(histogram, percentile=95.0, bucket_kb=4096):
    """m_ghost: walk the histogram until ``percentile`` % of its total.

    Seed 004 §2.4.4: "we sum up its values until we got X % of its total
    size ... the index corresponding to the position where the iterator
    stops represents the number of extra memory pages needed". The index of
    the bucket where the running sum first reaches X % of the total is
    converted to KiB as index × bucket_kb (the bucket's lower edge, as the
    prototype's ``j * 4`` MB). An empty histogram (no swap-in) gives 0.
    """
    if not 0 < percentile <= 100:
        raise ValueError('percentile must be in (0, 100], got %r'
                         % (percentile,))
    if bucket_kb <= 0:
        raise ValueError('bucket_kb must be positive')
    total = 0
    for count in histogram:
        nonneg('histogram count', count)
        total += count
    if total == 0:
        return 0
    running = 0
    for index, count in enumerate(histogram):
        running += count
        # Integer comparison: running / total >= percentile / 100.
        if running * 100 >= percentile * total:
            return index * bucket_kb
    return (len(histogram) - 1) * bucket_kb     # not reached


def geiger_estimate(histogram, m_cur_kb, percentile=95.0, bucket_kb=4096):
    """WSS = m_cur + m_ghost when m_ghost > 0, else ``None``.

    ``None`` means Geiger cannot tell: either no swap-in was seen in the
    interval, or all of them were within the first bucket.
    """
    nonneg('m_cur_kb', m_cur_kb)
    ghost = geiger_ghost_kb(histogram, percentile, bucket_kb)
    if ghost <= 0:
        return None
    return TechniqueEstimate(int(m_cur_kb + ghost), SOURCE_GEIGER)


# ---------------------------------------------------------------------------
# Balloon statistics (libvirt memoryStats)


@dataclasses.dataclass(frozen=True)
class SwapActivity:
    """Swap traffic between two balloon-statistics samples."""
    swap_in_kb: typing.Optional[int]
    swap_out_kb: typing.Optional[int]
    major_faults: typing.Optional[int]
    active: bool
    counter_reset: bool = False


def _delta(prev, cur, key):
    """Increase of a cumulative counter; (delta or None, reset flag)."""
    if key not in cur or cur[key] is None:
        return None, False
    now = cur[key]
    before = prev.get(key) if prev else None
    if before is None:
        return None, False
    if now < before:        # guest rebooted: the counter restarted at 0
        return now, True
    return now - before, False


def swap_activity(prev_stats, cur_stats, swap_in_threshold_kb=4096,
                  major_fault_threshold=0):
    """Detect swapping from two ``memoryStats()`` samples of one VM.

    The fallback of Geiger's swap monitor for VMs whose swap traffic is not
    seen by memstore. ``swap_in`` is cumulative KiB read back from swap,
    ``major_fault`` a cumulative count. The VM is swapping when ``swap_in``
    grew by at least ``swap_in_threshold_kb``. Major faults also count file
    page-cache misses, so they are used only when ``major_fault_threshold``
    is above 0, or alone when the guest does not report ``swap_in``. A
    counter that went down (guest reboot) counts from zero.
    """
    swap_in, reset_in = _delta(prev_stats, cur_stats, 'swap_in')
    swap_out, reset_out = _delta(prev_stats, cur_stats, 'swap_out')
    faults, reset_f = _delta(prev_stats, cur_stats, 'major_fault')
    active = False
    if swap_in is not None and swap_in >= max(1, swap_in_threshold_kb):
        active = True
    if faults is not None and major_fault_threshold > 0 and (
            faults >= major_fault_threshold):
        active = True
    return SwapActivity(swap_in_kb=swap_in, swap_out_kb=swap_out,
                        major_faults=faults, active=active,
                        counter_reset=reset_in or reset_out or reset_f)


def swap_fallback_estimate(activity, m_cur_kb, min_grow_kb=4096):
    """A Geiger stand-in when only the balloon statistics are available.

    Without reuse distances, the amount read back from swap during the
    interval is the best available hint of the missing memory: WSS = m_cur
    + max(swap_in delta, min_grow_kb). It over-estimates under thrashing
    (the same pages are read many times); the caller caps it at the booked
    size. ``None`` when the VM is not swapping.
    """
    nonneg('m_cur_kb', m_cur_kb)
    if activity is None or not activity.active:
        return None
    grow = max(activity.swap_in_kb or 0, min_grow_kb)
    return TechniqueEstimate(int(m_cur_kb + grow), SOURCE_SWAP_STATS)


def balloon_used(stats, include_caches=True):
    """Baseline from the guest's own figures: used = available − unused.

    ``available`` is the guest's MemTotal, ``unused`` its MemFree. With
    ``include_caches=False`` the page cache (``disk_caches``) is also
    subtracted. ``None`` when the guest does not report the keys.
    """
    if not stats:
        return None
    available = stats.get('available')
    unused = stats.get('unused')
    if available is None or unused is None:
        return None
    used = available - unused
    source = SOURCE_BALLOON_USED
    if not include_caches:
        caches = stats.get('disk_caches')
        if caches is None:
            return None
        used -= caches
        source = SOURCE_BALLOON_USED_NOCACHE
    return TechniqueEstimate(int(max(0, used)), source)
