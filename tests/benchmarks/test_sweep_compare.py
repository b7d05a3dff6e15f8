"""tools/sweep_compare.py: one configuration against itself across two
sweep runs, paired per input."""
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', '..', 'tools'))
import sweep_compare  # noqa: E402

from tests.benchmarks import consolidation_sweep as sweep  # noqa: E402


def _row(config, group, inp, **figs):
    r = {'config': config, 'mode': 'wss', 'group': group, 'input': inp}
    r.update(figs)
    return r


def test_each_input_is_paired_with_itself_and_unmatched_ones_left_out():
    before = [_row('wss default', 'g', 'seed %d' % k, cpu_overload=0.003,
                   hosts=4.0 + k) for k in range(3)]
    before.append(_row('wss only before', 'g', 'seed 0', hosts=1.0))
    after = [_row('wss default', 'g', 'seed %d' % k, cpu_overload=0.002,
                  hosts=4.0 + k + 0.1 * k) for k in range(3)]
    after.append(_row('wss default', 'g', 'seed 9', hosts=99.0))
    out = sweep_compare.compare(before, after, 'new')
    assert set(out) == {'wss default, new'}
    figs = out['wss default, new']['g']
    assert figs['hosts']['n'] == 3                  # seed 9: no pair
    assert abs(figs['hosts']['mean'] - 0.1) < 1e-9  # 0, 0.1, 0.2
    assert abs(figs['cpu_overload']['mean'] + 0.001) < 1e-12
    lines = sweep.paired_markdown(out, ref='before')
    assert any('wss default, new' in line for line in lines)


def test_the_tool_writes_its_markdown(tmp_path):
    rows = [_row('wss default', 'g', 'seed %d' % k, hosts=float(k),
                 cpu_overload=0.0, migrations_per_vm_day=0.1,
                 memory_overload=0.0, memory_caused_share=0.0)
            for k in range(2)]
    for name in ('a.csv', 'b.csv'):
        with open(tmp_path / name, 'w', newline='') as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    out = tmp_path / 'p.md'
    assert sweep_compare.main([str(tmp_path / 'a.csv'),
                               str(tmp_path / 'b.csv'),
                               '--out', str(out)]) == 0
    text = out.read_text()
    assert '+0.00 ± 0.00 (n=2)' in text
