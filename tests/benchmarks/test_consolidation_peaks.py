"""consolidation_peaks: a host's CPU now and its VMs' peak over the day."""

import json

import numpy as np

from tests.benchmarks import consolidation_peaks as peaks


def test_host_utilisation_reads_now_and_the_day_peak():
    # two VMs on host 0 bursting at different times, one on host 1, one
    # placed nowhere
    cpu = np.zeros((4, 10))
    cpu[0, 2] = 50.0
    cpu[1, 5] = 30.0
    cpu[0:2, 9] = 10.0
    cpu[2, :] = 20.0
    cpu[3, :] = 99.0
    where = np.array([0, 0, 1, -1])
    now, peak = peaks.host_utilisation(cpu, where, 9, 100.0, day=8)
    assert now == [0.2, 0.2]
    # the window is samples 2..9: host 0's peak is VM 0's burst alone
    assert peak == [0.5, 0.2]
    _, peak = peaks.host_utilisation(cpu, where, 9, 100.0, day=4)
    assert peak == [0.2, 0.2]
    s = peaks.summarise([0.2, 0.4], [0.6, 0.4], 0.5)
    assert s['share_day_peak_above_underload_peak'] == 0.5
    assert abs(s['cpu_now_median'] - 0.3) < 1e-12


def test_a_small_synthetic_run_writes_its_results(tmp_path, monkeypatch):
    monkeypatch.setattr(peaks.sweep, 'SYNTHETIC_DAYS', 1.5)
    monkeypatch.setattr(peaks.sweep, 'SYNTHETIC', [('default', 40)])
    monkeypatch.setattr(peaks.bench, 'DEFAULT_TRACE',
                        str(tmp_path / 'absent.tar.gz'))
    assert peaks.main(['--seeds', '1', '--every', '3',
                       '--out', str(tmp_path)]) == 0
    data = json.loads((tmp_path / 'host_peaks.json').read_text())
    (row,) = data['inputs']
    assert row['host_samples'] > 0
    assert row['cpu_day_peak_median'] >= row['cpu_now_median']
    assert row['active_hosts'] >= row['lower_bound_hosts'] > 0
    assert '| synthetic default | seed 0 |' in (
        tmp_path / 'host_peaks.md').read_text()
