"""Neat's SLA figures and the power model, computed by hand."""

import pytest

from memmut.simulator import engine
from memmut.simulator import sla
from memmut.simulator import trace as trace_mod

import numpy as np


def test_otf_is_the_mean_of_the_hosts_overload_fractions():
    # h0 on 10 steps, 1 overloaded (0.1); h1 on 5, 2 overloaded (0.4);
    # h2 never on (left out). Per-host mean (0.1 + 0.4) / 2 = 0.25; host
    # time 3 / 15 = 0.2.
    assert sla.otf([10, 5, 0], [1, 2, 0]) == pytest.approx((0.25, 0.2))
    assert sla.otf([0, 0], [0, 0]) == (0.0, 0.0)


def test_pdm_is_the_mean_of_the_vms_lost_cpu_fractions():
    # v0 asked 1000 MHz s, lost 10 (0.01); v1 asked 400, lost 0; v2 asked
    # nothing (left out): (0.01 + 0) / 2 = 0.005
    assert sla.pdm([10, 0, 5], [1000, 400, 0]) == pytest.approx(0.005)


def test_slav_and_esv():
    m = sla.metrics([10, 5], [1, 2], [10, 0], [1000, 400], 40.0)
    # OTF 0.25, PDM 0.005 -> SLAV 0.00125, ESV 40 x 0.00125 = 0.05
    assert m['otf'] == pytest.approx(0.25)
    assert m['pdm'] == pytest.approx(0.005)
    assert m['slav'] == pytest.approx(0.00125)
    assert m['esv'] == pytest.approx(0.05)


def test_linear_and_specpower_power():
    assert sla.power(0.5, 175, 250) == pytest.approx(212.5)
    assert sla.power(1.7, 175, 250) == pytest.approx(250.0)
    # G5 curve: 93.7 .. 135 W; at 50 % 116 W -> (116 - 93.7) / 41.3 of
    # the way from idle to max; at 25 % halfway between 101 and 105 W.
    assert sla.power(0.5, 175, 250, 'specpower') == pytest.approx(
        175 + 75 * (116 - 93.7) / (135 - 93.7))
    assert sla.power(0.25, 93.7, 135, 'specpower') == pytest.approx(103.0)
    assert sla.power(0.0, 93.7, 135, 'specpower') == pytest.approx(93.7)
    with pytest.raises(ValueError):
        sla.power(0.5, 1, 2, 'cubic')


def _two_vm_trace():
    # Two VMs, 4 samples of 300 s; v0 uses 1000 MHz, v1 3000 MHz; 1 GiB
    # working sets, 2 GiB booked.
    n = 4
    return trace_mod.Trace(
        names=['v0', 'v1'], step=300.0, start=0.0,
        cpu=np.array([[1000.0] * n, [3000.0] * n]),
        mem=np.full((2, n), 1024.0), booked=np.array([2048.0, 2048.0]),
        cpu_capacity=np.array([4000.0, 4000.0]),
        first=np.array([0, 0]), last=np.array([n - 1, n - 1]),
        source='hand')


def test_engine_reports_neat_figures_by_hand():
    # Hosts of 3500 MHz: the BFD placement (cpu threshold 0.8 -> 2800
    # MHz) cannot put both VMs on one host: two hosts, no overload, no
    # migration. 3 intervals of 300 s, 2 VMs: 2 x 3 x 300 s = 1/48 VM-day.
    s = engine.Settings(hosts=engine.HostModel(cpu_mhz=3500.0,
                                               memory_mb=8192.0, count=3),
                        wss_time_slice=300.0)
    m, _ = engine.simulate(_two_vm_trace(), 'wss', s)
    assert m['intervals'] == 3 and m['migrations'] == 0
    assert m['otf'] == 0.0 and m['pdm'] == 0.0 and m['esv'] == 0.0
    assert m['vm_days'] == pytest.approx(2 * 3 * 300 / 86400.0)
    assert m['migrations_per_vm_day'] == 0.0
    # energy: host with v0 at 1000/3500, host with v1 at 3000/3500, 900 s
    watts = 2 * 175 + 75 * (4000.0 / 3500)
    assert m['energy_kwh'] == pytest.approx(watts * 900 / 3.6e6)
