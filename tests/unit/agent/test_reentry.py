"""Re-entries (memmut.agent.wss.reentry): swap-ins of pages evicted long
ago are no shortage while they stay under the swap-in bound."""

import logging

import pytest

from memmut.agent.wss import pipeline
from memmut.agent.wss import reentry
from memmut.agent.wss import swap_monitors
from memmut.agent.wss import techniques
from memmut.memstore import reuse
from memmut.virt import driver
from tests import common
from tests.unit.agent.test_estimation import FakeDriver

MIB = 1024
BUCKET = 256                      # pages: 1 MiB buckets


class VM:
    uuid = 'u1'
    name = 'vm1'
    memory_stats = {}


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def reading(histogram, out_pages, seconds=1.0, cold=0):
    """memstore's monitor reading: ``histogram`` {bucket: swap-ins} of 1
    MiB buckets, ``out_pages`` written since memstore started."""
    extra = reuse.extra_pages(histogram, 95.0, BUCKET) * 4096
    return reuse.ReuseReading(
        swap_out_pages=out_pages, swap_in_pages=0, interval_seconds=seconds,
        interval_swap_ins=sum(histogram.values()), interval_cold=cold,
        histogram=dict(histogram), bucket_pages=BUCKET, percentile=95.0,
        extra_bytes=extra, queue_pages=0)


def monitor(readings, clock, horizon_s=10.0, limit_kb_s=1024.0,
            window_s=60.0):
    return swap_monitors.MemstoreSwapMonitor(
        lambda vm: readings.pop(0), clock=clock,
        reentries=reentry.Params(horizon_s=horizon_s, limit_kb_s=limit_kb_s,
                                 window_s=window_s))


def test_the_line_is_what_was_written_within_the_horizon():
    writes = [(0.0, 0), (5.0, 100), (9.0, 300), (12.0, 350), (20.0, 400)]
    # from the last write at or before 20 - 10 = 10 s: t = 9 s
    assert reentry.line_kb(writes, 20.0, 10.0) == 100
    # a horizon longer than the history: from the first
    assert reentry.line_kb(writes, 20.0, 60.0) == 400
    assert reentry.line_kb([], 20.0, 10.0) == 0


def test_split_counts_a_straddling_bucket_as_recent_and_cold_as_old():
    # 1 MiB buckets: 40 KiB at distances 0-1 MiB, 80 KiB at 1-2 MiB, 8 KiB
    # at 2-3 MiB
    histogram = {0: 10, 1: 20, 2: 2}

    def kb(split):
        recent, old = split
        return sum(recent.values()) * 4, old
    assert kb(reentry.split(histogram, 256, 0, 1500)) == (120, 8)
    assert kb(reentry.split(histogram, 256, 12, 1024)) == (40, 100)
    assert kb(reentry.split({}, 256, 5, 0)) == (0, 5)


def test_a_burst_under_the_bound_times_the_window_is_not_counted():
    p = reentry.Params(horizon_s=10, limit_kb_s=1024, window_s=60)
    b, event = reentry.update(reentry.Budget(), 40 * MIB, 2.0, p)
    # 40 MiB in 2 s: the mean rises by about 40 MiB / 60 s, under 1 MiB/s
    assert not b.counted and event is None
    assert 0.6 * MIB < b.rate_kb_s < 0.7 * MIB
    # the same again at once puts it over: a second window's worth
    b, event = reentry.update(b, 40 * MIB, 2.0, p)
    assert b.counted and 'count as a shortage again' in event
    # unknown interval: nothing changes
    assert reentry.update(b, 10 * MIB, None, p) == (b, None)


def test_a_steady_rate_counts_only_above_the_bound():
    p = reentry.Params(horizon_s=10, limit_kb_s=1024, window_s=60)
    b, t = reentry.Budget(), 0.0
    for _ in range(600):                    # 0.9 MiB/s for 10 minutes
        t += 1.0
        b, _ = reentry.update(b, 0.9 * MIB, 1.0, p, now=t)
    assert not b.counted
    b, t = reentry.Budget(), 0.0
    rounds = 0
    while not b.counted:                    # 2 MiB/s
        t += 1.0
        b, event = reentry.update(b, 2 * MIB, 1.0, p, now=t)
        rounds += 1
    # one episode: more than 1 MiB/s x (its length + 60 s) after 60 s
    assert rounds == 61 and 'in one episode' in event
    while b.counted:                        # stops: under half the bound
        t += 1.0
        b, event = reentry.update(b, 0, 1.0, p, now=t)
    assert 'no longer count' in event


