"""memmut's libvirt driver against real QEMU guests on a private libvirtd."""

import pytest

from memmut.evaluation import workloads
from memmut.virt import driver as virt_driver
from memmut.virt.libvirt import driver
from tests.harness import domain
from tests.harness import guest as guestmod
from tests import common

MIB = 1024


@pytest.fixture
def driver_for(libvirtd):
    def make(**libvirt_opts):
        d = driver.LibvirtDriver(common.private_conf(
            libvirt=dict(libvirtd.memmut_options(), **libvirt_opts)))
        d.connect()
        return d
    return make


def test_lists_guests_maps_nova_and_reads_statistics(guest_factory,
                                                     driver_for):
    nova = guest_factory(memory_mib=320, nova=domain.NovaMetadata(
        name='web-1'))
    plain = guest_factory(memory_mib=256)
    drv = driver_for()
    vms = {v.uuid: v for v in drv.list_vms()}
    assert vms[nova.uuid].name == 'web-1' and vms[nova.uuid].nova_instance
    assert vms[plain.uuid].name == plain.name
    assert not vms[plain.uuid].nova_instance
    assert vms[nova.uuid].booked_kb == 320 * MIB
    assert vms[nova.uuid].state == 'running'
    assert vms[nova.uuid].cpu_time_ns > 0
    assert drv.qemu_pid(nova.uuid) == nova.qemu_pid()

    drv.set_stats_period(nova.uuid, 1)
    stats = guestmod.wait_until(
        lambda: {v.uuid: v for v in drv.list_vms()}[nova.uuid].memory_stats,
        lambda s: 'unused' in s and 'swap_out' in s, 30,
        'balloon statistics from the guest')
    assert 0 < stats['unused'] < stats['available'] <= 320 * MIB
    assert stats['actual'] == 320 * MIB

    only_nova = driver_for(nova_instances_only=True)
    assert [v.uuid for v in only_nova.list_vms()] == [nova.uuid]

    host = drv.host_info()
    assert host.memory_total_kb > host.memory_free_kb > 0
    assert host.cpu_count >= 1


def test_balloon_change_reaches_the_guest(guest_factory, driver_for):
    g = guest_factory(memory_mib=384, schedule=workloads.shape_schedule(
        'W1', 64, 60), loops=0)
    drv = driver_for()
    before = g.wait_stat(lambda s: s['memtotal_kb'] > 300 * MIB)
    mark = g.mark()
    drv.set_balloon(g.uuid, 256 * MIB)
    after = g.wait_stat(lambda s: s['memtotal_kb'] < 270 * MIB, after=mark)
    assert before['memtotal_kb'] - after['memtotal_kb'] >= 100 * MIB
    vms = {v.uuid: v for v in drv.list_vms()}
    assert g.uuid in vms, (g.is_active(), g.log()[-2000:])
    vm = vms[g.uuid]
    assert vm.balloon_kb == 256 * MIB
    with pytest.raises(virt_driver.InvalidBalloonTarget):
        drv.set_balloon(g.uuid, 385 * MIB)


def test_balloon_floor_from_the_flavor_and_the_guest(guest_factory,
                                                     driver_for):
    """No target below the hard floor reaches a real guest: the flavor's
    memmut:balloon_floor_mb, or the guest's measured minimum."""
    flavored = guest_factory(memory_mib=384, nova=domain.NovaMetadata(
        extra_specs={'memmut:balloon_floor_mb': '200'}))
    plain = guest_factory(memory_mib=256)
    drv = driver_for()
    for g in (flavored, plain):
        drv.set_stats_period(g.uuid, 1)
        g.wait_stat(lambda s: s['memtotal_kb'] > 150 * MIB)
    assert drv.set_balloon(flavored.uuid, 16 * MIB) == 200 * MIB

    stats = guestmod.wait_until(
        lambda: {v.uuid: v for v in drv.list_vms()}[plain.uuid].memory_stats,
        lambda s: 'available' in s and 'actual' in s, 30, 'statistics')
    boot = stats['actual'] - stats['available']
    assert 0 < boot < 128 * MIB                   # measured, not assumed
    expected = max(64 * MIB, -(-(boot + 32 * MIB) // 4) * 4)
    assert drv.set_balloon(plain.uuid, 1 * MIB) == expected
    for g, floor in ((flavored, 200 * MIB), (plain, expected)):
        vm = guestmod.wait_until(
            lambda: {v.uuid: v for v in drv.list_vms()}[g.uuid],
            lambda v: v.balloon_kb <= floor + 4 * MIB, 60,
            'balloon settled at the floor')
        assert vm.balloon_kb >= floor - 4 * MIB and g.is_active()


def test_unreachable_libvirt_is_a_retryable_error(driver_for, tmp_path):
    with pytest.raises(virt_driver.HypervisorUnavailable):
        driver_for(connection_uri='qemu:///system?socket=%s/none'
                   % tmp_path)
