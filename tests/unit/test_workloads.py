import pytest

from memmut.evaluation import workloads


def test_every_shape_expands_to_positive_steps_reaching_the_peak():
    for shape in workloads.SHAPES:
        steps = workloads.shape_schedule(shape, 200, 5)
        assert all(s.mib > 0 and s.seconds == 5 for s in steps)
        assert max(s.mib for s in steps) == 200


def test_shapes_have_their_documented_trends():
    mibs = {k: [s.mib for s in workloads.shape_schedule(k, 100, 1)]
            for k in workloads.SHAPES}
    assert mibs['W1'] == sorted(mibs['W1'])
    assert mibs['W2'] == sorted(mibs['W2'], reverse=True)
    top = mibs['W3'].index(100)
    assert 0 < top < len(mibs['W3']) - 1
    bottom = mibs['W4'].index(min(mibs['W4']))
    assert 0 < bottom < len(mibs['W4']) - 1
    w5 = mibs['W5']
    assert all((b - a) * (c - b) < 0 for a, b, c in zip(w5, w5[1:], w5[2:]))


def test_encode_decode_round_trip():
    steps = workloads.shape_schedule('W3', 300, 2.5)
    text = workloads.encode(steps)
    assert text.startswith('60x2.5,150x2.5')
    assert workloads.decode(text) == steps


@pytest.mark.parametrize('bad', ['', '10', 'x5', '10x', '10x0', 'ax1',
                                 '10x-1', '-1x3'])
def test_decode_rejects_bad_steps(bad):
    with pytest.raises(workloads.ScheduleError):
        workloads.decode(bad)


def test_unknown_shape_is_a_clear_error():
    with pytest.raises(workloads.ScheduleError, match='unknown workload'):
        workloads.shape_schedule('W9', 100, 1)


def test_wss_at_follows_steps_and_repeats():
    steps = [workloads.Step(10, 2), workloads.Step(20, 3)]
    assert workloads.wss_at(steps, 0) == 10
    assert workloads.wss_at(steps, 1.99) == 10
    assert workloads.wss_at(steps, 2) == 20
    assert workloads.wss_at(steps, 5) == 10       # looped
    assert workloads.wss_at(steps, 50, repeat=False) == 20


@pytest.mark.parametrize('text', ['seq', 'random', 'zipf:0.8', 'zipf:1.2',
                                  'hotset:32:5', 'hotset:32:2.5',
                                  'load_idle', 'load_idle:50', 'scan:40:30',
                                  'scan:40:2.5'])
def test_pattern_round_trip(text):
    assert workloads.parse_pattern(text).encode() == text


@pytest.mark.parametrize('bad', ['', 'sequential', 'seq:1', 'zipf',
                                 'zipf:0', 'zipf:-1', 'zipf:a',
                                 'hotset:32', 'hotset:0:5', 'hotset:32:0',
                                 'hotset:a:5', 'load_idle:0', 'load_idle:x',
                                 'load_idle:1:2', 'random:3', 'scan',
                                 'scan:40', 'scan:0:30', 'scan:40:0',
                                 'scan:40:30:1', 'scan:x:30'])
def test_bad_patterns_are_clear_errors(bad):
    with pytest.raises(workloads.ScheduleError):
        workloads.parse_pattern(bad)


def test_true_wss_of_patterns():
    steps = [workloads.Step(200, 10), workloads.Step(100, 10)]
    p = workloads.parse_pattern
    assert workloads.true_wss_mib(steps, 5) == 200
    assert workloads.true_wss_mib(steps, 5, p('random')) == 200
    assert workloads.true_wss_mib(steps, 15, p('random')) == 100
    # a window moving faster than the swap-in bound (25 MiB/s): the step
    assert workloads.true_wss_mib(steps, 5, p('hotset:50:2')) == 200
    assert workloads.true_wss_mib(steps, 5, p('hotset:50:100')) == 50
    assert p('hotset:50:2').hot_of(200, bound_mib_s=30) == 50
    assert workloads.true_wss_mib(steps, 5, p('load_idle')) == 50
    assert workloads.true_wss_mib(steps, 15, p('load_idle')) == 25
    assert workloads.true_wss_mib(steps, 15, p('load_idle:150')) == 100
    # a full sweep every scan_s: the hot part and as much of the rest as
    # keeps the read-back under the bound (1 MiB/s)
    assert workloads.true_wss_mib(steps, 5, p('scan:50:400')) == 50
    assert workloads.true_wss_mib(steps, 5, p('scan:50:40')) == 160
    assert workloads.true_wss_mib(steps, 5, p('scan:50:1')) == 199
    assert workloads.true_wss_mib(steps, 15, p('scan:150:40')) == 100
    assert p('scan:50:40').hot_of(200, bound_mib_s=10) == 50
    assert workloads.true_wss_mib(steps, 5, p('zipf:1')) is None
    assert not p('zipf:1').well_defined and p('hotset:5:1').well_defined


def test_pattern_suite_is_valid_for_memwork():
    suite = workloads.pattern_suite(160, 60)
    assert {'seq', 'random', 'hotset', 'load_idle', 'phases'} <= set(suite)
    assert sum(1 for p, _ in suite.values() if p.kind == 'zipf') >= 2
    for pattern, steps in suite.values():
        assert workloads.parse_pattern(pattern.encode()) == pattern
        assert workloads.decode(workloads.encode(steps)) == steps
        assert workloads.duration(steps) == pytest.approx(60, abs=0.01)


def test_held_out_suite_is_valid_for_memwork_and_new():
    suite = workloads.pattern_suite(160, 60)
    held = workloads.held_out_suite(160, 60)
    assert not set(held) & set(suite)
    for name, (pattern, steps) in held.items():
        assert workloads.parse_pattern(pattern.encode()) == pattern
        assert workloads.decode(workloads.encode(steps)) == steps
        assert workloads.duration(steps) == pytest.approx(60, abs=0.01)
        # parameters the suite does not use (its own are tuned on)
        assert (pattern, steps) not in suite.values(), name
    # at the suite's 120 s runs a slow hot set's working set is its
    # window, a small fast one's the whole data (see Pattern.hot_of)
    held = workloads.held_out_suite(160, 120)
    assert held['hotset_slow'][0].hot_of(160) == 40
    assert held['hotset_small'][0].hot_of(160) == 160
    assert held['phases_up'][1][0].mib < held['phases_up'][1][-1].mib
    growth = [st.mib for st in held['growth'][1]]
    assert growth == sorted(growth) and growth[-1] == 160
    assert len(growth) == 8 and growth[0] == 20
    periodic = [st.mib for st in held['periodic'][1]]
    assert periodic == [40, 160] * 3
    # a sweep every 40 s of the bench's run reads back over the bound
    # unless most of the data stays; at production's 2 h, the quarter
    assert held['scan'][0].hot_of(160) == 120
    prod = workloads.held_out_suite(320, 7200)['scan'][0]
    assert prod.hot_of(320) == 80 and prod.scan_s == 2400


def test_named_pattern_knows_both_suites_and_refuses_others():
    assert workloads.named_pattern('phases', 160, 60) == \
        workloads.pattern_suite(160, 60)['phases']
    assert workloads.named_pattern('zipf1.0', 160, 60)[0].exponent == 1.0
    assert 'hotset_small' in workloads.suite_names()
    with pytest.raises(workloads.ScheduleError, match='unknown pattern'):
        workloads.named_pattern('zipf9', 160, 60)
