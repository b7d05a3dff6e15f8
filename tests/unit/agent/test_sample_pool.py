"""Pooling consecutive rounds' page samples (memmut/agent/wss/sample_pool.py)
and the pipeline's use of it ([badis] sample_pool_rounds)."""

import random

import pytest

from memmut.agent.wss import sample_pool
from memmut.agent.wss.sampling import base
from tests.unit.agent.test_estimation import MIB
from tests.unit.agent.test_estimation import fixed_pipeline
from tests.unit.agent.test_estimation import info


def test_rounds_that_agree_are_pooled():
    assert sample_pool.pooled([(30, 100), (28, 100), (32, 100)]) == (
        90, 300)


def test_the_pool_stops_at_the_first_round_that_differs():
    # 30 % for three rounds, then 60 %: the newest round alone
    assert sample_pool.pooled([(30, 100)] * 3 + [(60, 100)]) == (60, 100)
    # two rounds at the new level pool, the old ones stay out
    assert sample_pool.pooled([(30, 100)] * 3 + [(60, 100), (62, 100)]) == (
        122, 200)
    # an older round that agrees beyond one that does not stays out too
    assert sample_pool.pooled([(60, 100), (30, 100), (61, 100)]) == (
        61, 100)


def test_unchanged_rounds_are_pooled_nearly_always_and_shrink_the_error():
    # 2000 draws of 4 rounds of 100 pages at 60 %: the pooled estimate's
    # spread is well under one round's (the splits, about one draw in
    # seven at 95 % per test, keep it above that of 400 pages)
    rng = random.Random(3)
    est, split = [], 0
    for _ in range(2000):
        rounds = [(sum(rng.random() < 0.6 for _ in range(100)), 100)
                  for _ in range(4)]
        acc, n = sample_pool.pooled(rounds)
        split += n < 400
        est.append(acc / n)
    mean = sum(est) / len(est)
    sd = (sum((e - mean) ** 2 for e in est) / len(est)) ** 0.5
    assert abs(mean - 0.6) < 0.005
    assert sd < 0.75 * (0.24 / 100) ** 0.5
    assert split < 0.2 * len(est)


def test_pooled_needs_a_sample():
    with pytest.raises(ValueError):
        sample_pool.pooled([])
    # all or nothing accessed: no variance, kept only if equal
    assert sample_pool.pooled([(0, 100), (0, 100)]) == (0, 200)
    assert sample_pool.pooled([(100, 100), (0, 100)]) == (0, 100)


def test_keep_holds_the_last_rounds_of_one_span():
    h = []
    for i in range(5):
        sample_pool.keep(h, i, 100, 1024, 3)
    assert h == [(2, 100, 1024), (3, 100, 1024), (4, 100, 1024)]
    sample_pool.keep(h, 9, 100, 2048, 3)
    assert h == [(9, 100, 2048)]


def _rounds(p, counts, pages=100):
    """Run the pipeline over rounds whose samples read ``counts`` of
    ``pages`` pages of 1 GiB; the sampled part of each estimate (the
    estimate less the pinned-page correction)."""
    out = []
    it = iter(counts)
    p_, sampler = p
    sampler.end = lambda vm, pid: base.AccessSample(
        'fixed', next(it), pages, 1024 * MIB, 10.0)
    stats = {'actual': 1024 * MIB, 'available': 974 * MIB,
             'usable': 400 * MIB, 'swap_in': 0, 'swap_out': 0}
    p_.estimate([info(balloon=1024 * MIB, stats=dict(stats))], 0.0)
    for i in range(len(counts)):
        e = p_.estimate([info(balloon=1024 * MIB, stats=dict(stats))],
                        10.0 * (i + 1))
        out.append(e['u-1'].wss_kb - e['u-1'].pinned_kb)
    return out


def test_the_pipeline_pools_sampled_pages_and_follows_a_change():
    pooled = _rounds(fixed_pipeline(0, pages=100, sample_pool_rounds=4,
                                    vg_threshold=0.99,
                                    calibrate_pinned=False),
                     [50, 54, 46, 50, 80])
    alone = _rounds(fixed_pipeline(0, pages=100, vg_threshold=0.99,
                                   calibrate_pinned=False),
                    [50, 54, 46, 50, 80])
    assert alone == [c * 1024 * MIB // 100 for c in (50, 54, 46, 50, 80)]
    # the first four rounds agree: 52, 50, 50 % pooled; the fifth is
    # read alone
    assert pooled[1:] == [52 * 1024 * MIB // 100, 150 * 1024 * MIB // 300,
                          200 * 1024 * MIB // 400, 80 * 1024 * MIB // 100]
