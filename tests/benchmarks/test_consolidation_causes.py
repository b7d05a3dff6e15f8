"""The counts of consolidation_causes add up (issue 19, part 8)."""

from memmut.simulator import engine
from memmut.simulator import synthetic
from tests.benchmarks import consolidation_causes as causes


def test_counts_add_up_on_a_short_bursty_run():
    t = synthetic.generate(n_vms=60, days=1.0, seed=2, profile='bursty')
    settings = engine.Settings(duration_steps=200)
    c = causes.Causes(settings.hosts.cpu_mhz)
    m, series = engine.simulate(t, 'wss', settings, observer=c)
    c.finish()
    n = c.c
    assert sum(v for k, v in n.items() if k.startswith('migrations ')) \
        == m['migrations'] > 0
    assert sum(c.per_detection.values()) == n['overload detections']
    overload_moves = sum(v for k, v in n.items()
                         if k.startswith('migrations overload'))
    assert sum(k * v for k, v in c.per_detection.items()) == overload_moves
    assert n['... host over capacity at the next sample if nothing moved'] \
        <= n['... host over capacity within the hour if nothing moved'] \
        <= n['CPU overload detections'] <= n['overload detections']
    # the copies' CPU is not charged here: at most the simulator's count
    assert n['host-steps over capacity'] <= series['cpu_overloads'].sum()
    assert n['... with a move away planned (waiting or copying)'] <= \
        n['host-steps over capacity']
    assert n['overload moves that waited'] <= n['overload moves started'] \
        <= overload_moves


def test_memory_detections_are_checked_against_the_trace():
    # memory_spikes with a burn-in: every memory detection is counted
    # once, and what the VMs used is compared with the host's memory.
    t = synthetic.generate(n_vms=60, days=2.0, seed=1,
                           profile='memory_spikes')
    settings = engine.Settings(start_steps=288, burn_in_steps=200)
    c = causes.Causes(settings.hosts.cpu_mhz,
                      memory_mb=settings.hosts.memory_mb, start=288)
    m, _ = engine.simulate(t, 'wss', settings, observer=c)
    n = c.c
    assert sum(v for k, v in n.items() if k.startswith('migrations ')) \
        == m['migrations']
    over = n['... VMs in use over the host\'s memory within 2 h if '
             'nothing moved']
    near = n['... VMs in use over ram_threshold of it within 2 h if '
             'nothing moved']
    assert over <= near <= n['memory overload detections'] \
        <= n['overload detections']
