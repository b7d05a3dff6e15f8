"""The paged guest model (memmut/evaluation/guest_model.py) and the agent
loop around it (tests/harness/model_run.py)."""

import numpy as np
import pytest

from memmut.evaluation import guest_model as gm
from memmut.evaluation import workloads
from memmut.memstore import reuse
from tests.harness import model_run

MIB = 1024


def guest(name, seconds=20.0, seed=0, costs='tcg', reclaim='lru',
          writeback_surplus=0.0, balloon='instant', **layout):
    pattern, steps = workloads.pattern_suite(160, seconds)[name]
    refs = gm.References(pattern, steps, np.random.default_rng(seed))
    return gm.PagedGuest(refs, layout=gm.Layout(**layout) if layout
                         else None, costs=gm.COSTS[costs], reclaim=reclaim,
                         writeback_surplus=writeback_surplus,
                         balloon=balloon)


def test_references_follow_the_patterns():
    rng = np.random.default_rng(0)
    size = 160 * MIB // 4
    # load_idle: the first pass loads every page in order, then only the
    # hot quarter is swept
    refs = gm.References(workloads.Pattern('load_idle', hot_mib=40),
                         [workloads.Step(160, 10)], rng)
    first = refs.take(size, 0.0)
    assert (first == np.arange(size)).all() and refs.loaded_at == 0.0
    after = refs.take(3 * size, 1.0)
    assert after.max() < 40 * MIB // 4
    # random: every page once per pass
    refs = gm.References(workloads.Pattern('random'),
                         [workloads.Step(160, 10)], rng)
    one = refs.take(size, 0.0)
    assert sorted(one) == list(range(size))
    # hotset: the window moves by its size every move_s seconds
    refs = gm.References(workloads.Pattern('hotset', hot_mib=40,
                                           move_s=5.0),
                         [workloads.Step(160, 40)], rng)
    refs.take(size, 0.0)
    w0, w1 = refs.take(1000, 1.0), refs.take(1000, 6.0)
    assert w0.min() >= 0 and w0.max() < 40 * MIB // 4
    assert w1.min() >= 40 * MIB // 4 and w1.max() < 80 * MIB // 4
    # scan: the hot part, and every scan_s one sweep of the whole step
    # in address order from its first page
    refs = gm.References(workloads.Pattern('scan', hot_mib=40, scan_s=5.0),
                         [workloads.Step(160, 40)], rng)
    refs.take(size, 0.0)
    assert refs.take(3 * size, 1.0).max() < 40 * MIB // 4
    sweep = refs.take(size, 5.5)
    assert (sweep == np.arange(size)).all()
    assert refs.take(size, 6.0).max() < 40 * MIB // 4
    assert refs.take(10, 9.9).max() < 40 * MIB // 4
    assert refs.take(size + 10, 10.0)[size - 1] == size - 1
    # zipf: the hot ranks take most touches
    refs = gm.References(workloads.Pattern('zipf', exponent=1.2),
                         [workloads.Step(160, 10)], rng)
    z = refs.take(100000, 0.0)
    _, counts = np.unique(z, return_counts=True)
    assert np.sort(counts)[-100:].sum() > 0.5 * len(z)


def test_phases_change_with_the_clock():
    refs = gm.References(*reversed(list(reversed(
        workloads.pattern_suite(160, 30)['phases']))),
        rng=np.random.default_rng(0))
    assert refs.take(10, 1.0).max() < 80 * MIB // 4
    big = refs.take(200000, 11.0)
    assert big.max() >= 80 * MIB // 4
    assert refs.take(1000, 21.0).max() < 40 * MIB // 4


def test_full_memory_never_swaps_and_runs_at_its_rate():
    g = guest('random')
    g.run_until(20.0)
    assert g.swap_in_pages == g.swap_out_pages == 0
    # the load's first touches cost a little
    assert 0.97 * 20 * g.rate < g.ops <= 20 * g.rate
    stats = g.memory_stats()
    assert stats['available'] == stats['actual'] - g.layout.reserved_kb
    assert stats['unused'] == (256 - 76 - 160) * MIB


