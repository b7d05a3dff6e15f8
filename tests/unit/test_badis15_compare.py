"""tools/badis15_compare.py: vm_over of pattern-suite runs."""

import json

from tests import common

compare = common.tool_module('badis15_compare')


def _slot(tmp_path, runs):
    slot = tmp_path / 'slot-1'
    slot.mkdir()
    with open(slot / 'patterns.jsonl', 'w') as f:
        for r in runs:
            f.write(json.dumps(dict(r, seconds=10.0, saved_pct=5.0)) + '\n')
    return str(slot)


def test_a_run_with_a_twin_is_judged_against_it(tmp_path):
    # bench_patterns --twin: no separate none run; each run carries the
    # operations of the none run started beside it
    slot = _slot(tmp_path, [
        {'pattern': 'zipf0.8', 'start': 'boot', 'estimator': 'badis',
         'ops': 800, 'twin_ops': 1000},
        {'pattern': 'zipf0.8', 'start': 'loaded', 'estimator': 'badis',
         'ops': 500, 'twin_ops': 1000},
        {'pattern': 'hotset', 'start': 'boot', 'estimator': 'none',
         'ops': 900},
        {'pattern': 'hotset', 'start': 'boot', 'estimator': 'badis',
         'ops': 600}])
    _, summary = compare.patterns([slot], by_estimator=True)
    over = {tuple(k): r['vm_over'] for _, k, r in summary['runs']['badis']}
    assert over[('zipf0.8', 'boot')] == 1.25
    assert over[('zipf0.8', 'loaded')] == 2.0
    assert over[('hotset', 'boot')] == 1.5      # the slot's none run
