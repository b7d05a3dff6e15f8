"""The hindsight references of consolidation_bounds (issue 19)."""

import numpy as np

from memmut.simulator import quality
from tests.benchmarks import consolidation_bounds as cb


def test_ffd_packs_whole_vms():
    # three VMs of 0.6 CPU cannot share a host: 3 hosts where the fluid
    # bound says 2
    assert cb.ffd_hosts([0.6, 0.6, 0.6], [0.1, 0.1, 0.1], 1.0, 1.0) == 3
    assert cb.ffd_hosts([0.5, 0.5, 0.5, 0.5], [0.1] * 4, 1.0, 1.0) == 2


def test_the_held_bound_is_below_any_placement_kept_for_the_block():
    # two VMs whose CPU peaks alternate: each step alone fits one host;
    # kept together for both steps they overload it, so a placement kept
    # for the block without overload needs two, and so does the held bound
    cpu = np.array([[0.9, 0.2], [0.2, 0.9]])
    mem = np.full((2, 2), 0.1)
    alive = np.ones((2, 2), dtype=bool)
    bound = quality.lower_bound(cpu, mem, alive, 1.0, 1.0)[0]
    assert list(quality.held_lower_bound(bound, 2)) == [2, 2]
    rng = np.random.default_rng(3)
    cpu = rng.uniform(0, 0.4, (40, 24))
    mem = rng.uniform(0, 0.2, (40, 24))
    alive = np.ones((40, 24), dtype=bool)
    bound = quality.lower_bound(cpu, mem, alive, 1.0, 1.0)[0]
    for hold in (1, 6, 24):
        held = quality.held_lower_bound(bound, hold)
        assert (held >= bound).all()
        for b in range(0, 24, hold):
            # the block packed once on each VM's peak over it: never
            # fewer hosts than the held bound says
            sl = slice(b, b + hold)
            packed = cb.ffd_hosts(cpu[:, sl].max(axis=1),
                                  mem[:, sl].max(axis=1), 1.0, 1.0)
            assert packed >= held[b]


def test_the_plans_within_the_budget_never_beat_the_bounds():
    # a small synthetic input through the whole ladder: the plans made
    # within the migration budget without overload keep at least the
    # per-step bound and the bound within the budgets on
    import dataclasses

    from memmut.simulator import engine
    from memmut.simulator import synthetic
    from tests import common
    trace = synthetic.generate(60, 2.0, seed=3, profile='bursty')
    base = engine.settings_from_conf(common.private_conf(), 0.0, 300.0)
    steps = 288
    s = dataclasses.replace(base, start_steps=0, duration_steps=steps)
    r = cb.ladder(trace, s, 0, steps)
    for plan in ('sticky', 'sticky_target', 'two_tier'):
        assert r[plan] >= r['lower_bound'] - 1e-9
        assert r[plan] >= r['budget'] - 1e-9
    assert r['bound_held_1d'] >= r['bound_held_1h'] >= r['lower_bound']
    assert r['sticky_migrations'] <= r['budget_migrations']


def test_bad_arguments_exit_with_a_message(capsys):
    assert cb.main(['--window-days', '0']) == 2
    assert cb.main(['--sweep-csv', '/nonexistent.csv']) == 2
    assert cb.main(['--trace', '/nonexistent.tar.gz']) == 2
    assert cb.main(['--profiles', 'held-out,weekly']) == 2
    err = capsys.readouterr().err
    assert 'no sweep CSV' in err and 'does not exist' in err
    assert "--profiles: unknown synthetic profile 'weekly'" in err
