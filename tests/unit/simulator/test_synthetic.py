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


def test_held_out_profiles_have_their_character():
    kw = dict(n_vms=200, days=4.0, seed=6)
    base = synthetic.generate(**kw)
    churn = synthetic.generate(profile='churn', **kw)
    heavy = synthetic.generate(profile='heavy_tail', **kw)
    growth = synthetic.generate(profile='memory_growth', **kw)
    day = int(86400 / base.step)

    # churn: every slot always taken, by VMs that live 2-48 hours
    alive = (churn.mem > 0).sum(axis=0)
    assert alive.min() >= 0.97 * 200 and alive.max() <= 200
    assert churn.n_vms > 4 * 200
    life = (churn.last - churn.first + 1) * churn.step / 3600.0
    inside = (churn.first > 0) & (churn.last < churn.n_steps - 1)
    assert 2.0 <= np.min(life[inside]) and np.max(life[inside]) <= 48.0
    assert 5.0 < np.median(life[inside]) < 20.0

    # heavy tail: the busiest tenth carries most of the CPU
    def top_tenth(t):
        per_vm = np.sort(t.cpu.sum(axis=1))[::-1]
        return per_vm[:len(per_vm) // 10].sum() / per_vm.sum()
    assert top_tenth(heavy) > 0.55 > 0.45 > top_tenth(base)
    assert np.array_equal(heavy.mem, base.mem)     # memory untouched

    # creeping working sets: a day's mean grows far more than the
    # default's, and leaks fall back at a restart
    def growth_ratio(t):
        s = t.mem.sum(axis=0)
        return s[-day:].mean() / s[:day].mean()
    assert growth_ratio(growth) > 1.2 * growth_ratio(base)
    drops = np.diff(growth.mem, axis=1) < -0.08 * growth.booked[:, None]
    assert drops.any(axis=1).sum() >= 200 // 10
    assert (growth.mem <= growth.booked[:, None]).all()