def test_counted_until_under_half_the_bound():
    p = reentry.Params(horizon_s=10, limit_kb_s=1024, window_s=10)
    b = reentry.Budget(rate_kb_s=1100, counted=True)
    b, event = reentry.update(b, 0, 2.0, p)          # quiet for 2 s
    assert b.counted and event is None and b.rate_kb_s < 1024
    while b.rate_kb_s >= 512:
        assert b.counted
        b, event = reentry.update(b, 0, 1.0, p)
    assert not b.counted and 'under 512 KiB/s' in event


def test_params_are_checked():
    with pytest.raises(ValueError):
        reentry.Params(horizon_s=-1)
    with pytest.raises(ValueError):
        reentry.Params(window_s=0)


def _window_back(recent):
    """A monitor whose fourth reading, at 31 s, reads back a 20 MiB
    window of pages at distances 40-59 MiB with ``recent`` {bucket:
    pages} of recent ones (0-20 s: 60 MiB written, 20-30 s: 2 MiB)."""
    clock = Clock()
    readings = [reading({}, 0),
                reading({}, 60 * 256),
                reading({}, 62 * 256),
                reading({**recent, **{40 + i: 256 for i in range(20)}},
                        62 * 256)]
    m = monitor(readings, clock)
    for t in (0.0, 20.0, 30.0):
        clock.t = t
        assert not m.read(VM(), 132 * MIB).swapping
    clock.t = 31.0
    return m, m.read(VM(), 132 * MIB)


def test_the_monitor_leaves_out_old_swap_ins_under_the_bound(caplog):
    caplog.set_level(logging.INFO)
    # 8 MiB of recent swap-ins (over a quarter of the 20 MiB of
    # re-entries): a shortage of their own
    m, r = _window_back({0: 1024, 1: 1024})
    # the line: 2 MiB written within the last 10 s; buckets 0-1 recent
    assert r.swapping and r.in_kb == 8 * MIB
    assert r.in_distances == ((0, 4 * MIB), (1 * MIB, 4 * MIB))
    assert r.ghost.wss_kb == 132 * MIB + 2 * MIB
    assert '20480 KiB of re-entries left out' in r.detail
    assert r.reentry_kb == 20 * MIB and m.left_out_kb('u1') == 20 * MIB
    assert '20 MiB read back from swap left out as re-entries' in caplog.text
    # and the reading with them counted, for a round whose sample fills
    # the allocation
    full = r.with_reentries
    assert full.in_kb == 28 * MIB and full.reentry_kb == 0
    assert full.ghost.wss_kb == 132 * MIB + 59 * MIB


def test_a_few_recent_swap_ins_go_with_the_move():
    # 0.5 MiB of recent swap-ins beside 20 MiB of re-entries (at most a
    # quarter): pages a shrink took, read back as the hot set moves
    m, r = _window_back({0: 128})
    assert not r.swapping and r.ghost is None and r.in_kb == 0
    assert r.reentry_kb == 20 * MIB + 512
    assert reentry.part_of_a_move(5 * MIB, 20 * MIB)
    assert not reentry.part_of_a_move(6 * MIB, 20 * MIB)
    assert not reentry.part_of_a_move(0, 0)


def test_without_the_horizon_every_swap_in_counts():
    clock = Clock()
    readings = [reading({}, 0),
                reading({40 + i: 256 for i in range(20)}, 62 * 256, cold=10)]
    m = monitor(readings, clock, horizon_s=0.0)
    m.read(VM(), 132 * MIB)
    clock.t = 31.0
    r = m.read(VM(), 132 * MIB)
    assert r.swapping and r.in_kb == 20 * MIB + 40
    # 95 % of the swap-ins within buckets 40-58 of 1 MiB
    assert r.ghost.wss_kb == 132 * MIB + 59 * MIB


def test_old_swap_ins_above_the_bound_count_again(caplog):
    caplog.set_level(logging.INFO)
    clock = Clock()
    # a slow cycle: every second 3 MiB of pages evicted 30-40 s before
    readings = [reading({}, 0)] + [
        reading({30 + i: 256 for i in range(3)}, (k + 1) * 3 * 256)
        for k in range(60)]
    m = monitor(readings, clock, horizon_s=5.0, window_s=20.0)
    m.read(VM(), 132 * MIB)
    seen = []
    for k in range(60):
        clock.t = 1.0 + k
        seen.append(m.read(VM(), 132 * MIB).swapping)
    # left out at first (the mean under 1 MiB/s), then counted for good
    assert not seen[0] and all(seen[-30:])
    assert caplog.text.count('count as a shortage again') == 1
    # counted, a reading's Geiger estimate is memstore's own
    readings.append(reading({30: 256}, 200 * 256))
    clock.t = 62.0
    assert m.read(VM(), 132 * MIB).ghost.wss_kb == 132 * MIB + 31 * MIB


# -- the round: re-entries the guest waited for -------------------------------

