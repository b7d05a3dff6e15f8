"""The working-set function and the allocation under a swap-in bound
(memmut.agent.wss.ws_curve), on synthetic page-reference streams read
through the simulated stream sampler, judged by the fault rate a simulated
LRU memory of the chosen size has on the same stream."""

import dataclasses
import math
import random

import pytest

from memmut.agent.wss.sampling import simulated
from memmut.agent.wss import ws_curve
from memmut.evaluation import ref_streams

RATE = 2000            # references per second
PAGES = 1000           # guest memory, 4 KiB pages
KB = 4
TAU = 0.125            # first read after the clear
HORIZON = 16.0         # the cycle: reads at TAU * 2^k up to here
BOUND_PAGES_S = 20     # swap-in bound: 20 pages/s (1 % of references)
BOUND = BOUND_PAGES_S * KB


@dataclasses.dataclass
class VM:
    uuid: str = 'vm'


def lru_rate(dists, start, frames):
    return ref_streams.lru_rate(dists, start, frames, RATE)


def smallest_frames(dists, start, bound):
    return ref_streams.smallest_frames(dists, start, bound, RATE, PAGES)


# -- measuring the curve through the sampler --------------------------------

def measure(pages_list, clear_at, sample_pages=None, seed=1):
    """Reads of one cycle starting at ``clear_at`` s, through the stream
    sampler (every page, or ``sample_pages`` random ones)."""
    g = simulated.ReferenceStream(ref_streams.timed(pages_list, RATE),
                                  PAGES)
    s = simulated.StreamSampler({'vm': g}, pages=sample_pages,
                                rng=random.Random(seed))
    vm = VM()
    g.advance(clear_at)
    s.begin(vm, None)
    reads = []
    age = TAU
    while age <= HORIZON + 1e-9:
        g.advance(clear_at + age)
        reads.append(ws_curve.read_of(s.peek(vm, None)))
        age *= 2
    s.end(vm, None)
    return reads


def judge(pages_list, clear_at, sample_pages=None, span_kb=None,
          bound=BOUND_PAGES_S):
    reads = measure(pages_list, clear_at, sample_pages)
    choice = ws_curve.choose(reads, bound * KB, span_kb=span_kb)
    dists = ref_streams.stack_distances(pages_list)
    t0 = int(clear_at * RATE)
    frames = choice.kb // KB
    return (choice, lru_rate(dists, t0, frames),
            smallest_frames(dists, t0, bound))


WARM = 20.0     # seconds of stream before the measured cycle
COUNT = int((WARM + HORIZON + 1) * RATE)


def loaded(refs):
    # the data is in memory (or swap) before: a first reference in the
    # measured cycle is a swap-in, not a fresh page
    return list(ref_streams.preloaded(PAGES, refs))


def streams():
    rng = random.Random(7)
    return {
        'sweep': loaded(ref_streams.sweep(400, COUNT)),
        'uniform': loaded(ref_streams.uniform(400, COUNT, rng)),
        'zipf0.8': loaded(ref_streams.zipf(PAGES, 0.8, COUNT, rng)),
        'zipf1.2': loaded(ref_streams.zipf(PAGES, 1.2, COUNT, rng)),
        'load_idle': list(ref_streams.load_then_idle(200, COUNT, PAGES)),
    }


STREAMS = streams()


@pytest.mark.parametrize('bound', [BOUND_PAGES_S, 5 * BOUND_PAGES_S])
@pytest.mark.parametrize('name', sorted(STREAMS))
def test_exact_choice_keeps_faults_under_the_bound(name, bound):
    choice, rate, smallest = judge(STREAMS[name], WARM, bound=bound)
    assert choice.bounded, choice
    # the allocation's LRU fault rate is within the bound ...
    assert rate <= bound * 1.05, (choice, rate, smallest)
    # ... and it is near the smallest allocation that keeps it there
    # (within one geometric step of the reads)
    assert choice.kb // KB <= smallest * 1.25 + 8, (choice, smallest)


def test_sweep_gets_the_whole_set_whatever_its_period():
    # a sweep slower than the first read: an interval estimate of TAU
    # would see a fraction, the curve sees it flatten at the whole set
    slow = list(ref_streams.sweep(400, COUNT))
    choice, _, _ = judge(slow, WARM)
    assert choice.kb == 400 * KB


def test_cold_data_is_not_counted():
    choice, _, _ = judge(STREAMS['load_idle'], WARM)
    assert choice.kb == 200 * KB


def test_zipf_gets_less_than_it_touches():
    # skewed: the hot part plus what the bound allows, well under all the
    # pages the horizon touches
    loose = 5 * BOUND
    reads = measure(STREAMS['zipf1.2'], WARM)
    assert ws_curve.choose(reads, loose).kb < 0.8 * reads[-1].kb
    zipf12 = ws_curve.choose(reads, loose)
    zipf08 = ws_curve.choose(measure(STREAMS['zipf0.8'], WARM), loose)
    assert zipf12.kb < zipf08.kb       # more skew, smaller set
    # a tighter bound asks for more memory
    assert ws_curve.choose(reads, BOUND).kb > zipf12.kb


def test_moving_hot_set_slope_is_its_drift():
    # 100 pages moved every 2 s: a drift of 50 pages/s > the bound of 20:
    # no window is under the bound, the choice says so and takes all the
    # horizon touched (less would fault at the drift rate)
    pages_list = list(ref_streams.moving_hot(100, 2.0, COUNT, RATE, PAGES))
    reads = measure(pages_list, WARM)
    choice = ws_curve.choose(reads, BOUND)
    assert not choice.bounded
    assert choice.kb == reads[-1].kb
    assert choice.slope_kb_s == pytest.approx(50 * KB, rel=0.2)
    # a bound above the drift: the hot part (two windows at most)
    loose = ws_curve.choose(reads, 80 * KB)
    assert loose.bounded and loose.kb <= 200 * KB


