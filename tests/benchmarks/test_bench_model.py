"""The paged guest model's screen (bench_model): its command line and
what one small run writes."""

import json
import os

import pytest

from tests.benchmarks import bench_model as bm


@pytest.mark.parametrize('argv, why', [
    (['--writeback-surplus', '-1'], '--writeback-surplus must be within'),
    (['--writeback-surplus', '17'], '--writeback-surplus must be within'),
    (['--patterns', 'nope'], 'unknown pattern(s) nope'),
    (['--balloon', 'lazy'], "invalid choice: 'lazy'"),
    (['--config', 'none'], 'must be unique and not "none"'),
])
def test_bad_input_is_a_usage_error(tmp_path, capsys, argv, why):
    with pytest.raises(SystemExit) as e:
        bm.main(['--out', str(tmp_path)] + argv)
    assert e.value.code == 2
    assert why in capsys.readouterr().err


def test_a_small_screen_with_the_swap_cache_writes_its_runs(tmp_path):
    out = tmp_path / 'screen'
    rc = bm.main(['--config', 'badis', '--config',
                  'iu probe_in_use_evidence=True', '--patterns', 'load_idle',
                  '--starts', 'loaded', '--seeds', '10', '--seconds', '30',
                  '--reclaim', 'clock', '--writeback-surplus', '2',
                  '--balloon', 'reclaim', '--out', str(out)])
    assert rc == 0
    runs = [json.loads(line) for line in open(out / 'model.jsonl')]
    # the reference, then each configuration, on the same guest
    assert [r['label'] for r in runs] == ['none', 'badis', 'iu']
    assert {r['writeback_surplus'] for r in runs} == {2.0}
    assert {r['balloon'] for r in runs} == {'reclaim'}
    assert runs[2]['options'] == ['probe_in_use_evidence=True']
    assert os.path.exists(out / 'model.md')
    assert '--writeback-surplus 2' in open(out / 'model.md').read()


def test_production_timing_reaches_every_run_and_the_errors_table(tmp_path):
    out = tmp_path / 'prod'
    assert bm.main(['--patterns', 'load_idle', '--starts', 'boot',
                    '--seeds', '1', '--seconds', '240', '--timing',
                    'production', '--out', str(out)]) == 0
    runs = [json.loads(line) for line in open(out / 'model.jsonl')]
    assert {r['timing'] for r in runs} == {'production'}
    text = open(out / 'model.md').read()
    assert 'timing: production' in text
    # load-then-idle has a true working set: its errors are tabulated
    assert '| load_idle, boot | badis |' in text.split(
        'one poll of allowance')[1]
    with pytest.raises(SystemExit):
        bm.main(['--timing', 'fast', '--out', str(tmp_path / 'x')])
