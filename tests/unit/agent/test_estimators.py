"""Each estimator against hand-worked examples."""

import pytest

from memmut.agent.wss import techniques as est
from memmut.evaluation import baselines
from tests import reference_models

MiB = 1024


# -- VMware sampling (seed 004 §2.4.3) ---------------------------------------

def test_vmware_sampling_seed_example():
    # §2.6.1: 100 sampled pages, 60 accessed -> 60 % of the memory.
    e = est.vmware_sampling(60, 100, 2048 * MiB)
    assert (e.wss_kb, e.source) == (1228 * MiB + 819, est.SOURCE_VMWARE)
    assert e.wss_kb == 60 * 2048 * MiB // 100
    # its 99.5 % lower end (Wilson, z = 2.576): 47.1 % of the memory
    assert e.low_kb == pytest.approx(0.4714 * 2048 * MiB, rel=1e-3)
    assert not e.exact


@pytest.mark.parametrize('accessed, n, low', [
    (0, 100, 0.0), (1, 100, 0.001174), (50, 100, 0.3753),
    (100, 100, 0.9378), (500, 1000, 0.4594), (5000, 10000, 0.4871)])
def test_sample_lower_end(accessed, n, low):
    # hand-worked Wilson bounds; the interval narrows as sqrt(n)
    assert est.sample_low(accessed, n, 10 ** 6) == pytest.approx(
        low * 10 ** 6, rel=2e-3, abs=2)


def test_sample_lower_end_covers_the_truth():
    # drawn samples: the truth is below the lower end in about 0.5 % of
    # them (up to 1 % at small fractions, where the counts are discrete;
    # binomial draws, fixed seed)
    import random
    rng = random.Random(7)
    for p in (0.05, 0.3, 0.7):
        under = sum(
            est.sample_low(sum(rng.random() < p for _ in range(100)), 100,
                           10 ** 6) > p * 10 ** 6
            for _ in range(4000))
        assert under / 4000 < 0.012, p


def test_sample_upper_end_mirrors_the_lower_end():
    # the upper end of k accessed is 1 - the lower end of n - k
    for k, n in ((0, 100), (30, 100), (292, 1000), (99, 100)):
        assert est.sample_high(k, n, 10 ** 6) == pytest.approx(
            10 ** 6 - est.sample_low(n - k, n, 10 ** 6), abs=2)
        assert est.sample_high(k, n, 10 ** 6) >= k * 10 ** 6 // n
    assert est.sample_high(100, 100, 10 ** 6) == 10 ** 6


def test_sample_upper_end_covers_the_truth():
    import random
    rng = random.Random(11)
    for p in (0.05, 0.3, 0.7):
        over = sum(
            est.sample_high(sum(rng.random() < p for _ in range(100)), 100,
                            10 ** 6) < p * 10 ** 6
            for _ in range(4000))
        assert over / 4000 < 0.012, p


def test_vmware_sampling_bounds():
    assert est.vmware_sampling(0, 100, 1024 * MiB).wss_kb == 0
    # It cannot see above m_cur: all pages accessed -> m_cur.
    assert est.vmware_sampling(100, 100, 1024 * MiB).wss_kb == 1024 * MiB
    with pytest.raises(ValueError):
        est.vmware_sampling(101, 100, 1024)
    with pytest.raises(ValueError):
        est.vmware_sampling(1, 0, 1024)
    with pytest.raises(ValueError):
        est.vmware_sampling(-1, 100, 1024)


def test_vmware_referenced():
    e = est.vmware_referenced(300 * MiB, 512 * MiB)
    assert e == est.TechniqueEstimate(300 * MiB, est.SOURCE_VMWARE_REFERENCED,
                                      300 * MiB)
    assert e.exact          # every page read: the lower end is the count
    # THP offset subtracted, never below 0.
    assert est.vmware_referenced(300 * MiB, 512 * MiB,
                                 offset_kb=56 * MiB).wss_kb == 244 * MiB
    assert est.vmware_referenced(10 * MiB, 512 * MiB,
                                 offset_kb=56 * MiB).wss_kb == 0
    # Capped at the current allocation.
    assert est.vmware_referenced(600 * MiB, 512 * MiB).wss_kb == 512 * MiB


