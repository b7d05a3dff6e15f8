"""Migrations that take time: duration, concurrency, spill."""

import numpy as np
import pytest

from memmut.consolidation import loader
from memmut.simulator import engine
from memmut.simulator import migration
from memmut.simulator import trace as tr

from tests.unit.simulator.test_engine import make_trace


def run(sched, t0, t1):
    done = []
    out = sched.advance(t0, t1, done.append)
    return out, done


def test_duration_is_size_over_bandwidth():
    s = migration.Scheduler(bandwidth_mb_s=10.0)
    m = s.add(vm=0, source=0, destination=1, size_mb=600.0, now=0.0)
    assert m.duration == 60.0
    out, done = run(s, 0.0, 300.0)
    assert done == [m] and m.start == 0.0 and m.end == 60.0
    (o,) = out
    assert o.done and o.copy == pytest.approx(0.2)
    assert o.before == pytest.approx(0.2)


def test_one_migration_per_host_at_a_time_and_spill():
    # 15 VMs leave host 0, 59 s each at concurrency 1: 885 s, three
    # 300 s windows; at concurrency 3 they end within the first.
    s = migration.Scheduler(10.0, concurrency=1)
    for v in range(15):
        s.add(v, 0, 1 + v, 590.0, 0.0)
    out, done = run(s, 0.0, 300.0)
    assert len(done) == 5 and len(s.in_flight) == 10
    assert [m.start for m in done] == [0, 59, 118, 177, 236]
    out, done = run(s, 300.0, 600.0)
    assert len(done) == 5
    out, done = run(s, 600.0, 900.0)
    assert len(done) == 5 and not s.in_flight
    s3 = migration.Scheduler(10.0, concurrency=3)
    for v in range(15):
        s3.add(v, 0, 1 + v, 590.0, 0.0)
    _, done = run(s3, 0.0, 300.0)
    assert len(done) == 15


def test_a_destination_receives_from_several_sources_at_once():
    # nova limits the migrations leaving a compute host, not those
    # arriving: three sources send to host 9 together
    s = migration.Scheduler(10.0, concurrency=1)
    ms = [s.add(v, v, 9, 600.0, 0.0) for v in range(3)]
    _, done = run(s, 0.0, 300.0)
    assert done == ms and all(m.start == 0.0 for m in ms)


def test_an_incoming_limit_holds_the_destination_and_others_overtake():
    s = migration.Scheduler(10.0, concurrency=1, incoming=1)
    a = s.add(0, 0, 1, 3000.0, 0.0)       # 0 -> 1, 300 s
    b = s.add(1, 2, 1, 600.0, 0.0)        # 2 -> 1 waits for host 1
    c = s.add(2, 3, 4, 600.0, 0.0)        # other hosts: starts at once
    out, done = run(s, 0.0, 300.0)
    assert c in done and a.start == 0.0 and b.start is None
    (oa,) = [o for o in out if o.migration is a]
    assert not oa.done and oa.before == 1.0 and oa.copy == 1.0
    _, done = run(s, 300.0, 600.0)
    assert a in done and b in done and b.start == 300.0


def test_cancel_frees_the_slots():
    s = migration.Scheduler(10.0)
    s.add(0, 0, 1, 30000.0, 0.0)
    s.add(1, 0, 2, 600.0, 0.0)
    run(s, 0.0, 300.0)
    s.cancel([0])
    _, done = run(s, 300.0, 600.0)
    assert [m.vm for m in done] == [1] and s.cancelled == 1


def test_scheduler_checks_its_arguments():
    with pytest.raises(ValueError):
        migration.Scheduler(0.0)
    with pytest.raises(ValueError):
        migration.Scheduler(10.0, concurrency=0)
    with pytest.raises(ValueError):
        migration.Scheduler(10.0, incoming=-1)
    with pytest.raises(ValueError):
        migration.Scheduler(10.0, parallel=-1)