def test_a_shrink_below_the_data_swaps_and_costs_throughput():
    full, short = guest('random'), guest('random')
    full.run_until(5.0)
    short.run_until(5.0)
    short.set_balloon(200 * MIB)
    # reclaimed at once, least recently used first
    assert short.resident_kb() <= (200 - 76 - 6) * MIB
    assert short.swap_out_pages > 0
    full.run_until(20.0)
    short.run_until(20.0)
    assert short.swap_in_pages > 0
    assert short.ops < 0.8 * full.ops


def test_the_swap_cache_keeps_what_a_shrink_wrote_past_its_need():
    """writeback_surplus: the reclaim writes more than it frees and the
    rest stays resident, a clean copy of what swap holds; the next
    reclaim frees it without a write (the TCG guests' 85-92 MiB of
    swap cache after a probe, badis69), a touch without a read."""
    g = guest('load_idle', writeback_surplus=2.0)
    g.run_until(3.0)
    used = g.resident_kb()
    g.set_balloon(g.balloon_kb - 32 * MIB)   # 14 MiB of it free
    freed = used - g.resident_kb()
    written = g.swap_out_pages * gm.PAGE_KB
    stats = g.memory_stats()
    assert freed >= 10 * MIB and written == pytest.approx(3 * freed, abs=8)
    assert stats['disk_caches'] == written - freed
    # in use (actual - MemAvailable) counts them; the queue holds them
    in_use = stats['actual'] - stats['usable']
    assert in_use == g.layout.base_kb + g.resident_kb()
    assert g.queue_pages() * gm.PAGE_KB == written
    # the next shrink takes them first, without a write
    g.swap_in_pages = 0
    g.set_balloon(g.balloon_kb - 16 * MIB)
    assert g.swap_out_pages * gm.PAGE_KB == written
    after = g.memory_stats()
    assert after['disk_caches'] < stats['disk_caches']
    assert after['actual'] - after['usable'] < in_use - 8 * MIB
    # the hot part touched again: no page read back from swap, none lost
    g.run_until(10.0)
    assert g.swap_in_pages == 0
    assert g._cached == int((g.state == gm.CACHED).sum())
    assert g._resident == int(((g.state == gm.RESIDENT) |
                               (g.state == gm.CACHED)).sum())
    with pytest.raises(ValueError):
        guest('load_idle', writeback_surplus=-1)


def test_without_the_swap_cache_a_shrink_writes_what_it_frees():
    g = guest('load_idle')
    g.run_until(3.0)
    used = g.resident_kb()
    g.set_balloon(g.balloon_kb - 32 * MIB)
    assert g.swap_out_pages * gm.PAGE_KB == used - g.resident_kb()
    assert g.memory_stats()['disk_caches'] == 0


def test_lru_keeps_the_hot_part_of_load_idle():
    g = guest('load_idle')
    g.run_until(3.0)
    g.set_balloon((76 + 6 + 60) * MIB)     # room for the 40 MiB hot part
    g.swap_in_pages = 0
    g.run_until(20.0)
    assert g.swap_in_pages == 0


def test_clock_first_reclaim_after_a_load_evicts_in_load_order():
    """The kernel sees accessed bits, not times: after a load every
    page has its bit, so the first reclaim takes the oldest pages, hot
    or not, and the guest reads its hot part back; by the next one the
    bits tell the hot part apart (the TCG guests' first probe after a
    load read back 40 of 57 MiB at once)."""
    read = {}
    for rule in ('lru', 'clock'):
        g = guest('load_idle', reclaim=rule)
        g.run_until(3.0)                # loaded; the hot 40 MiB swept
        g.set_balloon((76 + 6 + 100) * MIB)
        g.run_until(8.0)
        read[rule, 1] = g.swap_in_pages * gm.PAGE_KB // MIB
        g.set_balloon((76 + 6 + 60) * MIB)
        g.run_until(13.0)
        read[rule, 2] = g.swap_in_pages * gm.PAGE_KB // MIB - read[rule, 1]
    assert read['lru', 1] == read['lru', 2] == 0
    # the first reclaim (60 MiB, load order) took the hot 40 MiB
    assert read['clock', 1] >= 35
    # the second (40 MiB more) took cold pages only
    assert read['clock', 2] <= 1