@pytest.mark.parametrize('name', ['sweep', 'uniform', 'load_idle'])
def test_sampled_choice_is_conservative(name):
    # n = 400 of 1000 pages: the upper confidence bound of the slope is
    # compared with the bound, so the choice errs towards more memory
    exact, rate_exact, smallest = judge(STREAMS[name], WARM)
    sampled, rate, _ = judge(STREAMS[name], WARM, sample_pages=400,
                             span_kb=PAGES * KB)
    assert rate <= BOUND_PAGES_S * 1.05 or sampled.kb >= exact.kb * 0.9
    assert sampled.window_s >= exact.window_s


def test_min_certifiable_slope():
    # n = 100 over 448 MiB: about 11.8 MiB / dw
    s = ws_curve.min_certifiable_slope(100, 448 * 1024, 1.0)
    assert 11.0 * 1024 < s < 12.5 * 1024
    assert ws_curve.min_certifiable_slope(100, 448 * 1024, 12.0) < 1024


def test_wilson_upper():
    assert ws_curve.wilson_upper(0, 100) == pytest.approx(0.0263, abs=1e-3)
    assert ws_curve.wilson_upper(50, 100) > 0.5
    assert ws_curve.wilson_upper(100, 100) == 1.0
    assert ws_curve.wilson_upper(0, 0) == 1.0


def test_wilson_lower():
    assert ws_curve.wilson_lower(0, 100) == 0.0
    assert ws_curve.wilson_lower(50, 100) < 0.5
    assert ws_curve.wilson_lower(100, 100) == pytest.approx(0.9737,
                                                            abs=1e-3)
    assert ws_curve.wilson_lower(3, 0) == 0.0


def test_end_slope_is_the_last_geometric_backward_slope():
    # reads 1, 2, 3, 4 rounds after the clear: the slope at the read's
    # end is taken over its last doubling (2 -> 4), as choose() takes it
    reads = [ws_curve.Read(a, kb) for a, kb in
             [(1.0, 100), (2.0, 180), (3.0, 250), (4.0, 300)]]
    assert ws_curve.end_slope(reads) == pytest.approx(60.0)
    assert ws_curve.end_slope(reads[:1]) is None
    assert ws_curve.end_slope([]) is None
    # nothing new at the end: 0 (a cold remainder, a sweep that ended)
    flat = [ws_curve.Read(1.0, 100), ws_curve.Read(2.0, 100)]
    assert ws_curve.end_slope(flat) == 0


def test_end_slope_of_sampled_pages_is_the_lower_end():
    # 400 pages of 512 MiB; 20 first touched between the reads 2 s apart:
    # point estimate 12.8 MiB/s, the lower end shown with 95 % confidence
    span = 512 * 1024
    reads = [ws_curve.Read(2.0, 0, 40, 400), ws_curve.Read(4.0, 0, 60, 400)]
    low = ws_curve.end_slope(reads, span)
    point = 20 / 400 * span / 2.0
    assert 0.4 * point < low < point
    # none new: nothing shown
    same = [ws_curve.Read(2.0, 0, 40, 400), ws_curve.Read(4.0, 0, 40, 400)]
    assert ws_curve.end_slope(same, span) == 0.0


def test_monotone_and_geometric():
    reads = [ws_curve.Read(a, kb) for a, kb in
             [(0.5, 10), (1.0, 8), (1.5, 20), (2.0, 25), (3.0, 26),
              (4.0, 30), (0.0, 5)]]
    m = ws_curve.monotone(reads)
    assert [r.kb for r in m] == [10, 10, 20, 25, 26, 30]
    g = ws_curve.geometric(reads)
    assert [r.age_s for r in g] == [0.5, 1.0, 2.0, 4.0]


def test_choose_without_reads_and_flat_curve():
    assert ws_curve.choose([], 100) is None
    one = ws_curve.choose([ws_curve.Read(1.0, 500)], 100)
    assert not one.bounded and one.kb == 500
    flat = ws_curve.choose([ws_curve.Read(1.0, 500),
                            ws_curve.Read(2.0, 500)], 100)
    assert flat.bounded and flat.kb == 500 and flat.window_s == 2.0


def test_merge_extends_with_the_previous_cycle():
    prev = [ws_curve.Read(a, kb) for a, kb in
            [(1, 100), (2, 150), (4, 160), (8, 160)]]
    cur = [ws_curve.Read(1, 90), ws_curve.Read(2, 170)]
    m = ws_curve.merge(cur, prev)
    assert [(r.age_s, r.kb) for r in m] == [(1, 90), (2, 170), (4, 170),
                                            (8, 170)]
    assert ws_curve.merge(cur, None) == cur


def test_robust_offset():
    assert ws_curve.robust_offset([50, 72, 70]) == 70
    assert ws_curve.robust_offset([None]) is None
    assert ws_curve.robust_offset([132, 96, 90, 88]) == 93


def test_stack_distances_match_a_plain_lru_stack():
    rng = random.Random(3)
    pages = [rng.randrange(30) for _ in range(2000)]
    stack = []
    expected = []
    for p in pages:
        if p in stack:
            expected.append(stack.index(p) + 1)
            stack.remove(p)
        else:
            expected.append(math.inf)
        stack.insert(0, p)
    assert ref_streams.stack_distances(pages) == expected