def test_a_global_limit_runs_the_moves_of_different_hosts_in_turn():
    # memmut's executor at [nova] max_parallel = 1: three moves between
    # six different hosts copy one after the other
    s = migration.Scheduler(10.0, concurrency=1, parallel=1)
    ms = [s.add(v, 2 * v, 2 * v + 1, 600.0, 0.0) for v in range(3)]
    _, done = run(s, 0.0, 300.0)
    assert done == ms and [m.start for m in ms] == [0.0, 60.0, 120.0]
    s2 = migration.Scheduler(10.0, concurrency=1, parallel=2)
    ms = [s2.add(v, 2 * v, 2 * v + 1, 600.0, 0.0) for v in range(3)]
    run(s2, 0.0, 300.0)
    assert [m.start for m in ms] == [0.0, 0.0, 60.0]


def test_a_vm_in_flight_is_not_replanned_and_counts_on_both_hosts():
    # 6 VMs of 10 GiB WSS alone on 6 hosts at first (arriving one per
    # step on a busy CPU), then idle: underload evacuation moves them
    # together. At 10 MB/s each copy of ~10.5 GiB takes ~1075 s, so the
    # moves spill over several rounds; no VM is planned twice.
    steps = 80
    mem = np.full((6, steps), 10.0)
    t = make_trace(mem, [40] * 6, cpu_mhz=100.0)
    t.cpu[:, :20] = 70000.0                 # each needs a host of its own
    # Neat's underload (mean of the last 2 values): the migration-aware
    # one waits for the busy hours to leave its window
    m, series = engine.simulate(t, 'wss', engine.Settings(
        spec=loader.AlgorithmSpec.neat()))
    assert m['migrations'] >= 1
    assert m['migrations_spilled'] >= 1
    assert m['mean_migration_s'] == pytest.approx(10.0 * 1.05 * 1024 / 10,
                                                  rel=0.01)
    # each VM migrates at most once per evacuation it is part of, and
    # never while already in flight: migrations <= VMs
    assert m['migrations'] <= 6
    # planned in one round, then only waited for: rounds during the
    # copies planned nothing more
    assert np.count_nonzero(series['migrations']) == 1
    assert m['migrations_completed'] == m['migrations']
    # they leave different hosts, so nova runs them together; one at a
    # time arriving (a destination link they fill), they wait
    assert m['mean_migration_wait_s'] == 0
    m1, _ = engine.simulate(t, 'wss', engine.Settings(
        spec=loader.AlgorithmSpec.neat(), migration_incoming_concurrency=1))
    assert m1['migrations'] == m['migrations']
    assert m1['mean_migration_wait_s'] > 0
    inflight = series['in_flight']
    assert inflight.max() == m['migrations']
    assert np.all(np.diff(inflight[inflight.argmax():]) <= 0)
    # while copies run the source hosts stay active
    first = np.flatnonzero(series['migrations'])[0]
    assert series['active_hosts'][first] > series['active_hosts'][-1]


def test_instant_network_matches_the_old_model():
    t = make_trace(np.ones((4, 40)), [100] * 4)
    m, _ = engine.simulate(t, 'wss', engine.Settings(bandwidth_mb_s=1e9))
    assert m['migrations_spilled'] == 0 and m['mean_migration_wait_s'] == 0


def test_window_of_a_trace():
    t = make_trace(np.arange(20, dtype=float)[None, :].repeat(2, 0) + 1,
                   [1, 1])
    t.first[1] = 12
    w = t.window(10, 5)
    assert w.n_steps == 5 and w.start == 3000.0
    assert w.first.tolist() == [0, 2] and w.last.tolist() == [4, 4]
    assert w.mem[0].tolist() == [11 * 1024.0 + k * 1024 for k in range(5)]
    with pytest.raises(ValueError):
        t.window(30, 5)
    assert isinstance(w, tr.Trace)