def test_clock_gives_touched_pages_a_second_chance():
    refs = gm.References(workloads.Pattern('random'),
                         [workloads.Step(1, 10)], np.random.default_rng(0))
    g = gm.PagedGuest(refs, reclaim='clock')
    n = 8
    pages = np.arange(n)
    g.state[pages] = gm.RESIDENT
    g._resident = n
    g._to_newest(pages)                   # in order 0 .. 7
    g.young[[0, 1, 4]] = True
    # the scan passes 0 and 1 (bits cleared, to the newest end), takes
    # 2 and 3, and stops: 4 keeps its bit and its place
    assert g._evict(2) == 2
    assert g.state[[2, 3]].tolist() == [gm.SWAPPED] * 2
    assert not g.young[[0, 1]].any() and g.young[4]
    assert g.pos[0] > g.pos[7] and g.pos[1] > g.pos[0]
    # 4 is the oldest now but has its bit: spared again; 5, 6, 7, then
    # 0 and 1 (passed once, their bits gone) go
    assert g._evict(5) == 5
    assert g.state[:8].tolist() == [gm.SWAPPED] * 4 + [gm.RESIDENT] + [
        gm.SWAPPED] * 3
    # a whole turn without a page lacking its bit takes the oldest
    g.young[4] = True
    assert g._evict(1) == 1 and g._resident == 0
    with pytest.raises(ValueError, match='reclaim=fifo'):
        gm.PagedGuest(refs, reclaim='fifo')


@pytest.mark.parametrize('rule', gm.RECLAIM_RULES)
def test_a_balloon_that_must_reclaim_stops_over_what_the_program_touches(
        rule):
    # load_idle: 160 MiB loaded, the first 40 MiB swept on; the base 76
    # MiB and the watermark 6 MiB are the guest's own
    hot = (76 + 6 + 40) * MIB
    g = guest('load_idle', reclaim=rule, balloon='reclaim')
    g.run_until(8.0)
    g.set_balloon(hot - 20 * MIB)          # under the hot part
    # not at once: free memory, then at most 40 MiB/s of reclaim
    assert g.balloon_kb > g.target_kb == hot - 20 * MIB
    g.run_until(8.5)
    # (14 MiB free, then 8 MiB an attempt at 8.0, 8.2 and 8.4 s; under
    # clock the first scan after the load finds every bit set: it clears
    # them and takes nothing)
    took = 14 + (3 if rule == 'lru' else 2) * 8
    assert g.balloon_kb == g.layout.booked_kb - took * MIB
    g.run_until(15.0)
    # it stopped over the hot part, which the program kept: no swap-in
    assert hot - 2 * MIB <= g.balloon_kb <= hot + 2 * MIB
    assert g.swap_in_pages == 0
    assert g.memory_stats()['actual'] == g.balloon_kb
    # a larger size is met at once, and the pending shrink forgotten
    g.set_balloon(200 * MIB)
    assert g.balloon_kb == g.target_kb == 200 * MIB
    g.run_until(16.0)
    assert g.balloon_kb == 200 * MIB
    # instant (the default) goes anywhere at once, and the program swaps
    g = guest('load_idle', reclaim=rule)
    g.run_until(8.0)
    g.set_balloon(hot - 20 * MIB)
    assert g.balloon_kb == hot - 20 * MIB
    g.run_until(15.0)
    assert g.swap_in_pages * gm.PAGE_KB >= 20 * MIB
    with pytest.raises(ValueError, match='balloon=lazy'):
        guest('load_idle', balloon='lazy')


def test_sequential_swap_ins_cost_less_than_random_ones():
    # the same volume read back in address order costs one read per
    # readahead cluster
    c = gm.COSTS['tcg']
    seq, rnd = guest('hotset', seconds=40), guest('random', seconds=40)
    for g in (seq, rnd):
        g.run_until(3.0)
        g.set_balloon(200 * MIB)
        g.run_until(20.0)
    per_seq = (seq.wall - seq.ops / seq.rate) / max(1, seq.swap_in_pages)
    per_rnd = (rnd.wall - rnd.ops / rnd.rate) / max(1, rnd.swap_in_pages)
    assert per_seq < 0.5 * per_rnd
    assert per_rnd > 0.5 * c.swap_in_io_s


