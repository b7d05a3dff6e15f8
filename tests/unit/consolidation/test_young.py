"""Young VM policies: what VMs with little history are packed on."""

import numpy as np
import pytest

from memmut.consolidation import young


def test_policies_and_parameters():
    assert young.YoungPolicy().name == 'time_slice'
    assert young.YoungPolicy().min_age == 0.0
    assert young.YoungPolicy('booked').min_age == 86400.0
    assert young.YoungPolicy('prior', {'min_age': 3600}).effective() == {
        'min_age': 3600, 'quantile': 0.9}
    with pytest.raises(ValueError, match='unknown young VM policy'):
        young.YoungPolicy('oracle')
    with pytest.raises(ValueError, match='no parameter'):
        young.YoungPolicy('booked', {'quantile': 0.5})
    with pytest.raises(ValueError, match='quantile'):
        young.YoungPolicy('spike_prior', {'quantile': 1.5})
    with pytest.raises(ValueError, match='min_age'):
        young.YoungPolicy('booked', {'min_age': -1})


def test_prior_fraction():
    assert young.prior_fraction([], [], 0.9) is None
    # Fractions 0.1, 0.2, ..., 1.0 (the last capped at 1).
    peaks = [100.0 * k for k in range(1, 11)] + [5000.0]
    booked = [1000.0] * 11
    assert young.prior_fraction(peaks, booked, 0.5) == pytest.approx(0.6)
    assert young.prior_fraction(peaks, booked, 1.0) == 1.0


def test_packed_one_vm():
    day = 86400.0
    ts = young.YoungPolicy()
    booked = young.YoungPolicy('booked')
    prior = young.YoungPolicy('prior')
    spike = young.YoungPolicy('spike_prior')
    assert young.packed(ts, 300.0, 4096.0, 10.0, 0.5) == 300.0
    assert young.packed(booked, 300.0, 4096.0, day - 1, None) == 4096.0
    assert young.packed(booked, 300.0, 4096.0, day, None) == 300.0
    # No mature VM yet: the booking.
    assert young.packed(prior, 300.0, 4096.0, 10.0, None) == 4096.0
    # The prior's fraction of the booking, when it is larger.
    assert young.packed(prior, 300.0, 4096.0, 10.0, 0.5) == 2048.0
    assert young.packed(prior, 3000.0, 4096.0, 10.0, 0.5) == 3000.0
    # The rise added to the VM's own WSS^max_avg, then headroom.
    assert young.packed(spike, 300.0, 4096.0, 10.0, 0.25,
                        wss=280.0) == 280.0 + 1024.0
    assert young.packed(spike, 300.0, 4096.0, 10.0, 0.25, 32.0, 0.05,
                        wss=280.0) == pytest.approx(1304.0 * 1.05)
    assert young.packed(spike, 300.0, 4096.0, 10.0, 0.99,
                        wss=280.0) == 4096.0      # capped at the booking
    with pytest.raises(ValueError):
        young.packed(spike, 300.0, 4096.0, 10.0, 0.25)


def _series():
    # Three VMs over 10 samples of 1 h (min_age 4 h = 4 samples): VM 0
    # old and spiking at sample 2 (to 0.8 of its booking), VM 1 old and
    # flat, VM 2 arriving at sample 5 (young until sample 9).
    steps, step = 10, 3600.0
    booked = np.array([1000.0, 1000.0, 2000.0])
    ma = np.array([[100.0] * steps, [200.0] * steps, [0.0] * steps])
    ma[0, 2] = 800.0
    ma[2, 5:] = 300.0
    first = np.array([-20, -20, 5])
    age = np.arange(steps)[None, :] - first[:, None]
    alive = age >= 0
    demand = np.where(alive, ma * 1.1, 0.0)
    return young.YoungPolicy, ma, demand, booked, age, alive, step


def test_packing_series_time_slice_and_booked():
    pol, ma, demand, booked, age, alive, step = _series()
    assert young.packing_series(pol(), ma, demand, booked, age, alive,
                                step) is demand
    out = young.packing_series(pol('booked', {'min_age': 4 * 3600.0}), ma,
                               demand, booked, age, alive, step)
    np.testing.assert_array_equal(out[:2], demand[:2])
    assert list(out[2, 5:9]) == [2000.0] * 4
    np.testing.assert_array_equal(out[2, 9:], demand[2, 9:])


def test_packing_series_spike_prior_learns_from_other_vms():
    pol, ma, demand, booked, age, alive, step = _series()
    p = pol('spike_prior', {'min_age': 4 * 3600.0, 'quantile': 1.0})
    out = young.packing_series(p, ma, demand, booked, age, alive, step)
    # VM 0's rise (800 - 100 of 1000) stays the largest over the last 4
    # samples up to sample 5: the young VM is packed on 300 + 0.7 x 2000.
    assert out[2, 5] == pytest.approx(300.0 + 0.7 * 2000.0)
    # From sample 6 on, no VM rose within its last 4 samples: its own
    # figure.
    np.testing.assert_array_equal(out[2, 6:], demand[2, 6:])
    np.testing.assert_array_equal(out[:2], demand[:2])


def test_packing_series_level_prior():
    pol, ma, demand, booked, age, alive, step = _series()
    p = pol('prior', {'min_age': 4 * 3600.0, 'quantile': 1.0})
    out = young.packing_series(p, ma, demand, booked, age, alive, step)
    # The largest peak fraction of the old VMs over their last 4
    # samples: 0.8 up to sample 5, then 0.2 (VM 1's 200 of 1000).
    assert out[2, 5] == pytest.approx(0.8 * 2000.0)
    assert out[2, 6] == pytest.approx(max(0.2 * 2000.0, demand[2, 6]))
