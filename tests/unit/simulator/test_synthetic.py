"""The synthetic trace's profiles (issue 19): each changes what it says."""

import numpy as np
import pytest

from memmut.simulator import synthetic


def test_default_profile_is_the_trace_before_profiles():
    # Figures of generate(300, 2, 0) before profiles existed.
    t = synthetic.generate(300, 2.0, 0)
    assert t.cpu.sum() == pytest.approx(84914302.4310292, rel=1e-12)
    assert t.mem.sum() == pytest.approx(269226650.32116914, rel=1e-12)
    assert synthetic.generate(300, 2.0, 0, profile='default').source == \
        t.source


def _day_profile(t):
    steps = int(86400 / t.step)
    days = t.n_steps // steps
    return t.cpu[:, :days * steps].sum(axis=0).reshape(days, steps)


def test_profiles_have_their_character():
    kw = dict(n_vms=200, days=3.0, seed=4)
    base = synthetic.generate(**kw)
    bursty = synthetic.generate(profile='bursty', **kw)
    spikes = synthetic.generate(profile='memory_spikes', **kw)
    dense = synthetic.generate(profile='dense', **kw)
    diurnal = synthetic.generate(profile='diurnal', **kw)
    # burstier CPU: more total CPU and a larger spread of host-level load
    assert bursty.cpu.sum() > 1.5 * base.cpu.sum()
    # correlated memory spikes: the summed working set swings more
    swing = (lambda t: t.mem.sum(axis=0).max() / np.median(t.mem.sum(
        axis=0)))
    assert swing(spikes) > swing(base) * 1.3
    # more VMs per host: smaller bookings and less CPU per VM
    assert dense.booked.mean() < base.booked.mean() / 3
    assert dense.cpu.sum() < base.cpu.sum() / 2
    # a shared day: the summed CPU swings with the hour
    d = _day_profile(diurnal).mean(axis=0)
    b = _day_profile(base).mean(axis=0)
    assert d.max() / d.min() > 2 * (b.max() / b.min())
    with pytest.raises(ValueError):
        synthetic.generate(profile='weekly')