def test_reuse_distances_are_pages_written_after_and_still_in_swap():
    g = guest('seq')
    g.run_until(2.0)
    g.set_balloon((76 + 6 + 100) * MIB)     # 60 MiB of data to swap
    queued = g.queue_pages()
    assert queued == 60 * MIB // 4
    g.take_reuse()
    g.run_until(4.0)     # the shrink's reclaim stalls it first
    hist, n = g.take_reuse()
    assert n > 0
    # a sweep reads back the oldest first: distances just under the queue
    top = max(hist)
    assert (top + 1) * g.bucket_pages >= 0.9 * queued
    extra = reuse.extra_pages(hist, 95, g.bucket_pages)
    assert extra * 4 >= 50 * MIB


def test_referenced_is_what_was_touched_since_the_clear():
    g = guest('load_idle')
    g.run_until(3.0)
    g.clear_refs()
    g.run_until(4.0)
    # the hot 40 MiB and the base's active part
    assert g.referenced_kb() == 40 * MIB + g.layout.base_active_kb


def hot_page_sampler(pages, seed):
    """load_idle after its load (touching its hot 40 MiB), a page
    sampler of ``pages`` on it, and the part of the guest's frames that
    hot set and the base's active part are."""
    g = guest('load_idle')
    g.run_until(3.0)
    clock = model_run.Clock()
    s = model_run.ModelPageSampler(g, clock, pages,
                                   np.random.default_rng(seed))
    frac = (40 * MIB + g.layout.base_active_kb) / g.layout.booked_kb
    return g, clock, s, frac


def test_page_sampler_reads_a_binomial_count_of_the_frames_touched():
    # load_idle after its load touches the hot 40 MiB: with n pages of
    # the 256 MiB guest RAM the count is binomial around n x K / N, and
    # re-reads of one draw never fall (the same frames, cumulative)
    g, clock, s, frac = hot_page_sampler(400, seed=7)
    assert not s.capability(None, None).exact and s.can_peek
    counts = []
    for i in range(200):
        clock.now = 3.0 + i
        s.begin(None, None)
        g.run_until(clock.now + 0.5)
        first = s.peek(None, None)
        g.run_until(clock.now + 1.0)
        clock.now += 1.0
        second = s.end(None, None)
        assert second.accessed >= first.accessed
        assert second.sampled == 400 and second.referenced_kb is None
        counts.append(second.accessed)
    mean = np.mean(counts)
    sd = np.sqrt(400 * frac * (1 - frac))
    assert abs(mean - 400 * frac) < 4 * sd / np.sqrt(len(counts))
    assert 0.6 * sd < np.std(counts) < 1.4 * sd


def test_page_sampler_short_set_sees_only_what_came_after_its_clear():
    g, clock, s, frac = hot_page_sampler(100, seed=1)
    with pytest.raises(model_run.sampling_base.SamplerError):
        s.begin_short(None, None, 400)
    clock.now = 3.0
    s.begin(None, None)
    g.run_until(4.0)
    clock.now = 4.0
    s.begin_short(None, None, 4000)
    # at its clear only the base's active part (the model counts it as
    # touched in any interval, as smaps's reading does)
    base = g.layout.base_active_kb / g.layout.booked_kb
    assert abs(s.peek_short(None, None).accessed / 4000 - base) < 0.01
    g.run_until(5.0)
    clock.now = 5.0
    short = s.peek_short(None, None)
    assert short.sampled == 4000 and short.interval_s == 1.0
    assert abs(short.accessed / 4000 - frac) < 0.03
    # a new interval of the main set drops the short one
    s.begin(None, None)
    assert s.peek_short(None, None) is None


