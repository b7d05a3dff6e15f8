"""The simulator's modelling rules on hand-made traces."""

import dataclasses
import json
import os

import numpy as np
import pytest

from memmut.consolidation import loader
from memmut.consolidation import planner
from memmut.simulator import engine
from memmut.simulator import quality
from memmut.simulator import synthetic

from tests.unit.simulator.test_engine import GIB
from tests.unit.simulator.test_engine import make_trace


# -- rounds every interval ---------------------------------------------------


def test_round_steps():
    assert engine.round_steps(11, 20, 300.0, 300.0) == list(range(11, 20))
    assert engine.round_steps(11, 30, 300.0, 1800.0) == [11, 17, 23, 29]
    # an interval that is not a multiple of the step: first step at or
    # after each multiple
    assert engine.round_steps(0, 8, 300.0, 700.0) == [0, 3, 5, 7]


def test_interval_changes_the_run():
    # small hosts (20 GHz) so that CPU bursts make work for the rounds
    t = synthetic.generate(n_vms=40, days=1.0, seed=1)
    hosts = engine.HostModel(cpu_mhz=20000.0)
    neat = loader.AlgorithmSpec.neat()
    # (Neat's planner: no migration budget to level the two runs' counts)
    plan = planner.PlanParams(spec=neat, migration_budget=0)
    a, _ = engine.simulate(t, 'wss', engine.Settings(
        hosts=hosts, spec=neat, plan=plan, interval=300.0))
    b, sb = engine.simulate(t, 'wss', engine.Settings(
        hosts=hosts, spec=neat, plan=plan, interval=1800.0))
    assert a['intervals'] == b['intervals'] == a['rounds']
    assert b['rounds'] == -(-a['rounds'] // 6)
    # migrations are only planned at round steps
    planned = np.flatnonzero(sb['migrations'])
    assert all(p % 6 == 0 for p in planned)
    assert b['migrations'] < a['migrations']
    # planning on every trace step's history (finer than the controller
    # has at 1800 s), a sixth of the rounds planned under a third of
    # the moves
    c, _ = engine.simulate(t, 'wss', engine.Settings(
        hosts=hosts, spec=neat, plan=plan, interval=1800.0,
        history_resolution='trace'))
    assert c['rounds'] == b['rounds']
    assert c['migrations'] < a['migrations'] / 3 < b['migrations']


def test_a_later_start_is_warm():
    # 1 GiB for 30 steps then 3 GiB: starting at step 35 the packing
    # already knows the 3 GiB (no booking, no first-hour warm-up)
    mem = np.ones((1, 60))
    mem[0, 30:] = 3.0
    t = make_trace(mem, [8])
    m, series = engine.simulate(t, 'wss', engine.Settings(
        start_steps=45, duration_steps=10))
    assert m['intervals'] == 10
    assert series['allocated_memory_mb'].tolist() == [3.15 * GIB] * 10
    assert m['shortfall_vm_interval_fraction'] == 0.0


def test_interval_must_be_positive():
    with pytest.raises(ValueError):
        engine.Settings(interval=0.0)


# -- shortfall ---------------------------------------------------------------


def test_shortfall_is_use_above_the_balloon_at_the_next_sample():
    # One VM: 1 GiB for 30 steps, then 3 GiB. Packed on WSS^max_avg
    # (1 GiB) + 5 % when the jump comes: the first interval after it is
    # short by 3 - 1.05 GiB; the moving average then catches up over the
    # next samples (n = 5), each still short by less.
    mem = np.ones((1, 40))
    mem[0, 30:] = 3.0
    t = make_trace(mem, [8])
    m, series = engine.simulate(t, 'wss')
    s = series['shortfall_mb']
    k = int(np.flatnonzero(s)[0])
    assert series['time_h'][k] == pytest.approx((30 - 11) * 300 / 3600.0)
    assert s[k] == pytest.approx((3 - 1.05) * GIB)
    assert np.all(np.diff(s[k:k + 4]) < 0) and s[k + 5:].sum() == 0
    assert m['shortfall_vm_interval_fraction'] == pytest.approx(
        np.count_nonzero(s) / len(s))
    assert m['shortfall_vms_fraction'] == 1.0
    assert m['shortfall_gib_hours'] == pytest.approx(
        s.sum() / GIB * 300 / 3600.0)
    b, _ = engine.simulate(t, 'booked')
    assert b['shortfall_vm_interval_fraction'] == 0.0


def test_shortfall_function():
    a = np.array([[1.0, 2.0], [3.0, 3.0]])
    u = np.array([[2.0, 1.0], [5.0, 9.0]])
    ok = np.array([[True, True], [True, False]])
    assert engine.shortfall(a, u, ok).tolist() == [[1, 0], [2, 0]]


# -- missing readings --------------------------------------------------------


def test_zero_readings_are_carried_for_a_bounded_time():
    mem = np.array([[0.0, 2, 0, 0, 3, 0, 0, 0, 0, 0, 5]]) * GIB
    t = make_trace(mem / GIB, [8])
    c = quality.clean_memory(t, carry_seconds=600.0)     # 2 samples
    assert (c.mem[0] / GIB).tolist() == [2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 5]
    # two carried after the 2 and after the 3; the rest unknown
    assert c.missing == 8 and c.carried == 4 and c.unknown == 4
    assert c.known[0].tolist() == [False, True, True, True, True, True,
                                   True, False, False, False, True]
    c0 = quality.clean_memory(t, carry_seconds=0.0)
    assert c0.carried == 0 and c0.unknown == 8
    mem2 = np.array([[4.0, 0, 0, 0, 1, 0, 0, 0]])
    c2 = quality.clean_memory(make_trace(mem2, [8]), carry_seconds=300.0)
    assert (c2.mem[0] / GIB).tolist() == [4, 4, 4, 4, 1, 1, 1, 1]
    assert c2.known[0].tolist() == [True, True, False, False, True, True,
                                    False, False]


def test_missing_slots_from_the_loader_count_as_missing():
    t = make_trace(np.full((1, 6), 2.0), [8])
    t.mem_valid = np.array([[True, False, False, True, True, True]])
    c = quality.clean_memory(t, carry_seconds=3600.0)
    assert c.missing == 2 and c.carried == 2


def test_a_vm_without_any_reading_uses_its_booking():
    t = make_trace(np.zeros((2, 5)) + [[0], [1]], [8, 8])
    c = quality.clean_memory(t)
    assert (c.mem[0] / GIB).tolist() == [8] * 5
    assert c.vms_without_reading == 1 and c.summary()['missing_fraction'] \
        == 0.5


def test_zero_readings_are_not_zero_working_sets_in_the_run():
    # A VM whose readings drop to 0 would be packed on almost nothing;
    # with the rule it keeps its 4 GiB, and the counts are reported.
    mem = np.full((1, 40), 4.0)
    mem[0, 20:23] = 0.0
    t = make_trace(mem, [8])
    m, series = engine.simulate(t, 'wss')
    assert m['readings']['missing_readings'] == 3
    assert m['readings']['carried_forward'] == 3
    assert series['allocated_memory_mb'].min() == pytest.approx(4.2 * GIB)


# -- estimator error ---------------------------------------------------------


def test_lag_shifts_the_estimate():
    mem = np.arange(1.0, 9.0)[None, :]
    model = quality.ErrorModel(lag=2)
    est = model.apply(mem, np.array([0]))
    assert est.tolist() == [[1, 1, 1, 2, 3, 4, 5, 6]]


def test_relative_error_has_the_asked_spread_and_is_seeded():
    mem = np.full((200, 500), 1000.0)
    model = quality.ErrorModel(relative_sd=0.2, seed=4)
    a = model.apply(mem, np.zeros(200, dtype=int))
    assert np.std(a / 1000.0 - 1) == pytest.approx(0.2, rel=0.02)
    assert np.array_equal(a, model.apply(mem, np.zeros(200, dtype=int)))
    assert a.min() >= 0


def test_error_injection_shows_in_the_shortfall():
    t = synthetic.generate(n_vms=30, days=1.0, seed=2)
    clean, _ = engine.simulate(t, 'wss')
    noisy, _ = engine.simulate(t, 'wss', engine.Settings(
        wss_error=quality.ErrorModel(relative_sd=0.3, lag=3)))
    assert noisy['shortfall_vm_interval_fraction'] > \
        clean['shortfall_vm_interval_fraction']
    assert noisy['wss_error']['lag_samples'] == 3
    assert clean['wss_error']['source'] == 'none'
    b1, _ = engine.simulate(t, 'booked')
    b2, _ = engine.simulate(t, 'booked', engine.Settings(
        wss_error=quality.ErrorModel(relative_sd=0.3)))
    assert b1['avg_active_hosts'] == b2['avg_active_hosts']


def write_badis(tmp_path, lag_polls=2):
    truth = [100000 + 20000 * (i // 10 % 2) for i in range(60)]
    rows = []
    for i, tr in enumerate(truth):
        r = {'t': i * 0.5, 'truth_kb': tr, 'balloon_kb': 262144}
        if i >= lag_polls:
            r['badis'] = truth[i - lag_polls] * (1.1 if i % 2 else 0.95)
        rows.append(r)
    with open(tmp_path / 'badis.jsonl', 'w') as f:
        f.write(json.dumps({'estimator': 'none', 'rows': rows}) + '\n')
        f.write(json.dumps({'estimator': 'badis', 'rows': rows}) + '\n')
    with open(tmp_path / 'badis.json', 'w') as f:
        json.dump({'setup': {'poll_s': 0.5, 'agent_options': {
            'badis': {'round_interval': 1.0}}}}, f)
    return str(tmp_path / 'badis.json')


def test_error_model_from_badis_results(tmp_path):
    path = write_badis(tmp_path, lag_polls=2)
    model = quality.error_model_from_file(path)
    # 2 polls of 0.5 s = 1 round of 1 s = 1 sample
    assert model.lag == 1
    assert sorted(set(round(x, 6) for x in model.samples)) == [-0.05, 0.1]
    assert 'lag 2 polls' in model.source
    parsed = quality.parse_error(path, lag=4)
    assert parsed.lag == 4 and parsed.samples == model.samples
    assert quality.parse_error('0.1').relative_sd == 0.1
    assert not quality.parse_error('').active


def test_error_file_errors(tmp_path):
    with pytest.raises(ValueError, match='do not exist'):
        quality.parse_error(str(tmp_path / 'nope.json'))
    (tmp_path / 'x.json').write_text('{}')
    with pytest.raises(ValueError, match='per-poll records'):
        quality.error_model_from_file(str(tmp_path / 'x.json'))
    (tmp_path / 'y.jsonl').write_text('{"estimator": "other"}\n')
    with pytest.raises(ValueError, match='no badis run'):
        quality.error_model_from_file(str(tmp_path / 'y.jsonl'))


def test_real_badis_results_give_a_model():
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))))
    model = quality.error_model_from_file(os.path.join(
        root, 'tests', 'benchmarks', 'results', 'badis.json'))
    d = model.describe()
    assert d['error_samples'] > 100 and 0 < d['mean_abs_relative_error'] < 1