def test_priority_order_relieves_overloads_first():
    # Round 1 queues an underload evacuation of host 0 (two moves); round
    # 2, before they start, an overload of host 2 (load 1.1) and a worse
    # one of host 0 (1.3). In the plan's order the evacuation goes first.
    def queue(order):
        s = migration.Scheduler(10.0, concurrency=1, order=order)
        u1 = s.add(0, 0, 1, 600.0, 0.0, 'underload')
        u2 = s.add(1, 0, 3, 600.0, 0.0, 'underload')
        o1 = s.add(2, 2, 1, 600.0, 0.0, 'overload', 1.1)
        o2 = s.add(3, 0, 4, 600.0, 0.0, 'overload', 1.3)
        run(s, 0.0, 300.0)
        return u1, u2, o1, o2
    u1, u2, o1, o2 = queue('plan')
    # host 1 receives u1 and o1 together (no incoming limit); host 0's
    # worse overload waits behind its evacuation
    assert u1.start == 0 and o1.start == 0
    assert u2.start == 60 and o2.start == 120
    u1, u2, o1, o2 = queue('priority')
    assert o2.start == 0 and o1.start == 0
    # u1 shares host 0 and host 1 with the overload moves: it waits for
    # both to finish even where a slot is free.
    assert u1.start == 60 and u2.start == 120


def test_priority_holds_underload_moves_even_with_free_slots():
    s = migration.Scheduler(10.0, concurrency=4, order='priority')
    u = s.add(0, 0, 1, 600.0, 0.0, 'underload')
    o = s.add(1, 2, 1, 3000.0, 0.0, 'overload', 1.2)
    other = s.add(2, 5, 6, 600.0, 0.0, 'underload')
    run(s, 0.0, 600.0)
    assert o.start == 0 and other.start == 0 and u.start == 300.0
    with pytest.raises(ValueError):
        migration.Scheduler(10.0, order='random')


def test_settings_check_the_move_order():
    assert engine.Settings(move_order='priority_drop').move_order == \
        'priority_drop'
    with pytest.raises(ValueError):
        engine.Settings(move_order='random')


def test_after_execution_pacing_plans_no_round_while_moves_run():
    # The trace of the test above: one round evacuates the hosts with
    # copies of ~1075 s. Paced as memmut's controller, no round runs
    # until they have all ended, and the next one runs an interval
    # later; on the clock, rounds go on during the copies.
    steps = 80
    mem = np.full((6, steps), 10.0)
    t = make_trace(mem, [40] * 6, cpu_mhz=100.0)
    t.cpu[:, :20] = 70000.0

    def rounds(pacing):
        seen = []

        def observer(event, **data):
            if event == 'plan':
                seen.append((data['t'], data['migrations']))
        m, _ = engine.simulate(t, 'wss', engine.Settings(
            spec=loader.AlgorithmSpec.neat(), round_pacing=pacing),
            observer=observer)
        return m, seen

    m_clock, clock = rounds(engine.CLOCK)
    m_exec, paced = rounds(engine.AFTER_EXECUTION)
    assert m_exec['migrations'] == m_clock['migrations'] >= 2
    first = next(i for i, (_, ms) in enumerate(paced) if ms)
    t_plan, moves = paced[first]
    last_end = max(m.end for m in moves)
    assert last_end - t_plan * t.step > 2 * t.step     # spans rounds
    t_next = paced[first + 1][0]
    # the first step at or after the last copy's end plus the interval
    assert (t_next - 1) * t.step < last_end + 300.0 <= t_next * t.step
    assert m_exec['rounds'] < m_clock['rounds']
    # on the clock, every step between had its round
    clock_steps = [s for s, _ in clock]
    assert all(s in clock_steps for s in range(t_plan, t_next))


def test_settings_check_the_round_pacing():
    with pytest.raises(ValueError, match='round_pacing'):
        engine.Settings(round_pacing='sometimes')