def test_a_case_can_run_on_the_page_sampler():
    case = dict(pattern='load_idle', seconds=60.0, seed=0)
    smaps = model_run.run_case(model_run.Case(**case))
    pages = model_run.run_case(model_run.Case(
        options=('sampler=pages',), **case), keep_rows=True)
    assert pages['options'] == ['sampler=pages']
    # the agent's rounds ran on it and gave memory back
    assert any(r.get('badis') for r in pages['rows'])
    assert pages['saved_pct'] > 5
    assert (pages['saved_pct'], pages['ops']) != (smaps['saved_pct'],
                                                  smaps['ops'])
    with pytest.raises(ValueError):
        model_run.split_options(('sampler=none',))
    assert model_run.split_options(('sampler=pages', 'ws_curve=true')) == (
        'pages', ('ws_curve=true',))


def test_layout_refuses_nonsense():
    with pytest.raises(ValueError):
        gm.Layout(base_kb=300 * MIB)
    with pytest.raises(ValueError):
        gm.Layout(base_active_kb=100 * MIB)


def test_the_agent_loop_saves_on_load_idle_and_the_oracle_more():
    # 90 s: the calibration probes' descent starts after a read over
    # four rounds (calibration_probe_warm_rounds, stop 61), and 60 s
    # left 12 % saved (15 % before it); 90 s save 24 %
    case = dict(pattern='load_idle', seconds=90.0, seed=1)
    none = model_run.run_case(model_run.Case(estimator='none', **case))
    bad = model_run.run_case(model_run.Case(estimator='badis', **case),
                             keep_rows=True)
    orc = model_run.run_case(model_run.Case(estimator='oracle', **case))
    assert none['saved_pct'] == 0.0 and none['swap_in_mib'] == 0
    assert bad['saved_pct'] > 20
    assert orc['saved_pct'] > bad['saved_pct']
    # the agent's own rounds ran: modes and events recorded
    assert {r.get('mode') for r in bad['rows']} & {'V', 'VG', 'G'}
    assert bad['ops'] <= none['ops']
    # and the figure the controller packs on, scored both ways: a floor
    # only ever raises it, so it is never shorter with the floor
    assert any(r.get('max_avg_kb') for r in bad['rows'])
    assert bad['pack_floor_short'] <= bad['pack_max_avg_short']
    assert bad['pack_floor_over'] >= bad['pack_max_avg_over']


def test_options_reach_badis_and_the_same_seed_is_the_same_guest():
    case = dict(pattern='zipf1.2', seconds=20.0, seed=3)
    a = model_run.run_case(model_run.Case(**case))
    b = model_run.run_case(model_run.Case(**case))
    assert a['ops'] == b['ops'] and a['saved_pct'] == b['saved_pct']
    # (since stop 62 the first 20 s of zipf1.2 are its load, the balloon
    # held through it: a larger headroom shows in them)
    held = model_run.run_case(model_run.Case(
        options=('headroom_kb=65536',), **case))
    assert held['saved_pct'] != a['saved_pct'] or held['ops'] != a['ops']


def test_a_case_at_another_size_scales_the_guest_and_its_data():
    # the suite off the size it was tuned on (256 MiB, 160 MiB of data):
    # the balloon starts at the new booking, the load is the new data and
    # the hot quarter of it is what load-then-idle keeps touching
    rows = model_run.run_case(model_run.Case(
        pattern='load_idle', estimator='oracle', seconds=20.0,
        booked_mib=512, data_mib=320), keep_rows=True)['rows']
    assert rows[0]['balloon_kb'] == 512 * MIB
    truths = [r['truth_kb'] for r in rows if r['truth_kb']]
    base = gm.Layout().base_kb
    assert max(truths) == base + 320 * MIB
    assert truths[-1] == base + 80 * MIB


