"""bench_kmod's figures over repeats (no guest booted)."""

from tests.benchmarks import bench_kmod as bk


def _rep(rep, err, cpu):
    return {'repeat': rep, 'module_unloaded': True,
            'accuracy': {'all': {'kmod_mean_err_pct': err,
                                 'smaps_mean_err_pct': err / 10}},
            'cost': {100: {'round_ns': 600e3, 'cpu_pct_10_vms': cpu,
                           'cpu_pct_per_vm': cpu / 10}}}


def test_repeat_intervals_and_mean_cost():
    per = [_rep(0, 0.2, 0.010), _rep(1, 0.3, 0.012), _rep(2, 0.25, 0.011)]
    ri = bk.repeat_intervals(per, 10)
    assert ri['kmod_mean_err_pct']['n'] == 3
    assert abs(ri['kmod_mean_err_pct']['mean'] - 0.25) < 1e-9
    assert ri['cpu_pct_10_vms_at_100_pages']['half_width'] > 0
    c = bk.mean_cost(per, 10)
    assert abs(c[100]['cpu_pct_10_vms'] - 0.011) < 1e-9


def test_pooled_accuracy_over_every_repeat():
    rows = [{'clean': True, 'shape': 'W1', 'kmod_err': e, 'smaps_err': 0.0,
             'repeat': i} for i, e in enumerate((0.01, 0.03))]
    rows.append({'clean': False, 'shape': 'W1', 'kmod_err': 0.5,
                 'smaps_err': 0.1, 'repeat': 0})
    s = bk.pooled_accuracy(rows)
    assert s['all']['intervals'] == 2 and s['W1']['mixed_intervals'] == 1
    assert abs(s['all']['kmod_mean_err_pct'] - 2.0) < 1e-9


def test_markdown_gives_the_verdicts_on_the_intervals(tmp_path):
    per = [_rep(0, 0.2, 0.010), _rep(1, 0.3, 0.012)]
    res = {'command': 'x', 'kernel': 'k', 'qemu': 'q', 'peak_mib': 128,
           'step_s': 6, 'interval_ms': 1500, 'pages': 100, 'round_s': 60,
           'vms': 10, 'extrapolation': 'e', 'intervals': [],
           'accuracy': {'all': {'intervals': 2, 'kmod_mean_err_pct': 0.25,
                                'kmod_max_err_pct': 0.3,
                                'smaps_mean_err_pct': 0.0,
                                'smaps_max_err_pct': 0.0,
                                'mixed_intervals': 0}},
           'cost': {100: {'random_call_ns': 3e5, 'random_ns_per_page': 3e3,
                          'test_call_ns': 3e5, 'test_ns_per_page': 3e3,
                          'cpu_pct_per_vm': 0.001, 'cpu_pct_10_vms': 0.011}},
           'repeat_intervals': bk.repeat_intervals(per, 10),
           'discipline': {'repeats': 2, 'load_before': [1, 1, 1],
                          'load_after': [1, 1, 1],
                          'versions': {'qemu': '7.2'}}}
    path = tmp_path / 'kmod.md'
    bk.write_md(str(path), res)
    text = path.read_text()
    assert 'Goal mean error <= 5 % of the mapping: **met**' in text
    assert 'goal <= 1 % of a core at the default 100 pages: **met**' in text
