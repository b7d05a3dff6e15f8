"""tools/badis15_compare.py --estimators: one slot, several estimators."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', '..', 'tools'))
import badis15_compare  # noqa: E402


def _run(est, pattern, start, ops, swap_in_kb=0, saved=None, failed=None):
    rows = [{'t': 0.0, 'swap_in': 0}, {'t': 10.0, 'swap_in': swap_in_kb}]
    r = {'pattern': pattern, 'start': start, 'estimator': est,
         'seconds': 10, 'ops': ops, 'rows': rows, 'saved_pct': saved}
    if failed:
        r['failed'] = failed
    return r


@pytest.fixture
def slot(tmp_path):
    runs = [_run('none', 'redis', 'boot', 20000),
            _run('badis', 'redis', 'boot', 10000, 20480, 30.0),
            _run('zballoond', 'redis', 'boot', 16000, 0, 10.0),
            _run('selfballoon', 'redis', 'boot', 0, failed='redis did '
                 'not finish'),
            _run('selfballoon', 'redis', 'loaded', 20000, 1024, 5.0)]
    with open(tmp_path / 'patterns.jsonl', 'w') as f:
        for r in runs:
            f.write(json.dumps(r) + '\n')
    return str(tmp_path)


def test_estimators_are_configurations_badis_first(slot):
    assert badis15_compare.estimator_names([slot]) == [
        'badis', 'zballoond', 'selfballoon']


def test_vm_over_against_the_slots_none_and_paired_to_badis(slot):
    lines, data = badis15_compare.patterns([slot], by_estimator=True)
    runs = {n: {tuple(k): r for _, k, r in v}
            for n, v in data['runs'].items()}
    assert runs['badis'][('redis', 'boot')]['vm_over'] == 2.0
    assert runs['zballoond'][('redis', 'boot')]['vm_over'] == 1.25
    assert runs['badis'][('redis', 'boot')]['swapin'] == 2048
    paired = data['configs']['zballoond']['paired']
    assert paired['swapin']['mean'] == -2048
    assert paired['saved']['mean'] == -20.0
    # a failed run is listed, not counted
    assert ('redis', 'boot') not in runs['selfballoon']
    assert any('selfballoon: redis did not finish' in x for x in lines)
    text = '\n'.join(lines)
    assert '| redis, boot | 2000 | 1000 | 1600 | n/a |' in text
    assert 'zballoond - badis' in text


def test_slots_holding_parts_of_the_suite(slot, tmp_path_factory):
    other = tmp_path_factory.mktemp('other')
    with open(other / 'patterns.jsonl', 'w') as f:
        for r in (_run('none', 'zipf0.8', 'boot', 2000000),
                  _run('badis', 'zipf0.8', 'boot', 1000000, 0, 20.0)):
            f.write(json.dumps(r) + '\n')
    lines, data = badis15_compare.patterns([slot, str(other)],
                                           by_estimator=True)
    text = '\n'.join(lines)
    # none's operations/s in thousands, '-' where the slot has no run
    assert '| redis | 2.00 | - | 2.00 | 1.000 |' in text
    assert '| zipf0.8 | - | 200 | 200 | 1.000 |' in text
    runs = {tuple(k): r for _, k, r in data['runs']['badis']}
    assert runs[('zipf0.8', 'boot')]['vm_over'] == 2.0


def test_another_configuration_as_the_reference(slot):
    lines, data = badis15_compare.patterns([slot], by_estimator=True,
                                           reference='zballoond')
    assert 'badis - zballoond' in '\n'.join(lines)
    assert data['configs']['badis']['paired']['saved']['mean'] == 20.0


def _w15_run(shape, alloc, passes, err):
    return {'shape': shape, 'alloc': alloc, 'estimator': 'badis',
            'passes': passes, 'rows': [{'t': 0.0}],
            'errors': {'badis': {'all': err, 'allowance': {
                'S_more': err, 'S_less': None}}}}


def test_w1w5_without_none_runs_is_relative_to_main(tmp_path):
    # W1-W5 of badis only (stop 35): vm_over is main's passes over the
    # run's, and the paired differences are to main
    for name, passes, err in (('main', 300, 3.0), ('probe', 270, 4.0)):
        d = tmp_path / name
        d.mkdir()
        with open(d / 'badis.jsonl', 'w') as f:
            for shape in ('W1', 'W2'):
                f.write(json.dumps(_w15_run(shape, 's', passes, err)) + '\n')
    lines, data = badis15_compare.w1w5([str(tmp_path)])
    assert data['none_passes'] == {}
    assert data['configs']['probe']['vm_over_median'] == pytest.approx(
        300 / 270)
    assert data['configs']['main']['vm_over_median'] == 1.0
    assert any(line.startswith('No `none` runs') for line in lines)


def _w1w5_run(shape, err, passes):
    return {'shape': shape, 'alloc': 's', 'estimator': 'badis',
            'passes': passes, 'rows': [{'t': 0.0}],
            'errors': {'badis': {'all': err, 'allowance': {
                'S_more': err, 'S_less': None}}}}


def test_w1w5_paired_to_the_reference_without_a_main(tmp_path):
    # bench_badis --out w15/NAME per configuration, no `main`, no `none`
    for name, errs, passes in (('badis', (3.0, 5.0), 100),
                               ('hs', (4.0, 4.0), 80)):
        os.makedirs(tmp_path / name)
        with open(tmp_path / name / 'badis.jsonl', 'w') as f:
            for shape, err in zip(('W1', 'W2'), errs):
                f.write(json.dumps(_w1w5_run(shape, err, passes)) + '\n')
    lines, data = badis15_compare.w1w5([str(tmp_path)], reference='badis')
    text = '\n'.join(lines)
    assert 'hs - badis' in text and 'main' not in text
    assert data['configs']['hs']['paired']['err']['mean'] == 0.0
    runs = {tuple(k): r for _, k, r in data['runs']['hs']}
    # vm_over against the reference's passes
    assert runs[('W1', 's')]['vm_over'] == 1.25
    with pytest.raises(SystemExit):
        badis15_compare.w1w5([str(tmp_path)], reference='nope')
