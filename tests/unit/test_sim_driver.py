import pytest

from memmut.virt import driver
from memmut.virt import simulated


def _driver(conf, clock, specs, **sim_opts):
    for k, v in sim_opts.items():
        conf.set_override(k, v, group='simulated_hypervisor')
    return simulated.SimDriver(conf, clock=clock, vms=specs)


def _stats(d, name):
    return next(v for v in d.list_vms() if v.name == name)


@pytest.mark.parametrize('spec, match', [
    ('a:10', 'NAME:BOOKED_MIB'),
    (':10:W1', 'NAME:BOOKED_MIB'),
    ('a:x:W1', 'integers'),
    ('a:0:W1', 'positive'),
    ('a:10:W7', 'unknown workload'),
])
def test_bad_specs_are_clear_errors(spec, match):
    with pytest.raises(simulated.SimSpecError, match=match):
        simulated.parse_vm_spec(spec, 60)


def test_memory_follows_the_schedule(conf, clock):
    d = _driver(conf, clock, ['a:1024:W1:500'], step_seconds=10)
    first = _stats(d, 'a')
    clock.advance(55)                      # last step: 100 % of 500 MiB
    last = _stats(d, 'a')
    used = lambda v: (v.balloon_kb - v.memory_stats['unused']  # noqa
                      - v.memory_stats['disk_caches'])
    assert used(last) - used(first) == pytest.approx(400 * 1024, rel=0.05)
    assert last.memory_stats['swap_out'] == 0


def test_shrinking_the_balloon_below_demand_causes_swapping(conf, clock):
    d = _driver(conf, clock, ['a:1024:W2:800'], step_seconds=100)
    vm = _stats(d, 'a')
    d.set_balloon(vm.uuid, 512 * 1024)
    clock.advance(10)
    vm = _stats(d, 'a')
    assert vm.balloon_kb == 512 * 1024
    assert vm.memory_stats['unused'] == 0
    assert vm.memory_stats['swap_out'] > 0
    assert vm.memory_stats['swap_in'] > 0
    d.set_balloon(vm.uuid, 1024 * 1024)
    before = vm.memory_stats['swap_out']
    clock.advance(10)
    assert _stats(d, 'a').memory_stats['swap_out'] == before


def test_balloon_limits_and_unknown_vm(conf, clock):
    d = _driver(conf, clock, ['a:256:W1'])
    uuid = _stats(d, 'a').uuid
    with pytest.raises(driver.InvalidBalloonTarget):
        d.set_balloon(uuid, 257 * 1024)
    # below the hard floor is not refused but raised to it (64 MiB here)
    assert d.set_balloon(uuid, 0) == 64 * 1024
    assert _stats(d, 'a').balloon_kb == 64 * 1024
    with pytest.raises(driver.VMNotFound):
        d.set_balloon('nope', 1024)


def test_time_scale_speeds_up_schedules(conf, clock):
    d = _driver(conf, clock, ['a:1024:W1:500'], step_seconds=10,
                time_scale=10)
    clock.advance(1)
    assert d.now() == pytest.approx(10)


def test_host_info_counts_vm_memory_and_cpu(conf, clock):
    d = _driver(conf, clock, ['a:1024:W2', 'b:1024:W2'], host_memory_mb=4096,
                host_cpus=2)
    d.host_info()
    d.list_vms()
    clock.advance(10)
    d.list_vms()
    info = d.host_info()
    assert info.memory_total_kb == 4096 * 1024
    assert info.memory_free_kb < 4096 * 1024 - 2 * 900 * 1024
    assert info.cpu_util == pytest.approx(0.2, rel=0.01)


def test_duplicate_names_rejected(conf, clock):
    with pytest.raises(simulated.SimSpecError, match='duplicate'):
        _driver(conf, clock, ['a:100:W1', 'a:200:W2'])