class _Reentries(swap_monitors.SwapMonitor):
    """No shortage; ``reentry_kb`` per call (10 s intervals), and the
    reading with them counted (Geiger: 40 MiB more)."""
    name = 'reentries'

    def __init__(self, reentries):
        self.reentries = list(reentries)

    def read(self, vm, m_cur_kb, keep_quiet=False):
        kb = self.reentries.pop(0) if self.reentries else 0
        full = swap_monitors.SwapReading(
            True, techniques.TechniqueEstimate(
                m_cur_kb + 40 * MIB, techniques.SOURCE_GEIGER),
            self.name, seconds=10.0, in_kb=kb)
        return swap_monitors.SwapReading(
            False, None, self.name, seconds=10.0, reentry_kb=kb,
            with_reentries=full if kb else None)


def _rounds(reentries, used_mib=200):
    """Demands of rounds at 10 s of a guest using ``used_mib`` of its 400
    MiB, the monitor reporting ``reentries`` (KiB per round, after the
    priming read); the last round's estimate too."""
    conf = common.private_conf(badis={
        'round_interval': 10.0, 'stall_swapin_rate_kb': 4096,
        'shrink_slow_start_kb': 0, 'calibrate_pinned': False})
    p = pipeline.EstimationPipeline(
        conf, FakeDriver(), swap=swap_monitors.SwapMonitors(
            [_Reentries([0] + list(reentries))]))
    vm = driver.VMInfo(uuid='u-1', name='vm-1', state='running',
                       booked_kb=400 * MIB, balloon_kb=400 * MIB,
                       memory_stats={'available': 400 * MIB,
                                     'unused': (400 - used_mib) * MIB,
                                     'disk_caches': 0},
                       cpu_time_ns=0, domain_type='kvm')
    demands, e = [], None
    p.estimate([vm], 0.0)                       # starts the VM
    for k in range(len(reentries)):
        e = p.estimate([vm], 10.0 * (k + 1))['u-1']
        demands.append(e.demand_kb)
    return demands, e


def test_a_round_whose_guest_waited_for_re_entries_does_not_shrink():
    quiet, _ = _rounds([0, 0])
    assert quiet[-1] < 300 * MIB                 # shrinks towards 200 MiB
    # 80 MiB in 10 s (8 MiB/s, over the stall rate): held, sample unused
    waited, e = _rounds([0, 80 * MIB])
    # (the balloon held where it is: 400 MiB less the headroom)
    assert waited[-1] >= 360 * MIB and e.wss_kb == 200 * MIB
    assert any('shrink held' in x and 're-entries' in x for x in e.events)
    # 20 MiB (2 MiB/s, under it): the round is as without them
    slow, _ = _rounds([0, 20 * MIB])
    assert slow == quiet


def test_a_second_episode_counts_at_the_pace_of_the_first():
    p = reentry.Params(horizon_s=10, limit_kb_s=1024, window_s=60)

    def moves(burst_kb, period_s, n):
        """n moves of ``burst_kb`` every ``period_s`` (each read back
        over two 1 s readings, quiet readings between): whether each
        move's second reading counts."""
        b, t, out = reentry.Budget(), 0.0, []
        for _ in range(n):
            for half in (1, 2):
                t += 1.0
                b, _ = reentry.update(b, burst_kb // 2, 1.0, p, now=t)
            out.append(b.counted)
            for _ in range(int(period_s) - 2):
                t += 1.0
                b, _ = reentry.update(b, 0, 1.0, p, now=t)
        return out

    # 40 MiB every 48 s (0.83 MiB/s, the slow hot set): never counted
    assert moves(40 * MIB, 48, 4) == [False] * 4
    # 20 MiB every 10 s (2 MiB/s): counted from the second move on
    assert moves(20 * MIB, 10, 4) == [False, True, True, True]
    # 40 MiB every 15 s: from the second
    assert moves(40 * MIB, 15, 3) == [False, True, True]


def test_re_entries_count_when_the_sample_fills_the_allocation():
    # a working set rising into data left long ago: the guest touches
    # all it has while it reads them back, and they are a shortage
    _, e = _rounds([0, 80 * MIB], used_mib=396)
    # (Geiger's 440 MiB, at most the booking)
    assert e.mode == 'VG' and e.wss_kb == 400 * MIB
    assert e.detail == 'geiger'
    assert not any('re-entries' in x for x in e.events)
    # the same re-entries with the guest touching half: left out
    _, e = _rounds([0, 80 * MIB], used_mib=200)
    assert e.mode == 'V' and e.wss_kb == 200 * MIB
    _, e = _rounds([0, 0], used_mib=396)      # no re-entries: no Geiger
    assert e.detail != 'geiger'
