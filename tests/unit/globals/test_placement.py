"""MEMORY_MB allocation ratios fed to placement: the ratio from booked
memory over demand, and the read-modify-write with the provider
generation (retried on 409, reserved never touched)."""

import json

import pytest

from memmut.globals import placement
from memmut import objects
from tests import common

GIB = 1 << 20


class FakeResponse:
    def __init__(self, status, body=None):
        self.status_code = status
        self._body = body
        self.text = json.dumps(body)

    def json(self):
        return self._body


class FakePlacement:
    """One provider; ``conflicts`` writes by someone else before ours."""

    def __init__(self, conflicts=0):
        self.inv = {'total': 65536, 'reserved': 512, 'min_unit': 1,
                    'max_unit': 65536, 'step_size': 1,
                    'allocation_ratio': 1.0}
        self.generation = 3
        self.conflicts = conflicts
        self.puts = []

    def get(self, url, params=None, raise_exc=True):
        if url == '/resource_providers':
            if params['name'] != 'compute-1':
                return FakeResponse(200, {'resource_providers': []})
            return FakeResponse(200, {'resource_providers': [
                {'uuid': 'rp-1', 'name': 'compute-1'}]})
        assert url == '/resource_providers/rp-1/inventories/MEMORY_MB'
        return FakeResponse(200, dict(
            self.inv, resource_provider_generation=self.generation))

    def put(self, url, json=None, raise_exc=True):
        self.puts.append(json)
        if self.conflicts:
            self.conflicts -= 1
            self.generation += 1          # nova-compute wrote meanwhile
            self.inv['reserved'] = 1024
            return FakeResponse(409, {'errors': []})
        if json['resource_provider_generation'] != self.generation:
            return FakeResponse(409, {'errors': []})
        self.inv = {k: v for k, v in json.items()
                    if k != 'resource_provider_generation'}
        self.generation += 1
        return FakeResponse(200, dict(json))


def test_ratio_written_with_generation_and_reserved_kept():
    fake = FakePlacement(conflicts=1)
    old = placement.set_memory_ratio(fake, 'compute-1', 1.4)
    assert old == 1.0
    assert fake.inv['allocation_ratio'] == 1.4
    # the retry re-read: the reserved nova wrote meanwhile is kept
    assert fake.inv['reserved'] == 1024
    assert [p['resource_provider_generation'] for p in fake.puts] == [3, 4]


def test_small_changes_are_not_written():
    fake = FakePlacement()
    placement.set_memory_ratio(fake, 'compute-1', 1.01, min_change=0.02)
    assert fake.puts == []


def test_endless_conflicts_and_unknown_hosts_are_errors():
    with pytest.raises(placement.PlacementError, match='kept changing'):
        placement.set_memory_ratio(FakePlacement(conflicts=99), 'compute-1',
                                   1.3, retries=3)
    with pytest.raises(placement.PlacementError, match='no resource'):
        placement.set_memory_ratio(FakePlacement(), 'compute-9', 1.3)


def _report(db, host, t, seq, wss_kb):
    db.store_report(objects.HostReport(
        host=host, boot_id='b', seq=seq, timestamp=t, hypervisor='sim',
        memory_total_kb=64 * GIB, memory_free_kb=32 * GIB, cpu_count=8,
        cpu_util=0.1, vms=[objects.VMReport(
            uuid='00000000-0000-4000-8000-00000000000%d' % i,
            name='vm%d' % i, timestamp=t, state='running',
            booked_kb=4 * GIB, balloon_kb=4 * GIB, nova_instance=True,
            wss_kb=wss_kb, wss_max_avg_kb=wss_kb) for i in (1, 2)]))


def test_updater_sets_booked_over_demand_clamped(db, clock):
    conf = common.private_conf(
        badis={'time_slice': 600.0, 'headroom_kb': 0,
               'headroom_fraction': 0.0},
        placement={'max_allocation_ratio': 1.5})
    t0 = clock()
    for seq in range(1, 13):
        clock.t = t0 + 60 * seq
        _report(db, 'compute-1', clock(), seq, 1 * GIB)
    fake = FakePlacement()
    done = placement.RatioUpdater(conf, db, adapter=fake,
                                  clock=clock).update()
    # 8 GiB booked over 2 GiB of working sets is 4.0, clamped to 1.5
    assert done == {'compute-1': 1.5}
    assert fake.inv['allocation_ratio'] == 1.5
    assert fake.inv['reserved'] == 512


def test_cold_vms_count_at_their_booking(db, clock):
    conf = common.private_conf(badis={'time_slice': 3600.0})
    _report(db, 'compute-1', clock(), 1, 1 * GIB)
    fake = FakePlacement()
    placement.RatioUpdater(conf, db, adapter=fake, clock=clock).update()
    assert fake.puts == []         # ratio 1.0, as placement has it
