"""The consolidation benchmark's main run: steady state, issue 19 goals."""

import json
import os

from memmut.simulator import engine
from tests.benchmarks import bench_consolidation as bench

ARGS = ['--synthetic-only', '--repeats', '2', '--synthetic-vms', '40',
        '--skip-scaling']


def _run(tmp_path, *extra):
    out = tmp_path / 'out'
    rc = bench.main(ARGS + ['--out', str(out)] + list(extra))
    with open(out / 'consolidation.json') as f:
        return rc, json.load(f), (out / 'consolidation.md').read_text()


def test_synthetic_repeat_starts_after_its_warm_days():
    settings = engine.Settings()
    tr, s = bench.synthetic_repeat(3, 10, 1.0, settings)
    day = int(round(86400.0 / tr.step))
    assert tr.n_steps == 3 * day
    assert (s.start_steps, s.duration_steps) == (day, 2 * day)
    tr, s = bench.synthetic_repeat(3, 10, 0.0, settings)
    assert tr.n_steps == 2 * day and s is settings


def test_steady_state_by_default(tmp_path):
    rc, res, md = _run(tmp_path)
    assert rc == 0
    assert (res['burn_in_days'], res['warm_days']) == (1.0, 1.0)
    day = int(round(86400.0 / 300.0))
    for r in res['sources']['synthetic']['repeats']:
        for mode in engine.MODES:
            # the burn-in ran before the accounted start, from the
            # trace's first hour-long WSS time slice on
            assert day - 12 <= r['detail'][mode][
                'burn_in_intervals'] <= day
    for key in ('migrations_per_vm_day_wss', 'cpu_overload_time_wss',
                'above_lower_bound_wss', 'memory_caused_share_wss'):
        assert key in res['goals']
    summ = res['sources']['synthetic']['summary']
    for key in ('wss_mig_vm_day', 'booked_mig_vm_day', 'wss_esv',
                'booked_esv', 'wss_over_lb_pct'):
        assert summ[key]['n'] == 2
    assert 'Steady state' in md and 'WSS: migrations per VM-day' in md


def test_cold_start_on_request(tmp_path):
    rc, res, md = _run(tmp_path, '--burn-in-days', '0', '--warm-days', '0')
    assert rc == 0
    for r in res['sources']['synthetic']['repeats']:
        assert r['detail']['wss']['burn_in_intervals'] == 0
    assert 'Cold start' in md


def test_bad_days_are_a_clear_error(tmp_path, capsys):
    rc = bench.main(ARGS + ['--out', str(tmp_path), '--burn-in-days', '-1'])
    assert rc == 2
    assert '--burn-in-days must be >= 0' in capsys.readouterr().err
    assert not os.path.exists(tmp_path / 'consolidation.json')
    rc = bench.main(ARGS + ['--out', str(tmp_path), '--window-days', '0'])
    assert rc == 2
    assert '--window-days must be positive' in capsys.readouterr().err


def test_the_markdown_names_cold_start_only_when_run(tmp_path):
    # synthetic only: no real windows, so no cold_start column
    rc, res, md = _run(tmp_path)
    assert rc == 0 and '"cold_start"' not in md
    block = res['sources']['synthetic']
    res['sources']['bitbrains'] = dict(
        block, description='windows',
        variants={'cold_start': {'summary': block['summary']}})
    assert '"cold_start"' in bench.markdown(res)