# -- Geiger (seed 004 §2.4.4) -------------------------------------------------

def test_ghost_queue_distances():
    q = reference_models.GhostQueue()
    for page in 'abcde':
        q.evict(page)
    # 'e' was evicted last: one more page would have kept it.
    assert q.reload('e') == 1
    # 'b': c and d were evicted after it and are still out: 3 pages.
    assert q.reload('b') == 3
    assert q.reload('b') is None        # already reloaded
    assert q.reload('zz') is None       # never seen
    assert len(q) == 3


def test_ghost_queue_bounded():
    q = reference_models.GhostQueue(max_pages=2)
    for page in 'abc':
        q.evict(page)
    assert q.reload('a') is None        # dropped, oldest first
    assert q.reload('b') == 2


def test_reuse_histogram_buckets():
    hist = est.reuse_histogram([0, 4095, 4096, 9000, 13000], bucket_kb=4096)
    assert hist == [2, 1, 1, 1]


def test_geiger_ghost_percentile_walk():
    # 100 swap-ins: 90 at bucket 0, 5 at bucket 2, 5 at bucket 7.
    hist = [90, 0, 5, 0, 0, 0, 0, 5]
    # 95 % is reached at bucket 2 (90 + 5 = 95): 2 x 4 MiB.
    assert est.geiger_ghost_kb(hist, 95, 4096) == 8 * MiB
    # 96 % needs the last bucket.
    assert est.geiger_ghost_kb(hist, 96, 4096) == 28 * MiB
    # 90 % is already in bucket 0: no extra memory.
    assert est.geiger_ghost_kb(hist, 90, 4096) == 0
    assert est.geiger_ghost_kb([], 95, 4096) == 0
    assert est.geiger_ghost_kb([0, 0], 95, 4096) == 0


def test_geiger_estimate():
    hist = [0, 0, 0, 10]            # every reload needed 12-16 MiB more
    e = est.geiger_estimate(hist, 500 * MiB, 95, 4096)
    assert e == est.TechniqueEstimate(512 * MiB, est.SOURCE_GEIGER)
    # m_ghost = 0: Geiger cannot tell.
    assert est.geiger_estimate([7], 500 * MiB) is None
    assert est.geiger_estimate([], 500 * MiB) is None


def test_geiger_from_queue_end_to_end():
    q = reference_models.GhostQueue()
    pages = range(3000)
    for p in pages:
        q.evict(p)
    # Reload the oldest 100: each had ~2900 pages evicted after it.
    dists_kb = [q.reload(p) * 4 for p in range(100)]
    hist = est.reuse_histogram(dists_kb, 4096)
    ghost = est.geiger_ghost_kb(hist, 95, 4096)
    assert ghost == 8 * MiB             # ~11.6 MiB, bucket 2's lower edge


# -- balloon statistics -------------------------------------------------------

def test_swap_activity_from_deltas():
    prev = {'swap_in': 1000, 'swap_out': 5000, 'major_fault': 10}
    cur = {'swap_in': 9192, 'swap_out': 9000, 'major_fault': 500}
    a = est.swap_activity(prev, cur, swap_in_threshold_kb=4096)
    assert a == est.SwapActivity(8192, 4000, 490, True, False)
    quiet = {'swap_in': 2000, 'swap_out': 5000, 'major_fault': 900}
    a = est.swap_activity(prev, quiet, swap_in_threshold_kb=4096)
    assert not a.active and a.swap_in_kb == 1000
    # Major faults count only when asked to.
    a = est.swap_activity(prev, quiet, 4096, major_fault_threshold=500)
    assert a.active


def test_swap_activity_missing_and_reset():
    assert not est.swap_activity(None, {'swap_in': 10 ** 6}).active
    assert est.swap_activity({}, {}).swap_in_kb is None
    # A counter that went down: guest rebooted, counts from 0.
    a = est.swap_activity({'swap_in': 10 ** 6}, {'swap_in': 8192})
    assert a.counter_reset and a.swap_in_kb == 8192 and a.active


