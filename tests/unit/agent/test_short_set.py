"""The short-cycle sampled set (memmut.agent.wss.short_set) and the
back-ends' second set of pages (issue 13: seeing a fall before the
working-set curve's next clear)."""

import random

import pytest

from memmut.agent.wss import short_set
from memmut.agent.wss import ws_curve
from memmut.agent.wss.sampling import base
from memmut.agent.wss.sampling import page_idle
from memmut.agent.wss.sampling import simulated
from memmut.evaluation import ref_streams
from memmut.evaluation import ws_cycles
from tests.unit.agent import test_sampling as ts
from tests.unit.agent import test_sampling_kmod as tk

SPAN = 8000 * 4              # KiB
N = 200
BOUND = 160                  # KiB/s


def sread(age, frac, n=N):
    x = int(round(frac * n))
    return ws_curve.Read(age, x * SPAN // n, x, n)


def eread(age, pages):
    return ws_curve.Read(age, pages * 4)


def test_a_fall_to_a_flat_set_is_called_with_the_upper_limit():
    # the curve's last cycle read 6000 of 8000 pages at 1 and 2 s; the
    # short window reads 18 % at 1 s and 18.5 % at 2 s: flat, far below
    ref = [eread(1.0, 5500), eread(2.0, 6000), eread(4.0, 6000)]
    short = [sread(1.0, 0.18), sread(2.0, 0.185)]
    f = short_set.fell(short, ref, SPAN, 2.0, BOUND)
    assert f is not None and f.age_s == 2.0
    hi = ws_curve.wilson_upper(37, N) * SPAN
    assert f.kb == int(hi) and f.kb == f.recent_kb
    assert 0.185 * SPAN < f.kb < 0.25 * SPAN
    assert f.reference_kb < 6000 * 4


def test_no_fall_before_the_window_ends_or_without_a_reference():
    ref = [eread(1.0, 5500), eread(2.0, 6000)]
    assert short_set.fell([sread(1.0, 0.18)], ref, SPAN, 2.0, BOUND) is None
    # no reference read at or before the short read's age
    assert short_set.fell([sread(1.0, 0.18), sread(2.0, 0.185)],
                          [eread(3.0, 6000)], SPAN, 2.0, BOUND) is None


def test_a_set_still_rising_at_the_short_horizon_is_no_level():
    # 18 % at 1 s, 40 % at 2 s: below the reference, but still growing
    # much faster than the bound: it needs longer windows
    ref = [eread(1.0, 7000), eread(2.0, 7900)]
    short = [sread(1.0, 0.18), sread(2.0, 0.40)]
    assert short_set.growing(short, SPAN, BOUND)
    assert short_set.fell(short, ref, SPAN, 2.0, BOUND) is None


def test_every_read_from_half_the_window_must_be_low():
    ref = [eread(0.5, 1000), eread(1.0, 6000), eread(2.0, 6000)]
    # the read at 0.5 s (under half the window) is not compared ...
    short = [sread(0.5, 0.18), sread(1.0, 0.18), sread(2.0, 0.185)]
    assert short_set.fell(short, ref, SPAN, 2.0, BOUND) is not None
    # ... the one at 1 s is: a staircase that looks low only at the end
    ref = [eread(1.0, 1500), eread(2.0, 6000)]
    assert short_set.fell(short, ref, SPAN, 2.0, BOUND) is None


def test_stationary_reads_almost_never_call_a_fall():
    # the same level, read twice with binomial noise: one-sided limits on
    # both sides and a 10 % margin
    rng = random.Random(4)
    for p, sampled_ref in ((0.2, True), (0.5, False), (0.8, True)):
        calls = 0
        for _ in range(2000):
            def draw(n):
                return sum(rng.random() < p for _ in range(n))
            x1, x2 = draw(N), draw(N)
            x2 = max(x1, x2)
            short = [ws_curve.Read(1.0, 0, x1, N),
                     ws_curve.Read(2.0, 0, x2, N)]
            if sampled_ref:
                y = draw(100)
                ref = [ws_curve.Read(1.0, 0, y, 100),
                       ws_curve.Read(2.0, 0, y, 100)]
            else:
                ref = [eread(1.0, int(p * 8000)), eread(2.0, int(p * 8000))]
            calls += short_set.fell(short, ref, SPAN, 2.0, 10 ** 6) is not None
        assert calls <= 2000 * 0.005, (p, calls)


def test_smallest_detectable_fall_is_what_the_docs_say():
    assert short_set.smallest_detectable(0.5, 200) == pytest.approx(0.39)
    assert short_set.smallest_detectable(0.5, 100) == pytest.approx(0.36)
    assert short_set.smallest_detectable(0.25, 200) == pytest.approx(0.175)
    # more pages, finer: a smaller fall shows
    assert (short_set.smallest_detectable(0.5, 400) >
            short_set.smallest_detectable(0.5, 200))


def test_capped_reads_are_plain_levels_under_the_cap():
    reads = [sread(1.0, 0.2), sread(4.0, 0.5), eread(8.0, 7000)]
    out = short_set.capped(reads, 10000)
    assert [r.kb for r in out] == [min(r.kb, 10000) for r in reads]
    assert all(r.sampled is None and r.accessed is None for r in out)


def test_reference_lower_limits():
    # exact: pages less z sqrt(pages); sampled: the lower Wilson limit
    assert short_set.reference_lower_kb(eread(1.0, 2500), SPAN) == int(
        (2500 - ws_curve.Z_95_ONE_SIDED * 50) * 4)
    lo = short_set.reference_lower_kb(sread(1.0, 0.5, 100), SPAN)
    assert 0.40 * SPAN < lo < 0.5 * SPAN


# -- the second set of pages of the back-ends --------------------------------

def test_short_pages_avoid_the_main_set_and_its_huge_regions():
    rng = random.Random(1)
    avoid = rng.sample(range(100000), 100)
    huge = avoid[:30]
    got = base.short_pages(rng, 100000, 2000, avoid, huge)
    assert len(got) == 2000 and got == sorted(set(got))
    assert not set(got) & set(avoid)
    assert not {p // 512 for p in got} & {p // 512 for p in huge}
    # 4 KiB pages: only the pages themselves are left out
    assert {p // 512 for p in got} & {p // 512 for p in avoid[30:]}
    # when the huge pages cover everything, nothing is left
    assert base.short_pages(rng, 1024, 10, [0, 600], [0, 600]) == []
    assert base.short_pages(rng, 4, 10, [1]) == [0, 2, 3]


class ShortRng(ts.PickRecorded):
    """sample(): the fixture's first pages (the main set); randrange():
    the given pages in turn (the short set's draws)."""

    def __init__(self, indices, short):
        super().__init__(indices)
        self.short = list(short)

    def randrange(self, n):
        return self.short.pop(0)


def test_page_idle_short_set_is_read_apart_from_the_main_set(tmp_path):
    fx = ts.fixture('memfd')
    fs = ts.FakeSys(tmp_path, fx)
    idx = sorted(fs.entries)
    present = [i for i in idx if fs.entries[i] & page_idle.PM_PRESENT]
    main = present[:20]
    others = [i for i in present if i not in main][-10:]
    # one draw of a main page: skipped
    s = page_idle.PageIdleSampler(
        pages=20, proc_root=fs.proc, bitmap=fs.bitmap,
        kpageflags=fs.kpageflags,
        rng=ShortRng(main, [main[0]] + others))
    vm = ts.vm_info(fx['booked_kb'], domain_type='kvm')
    assert s.can_short
    with pytest.raises(base.SamplerError):
        s.begin_short(vm, ts.PID, 10)        # no main interval yet
    s.begin(vm, ts.PID)
    s.begin_short(vm, ts.PID, 10)
    pfn = {i: fs.entries[i] & page_idle.PFN_MASK for i in present}
    short_pages = [(v - fx['ram_start']) // 4096
                   for v, _ in s._short[vm.uuid][2]]
    assert short_pages[:len(others)] == sorted(others) or set(
        short_pages) == set(others)
    # the guest touches a short page and a main page
    fs.access(pfn[others[0]])
    fs.access(pfn[main[0]])
    assert s.peek_short(vm, ts.PID).accessed == 1
    assert s.peek(vm, ts.PID).accessed == 1
    # clearing the short set again leaves the main set's reading alone
    s._short.pop(vm.uuid)
    s.rng.short = list(others)
    s.begin_short(vm, ts.PID, 10)
    assert s.peek_short(vm, ts.PID).accessed == 0
    assert s.peek(vm, ts.PID).accessed == 1
    # a new main interval drops the short set
    s.begin(vm, ts.PID)
    assert s.peek_short(vm, ts.PID) is None


def test_kmod_short_set_does_not_clear_the_main_sets_huge_pages(tmp_path):
    fx = ts.fixture('memfd')
    proc = ts.fake_proc(tmp_path, fx)
    start = fx['ram_start']
    end = start + fx['booked_kb'] * 1024
    region = 2 * 1024 * 1024
    huge = range(start & ~(region - 1), end, region)
    fake = tk.FakeWss(start, end, huge=huge)
    s = tk.kmod.KmodSampler(pages=50, proc_root=proc,
                            device_factory=fake.factory,
                            rng=random.Random(3))
    vm = ts.vm_info(fx['booked_kb'])
    assert s.can_short
    fake.accessed.clear()
    s.begin(vm, ts.PID)
    main = s._sets[vm.uuid][4]
    s.begin_short(vm, ts.PID, 40)
    short = s._short[vm.uuid][4]
    assert len(short) == 40
    assert not {a // region for a in short} & {a // region for a in main}
    # the guest touches one page of each set; every scan of one set
    # tests and clears its own huge pages only
    # (a huge page counts every sampled page in it)
    fake.touch(main[0])
    fake.touch(short[0])
    same = sum(1 for a in short if a // region == short[0] // region)
    main_same = sum(1 for a in main if a // region == main[0] // region)
    assert s.peek_short(vm, ts.PID).accessed == same
    assert s.peek(vm, ts.PID).accessed == main_same
    s.begin_short(vm, ts.PID, 40)            # cleared again
    assert s.peek_short(vm, ts.PID).accessed == 0
    assert s.peek(vm, ts.PID).accessed == main_same


def test_stream_sampler_short_set_only_beside_sampled_pages():
    g = simulated.ReferenceStream(iter(()), 4096)
    exact = simulated.StreamSampler({'vm': g})
    assert not exact.can_short
    sampled = simulated.StreamSampler({'vm': g}, pages=50)
    assert sampled.can_short


# -- the simulation of the agent's schedule ---------------------------------

def _choices(kind, short_rounds, sampled=100):
    rate, pages = 4000, 8000
    n = 40 * rate
    rng = random.Random(7)
    if kind == 'uniform falls':
        refs = ref_streams.shrinking(ref_streams.uniform(6000, n, rng),
                                     ref_streams.uniform(1500, n, rng),
                                     13.5, rate)
    else:
        refs = ref_streams.sweep(6000, n)
    refs = list(ref_streams.preloaded(pages, refs))
    falls = []
    ch = ws_cycles.round_choices(refs, rate, pages, 1.0, 8, 160, 0.25, 34.0,
                                 sampled=sampled, short_rounds=short_rounds,
                                 events=falls)
    return dict(ch), falls


def test_simulated_fall_is_followed_within_two_short_windows():
    # the set falls at 13.5 s + 2 s of preload (6000 -> 1500 pages): the
    # curve alone follows at the clear at 24 s plus half a cycle; with
    # the short set, by the end of the first window after the fall
    plain, _ = _choices('uniform falls', 0)
    short, falls = _choices('uniform falls', 2)
    fall = 15.5
    assert all(c.kb > 4 * 4000 for t, c in plain.items()
               if fall + 1 <= t < 24)
    called = [t for t in falls if t > fall]
    assert called and called[0] <= fall + 4 + 0.01
    # (the curve's 100 sampled pages give upper limits: about 2500)
    assert all(c.kb <= 4 * 2500 for t, c in short.items()
               if called[0] <= t <= 30)
    assert short[called[0]].recent_fall


def test_simulated_stationary_sweep_calls_no_fall():
    ch, falls = _choices('sweep', 2)
    # the preload (every page in the first 2 s) falling to the sweep is
    # the one fall; the sweep's level holds after it
    assert len(falls) <= 1 and all(t <= 6 for t in falls)
    assert all(c.kb >= 6000 * 4 for t, c in ch.items() if t >= 12)