# -- lower bound -------------------------------------------------------------


def test_lower_bound_hand_worked():
    cpu = np.array([[50.0, 10], [60, 10], [0, 10]])
    mem = np.array([[100.0, 10], [100, 10], [100, 500]])
    alive = np.array([[True, True], [True, True], [True, False]])
    lb, lc, lm = quality.lower_bound(cpu, mem, alive, 100.0, 256.0)
    assert lc.tolist() == [2, 1] and lm.tolist() == [2, 1]
    assert lb.tolist() == [2, 1]
    lb, lc, lm = quality.lower_bound(cpu, mem * 2, alive, 100.0, 256.0)
    assert lb.tolist() == [3, 1]


def test_runs_report_the_lower_bound():
    # 4 VMs booked 100 GiB: booked bound ceil(400/256) = 2, which the
    # packing reaches; on WSS the bound is 1.
    t = make_trace(np.ones((4, 40)), [100] * 4)
    b, sb = engine.simulate(t, 'booked')
    w, _ = engine.simulate(t, 'wss')
    assert b['lower_bound_hosts'] == 2.0 and w['lower_bound_hosts'] == 1.0
    assert b['lower_bound_memory_hosts'] == 2.0
    assert b['lower_bound_cpu_hosts'] == 1.0
    assert b['active_over_lower_bound'] == 1.0
    assert engine.compare({'booked': b, 'wss': w})[
        'lower_bound_ratio_booked_over_wss'] == 2.0
    assert sb['lower_bound'].tolist() == [2.0] * b['intervals']