def test_a_key_value_store_read_slowly_at_random():
    # the model's ``kv`` (stop 62): 90 MiB filled and then read at random
    # at redis-on-TCG's rate, one round seeing a tenth of it. Its load
    # is the first pass (7 s at 3200 touches/s); from boot the agent
    # calibrates during it
    assert 'kv' in model_run.pattern_names()
    case = dict(pattern='kv', seconds=40.0, seed=0)
    none = model_run.run_case(model_run.Case(estimator='none', **case))
    assert none['swap_in_mib'] == 0
    off = model_run.run_case(model_run.Case(
        options=('calibration_follow_rounds=0',), **case))
    on = model_run.run_case(model_run.Case(
        options=('calibration_follow_rounds=5',), **case))
    # calibrated during the load, the correction misses what came after
    # and the descent goes into the data; calibrated again as the guest
    # grows, it stops above it
    assert off['swap_in_mib'] > 10
    assert on['swap_in_mib'] == 0 and on['saved_pct'] > 15
    assert on['ops'] > off['ops']


def test_a_loading_program_loads_in_order_then_follows_its_pattern():
    # References(load=True) (stop 90): a database fills its table in
    # address order before its skewed lookups; without it Zipf touches
    # its ranks from the first page on
    rng = np.random.default_rng(0)
    size = 100 * MIB // 4
    refs = gm.References(workloads.Pattern('zipf', exponent=15 / 16),
                         [workloads.Step(100, 10)], rng, load=True)
    first = refs.take(size, 0.0)
    assert (first == np.arange(size)).all() and refs.loaded_at == 0.0
    after = refs.take(100000, 1.0)
    _, counts = np.unique(after, return_counts=True)
    assert len(counts) < 0.75 * size
    assert np.sort(counts)[-size // 10:].sum() > 0.5 * len(after)
    plain = gm.References(workloads.Pattern('zipf', exponent=15 / 16),
                          [workloads.Step(100, 10)],
                          np.random.default_rng(0))
    assert not (plain.take(size, 0.0) == np.arange(size)).all()


def test_the_sqlite_patterns_of_the_model():
    # db16 / db16_fast: the TCG bed's sqlite16 programs (105 MiB table,
    # 1 560 and 40 000 lookups/s, two pages each)
    assert {'db16', 'db16_fast'} <= set(model_run.pattern_names())
    case = model_run.Case(pattern='db16', seconds=30.0)
    pattern, steps = model_run.schedule(case)
    assert pattern.kind == 'zipf' and pattern.exponent == 15 / 16
    assert steps[0].mib == 105
    assert model_run.touch_rate(case) == 3120
    assert model_run.touch_rate(
        model_run.Case(pattern='db16_fast')) == 80000
    assert model_run.touch_rate(model_run.Case(pattern='zipf0.8')) is None
    none = model_run.run_case(model_run.Case(estimator='none', pattern='db16',
                                             seconds=30.0))
    assert none['swap_in_mib'] == 0 and none['ops'] > 0


def test_production_timing_polls_and_rounds_on_the_agents_defaults():
    bench = model_run.agent_conf()
    prod = model_run.agent_conf(timing='production')
    assert bench.badis.round_interval == 1.0
    assert prod.badis.round_interval == 60.0 and prod.badis.time_slice == 3600
    # sizes stay the bench's (scaled to the guest), not production's
    assert prod.badis.headroom_kb == bench.badis.headroom_kb
    with pytest.raises(ValueError, match='unknown timing'):
        model_run.agent_conf(timing='fast')
    with pytest.raises(ValueError, match='unknown timing'):
        model_run.run_case(model_run.Case(pattern='seq', estimator='none',
                                          seconds=1.0, timing='fast'))
    # load-then-idle: the data loaded at once, then a quarter of it touched
    # every poll; the estimate changes only at a round, 60 s apart (no
    # swap activity to run one between), and polls are 5 s apart
    r = model_run.run_case(model_run.Case(
        pattern='load_idle', seconds=400.0, seed=1, timing='production'),
        keep_rows=True)
    rows = r['rows']
    assert r['timing'] == 'production'
    assert {round(b['t'] - a['t'], 6) for a, b in zip(rows, rows[1:])} == {
        5.0}
    changed = [b['t'] for a, b in zip(rows, rows[1:])
               if b.get('badis') != a.get('badis')]
    assert len(changed) >= 2
    assert min(b - a for a, b in zip(changed, changed[1:])) >= 54.0
    assert r['allow_S_more'] >= 0.0 and r['allow_S_less'] >= 0.0