def test_swap_fallback_estimate():
    active = est.SwapActivity(2048, 0, 0, True)
    e = est.swap_fallback_estimate(active, 512 * MiB, min_grow_kb=4096)
    assert e == est.TechniqueEstimate(512 * MiB + 4096, est.SOURCE_SWAP_STATS)
    big = est.SwapActivity(64 * MiB, 0, 0, True)
    assert est.swap_fallback_estimate(big, 512 * MiB).wss_kb == 576 * MiB
    assert est.swap_fallback_estimate(
        est.SwapActivity(0, 0, 0, False), 512 * MiB) is None


def test_balloon_used_baselines():
    stats = {'available': 1000 * MiB, 'unused': 300 * MiB,
             'disk_caches': 200 * MiB}
    assert est.balloon_used(stats) == est.TechniqueEstimate(
        700 * MiB, est.SOURCE_BALLOON_USED)
    assert est.balloon_used(
        stats, include_caches=False) == est.TechniqueEstimate(
        500 * MiB, est.SOURCE_BALLOON_USED_NOCACHE)
    assert est.balloon_used({'available': 1}) is None
    assert est.balloon_used({}) is None
    assert est.balloon_used({'available': 1, 'unused': 1},
                            include_caches=False) is None


# -- Committed_AS baselines ---------------------------------------------------

def test_zballoond_descends_then_backs_off():
    s = baselines.zballoond_step(None, 1000 * MiB, False, 0.05)
    assert (s.target_kb, s.wss_kb) == (1000 * MiB, 1000 * MiB)
    s = baselines.zballoond_step(s, 1000 * MiB, False, 0.05)
    assert s.target_kb == 950 * MiB and s.wss_kb == 1000 * MiB
    s = baselines.zballoond_step(s, 1000 * MiB, False, 0.05)
    assert s.target_kb == 900 * MiB and s.wss_kb == 950 * MiB
    # 900 MiB made it swap: back to 950, the lowest size without events.
    s = baselines.zballoond_step(s, 1000 * MiB, True, 0.05)
    assert s.target_kb == 950 * MiB
    assert s.estimate() == est.TechniqueEstimate(950 * MiB,
                                                 baselines.SOURCE_ZBALLOOND)


def test_zballoond_restarts_on_committed_change_and_bounds():
    s = baselines.ZballoondState(700 * MiB, 750 * MiB, 1000 * MiB)
    s2 = baselines.zballoond_step(s, 1020 * MiB, False)     # 2 %: same descent
    assert s2.target_kb == 700 * MiB - 51 * MiB
    s3 = baselines.zballoond_step(s, 1200 * MiB, False)     # 20 %: restart
    assert s3.target_kb == 1200 * MiB
    s4 = baselines.zballoond_step(None, 3000 * MiB, False,
                                  booked_kb=2048 * MiB)
    assert s4.target_kb == 2048 * MiB
    low = baselines.ZballoondState(110 * MiB, 110 * MiB, 1000 * MiB)
    s5 = baselines.zballoond_step(low, 1000 * MiB, False, floor_kb=100 * MiB)
    assert s5.target_kb == 100 * MiB


def test_selfballoon_target():
    # Shrink by an eighth of the excess per interval.
    e = baselines.selfballoon_target(1800 * MiB, 1000 * MiB)
    assert e == est.TechniqueEstimate(1700 * MiB, baselines.SOURCE_SELFBALLOON)
    # Grow the whole gap at once (up-hysteresis 1), reserve included.
    assert baselines.selfballoon_target(
        600 * MiB, 1000 * MiB, reserve_kb=64 * MiB).wss_kb == 1064 * MiB
    assert baselines.selfballoon_target(1000 * MiB, 1000 * MiB).wss_kb == (
        1000 * MiB)
    assert baselines.selfballoon_target(200 * MiB, 10 * MiB,
                                        floor_kb=190 * MiB).wss_kb == 190 * MiB
    with pytest.raises(ValueError):
        baselines.selfballoon_target(1, 1, down_hysteresis=0)