def test_target_and_held_bounds_hand_worked():
    cpu = np.array([[50.0, 10, 30], [60, 10, 30]])
    mem = np.array([[100.0, 10, 10], [100, 10, 10]])
    alive = np.ones((2, 3), dtype=bool)
    # per step at 100 %: CPU 110, 20, 60 of 100 -> 2, 1, 1
    assert quality.lower_bound(cpu, mem, alive, 100.0, 256.0)[0].tolist() \
        == [2, 1, 1]
    # filled to 50 % of CPU: 110/50, 20/50, 60/50 -> 3, 1, 2; memory
    # at 80 %: 200 of 204.8 -> 1
    lt = quality.target_lower_bound(cpu, mem, alive, 100.0, 256.0, 0.5,
                                    0.8)
    assert lt.tolist() == [3, 1, 2]
    # memory binding at 70 %: 200 > 179.2 -> 2 hosts at step 0
    assert quality.target_lower_bound(cpu, mem, alive, 100.0, 256.0, 1.0,
                                      0.7).tolist() == [2, 1, 1]
    # held over blocks of 2 steps: [3, 3], [2]
    assert quality.held_lower_bound(lt, 2).tolist() == [3, 3, 2]
    assert quality.held_lower_bound(lt, 1).tolist() == [3, 1, 2]
    assert quality.held_lower_bound(lt, 5).tolist() == [3, 3, 3]
    with pytest.raises(ValueError):
        quality.held_lower_bound(lt, 0)
    with pytest.raises(ValueError):
        quality.target_lower_bound(cpu, mem, alive, 100.0, 256.0, 0, 1)


def test_runs_report_the_fairer_bounds():
    # CPU 0.5 of a host per VM, 4 VMs: 2 hosts at 100 %; at the default
    # placement's 0.8 target, ceil(2 / 0.8) = 3.
    cap = engine.HostModel().cpu_mhz
    t = make_trace(np.ones((4, 40)), [100] * 4)
    t = dataclasses.replace(t, cpu=np.full((4, 40), cap / 2),
                            cpu_capacity=np.full(4, cap))
    w, _ = engine.simulate(t, 'wss')
    assert w['lower_bound_hosts'] == 2.0
    assert w['lower_bound_targets'] == [0.8, 0.95]
    assert w['lower_bound_target_hosts'] == 3.0
    assert w['lower_bound_held_hosts'] == 3.0
