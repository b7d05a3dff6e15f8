import pytest

from memmut import objects


def _report(**kw):
    vm = objects.VMReport(uuid='u1', name='vm', timestamp=1.5,
                          state='running', booked_kb=1024, balloon_kb=512,
                          memory_stats={'actual': 512, 'unused': 100})
    fields = dict(host='h1', boot_id='b', seq=3, timestamp=2.0,
                  hypervisor='sim', memory_total_kb=4096,
                  memory_free_kb=1024, cpu_count=2, cpu_util=0.5, vms=[vm])
    fields.update(kw)
    return objects.HostReport(**fields)


def test_report_round_trip_through_primitives():
    report = _report()
    prim = report.to_primitive()
    assert prim['vms'][0]['memory_stats'] == {'actual': 512, 'unused': 100}
    assert objects.HostReport.from_primitive(prim) == report


def test_ints_are_accepted_for_floats_and_unknown_fields_ignored():
    prim = _report().to_primitive()
    prim['timestamp'] = 2
    prim['added_in_1_1'] = 'x'
    assert objects.HostReport.from_primitive(prim).timestamp == 2.0


@pytest.mark.parametrize('mutate, match', [
    (lambda p: p.pop('host'), 'missing field'),
    (lambda p: p.update(seq='3'), 'HostReport.seq'),
    (lambda p: p.update(seq=True), 'HostReport.seq'),
    (lambda p: p.update(vms={}), 'expected a list'),
    (lambda p: p['vms'][0].update(memory_stats={'a': [1]}), 'flat mapping'),
    (lambda p: p['vms'].append('x'), 'expected a mapping'),
])
def test_malformed_reports_are_rejected(mutate, match):
    prim = _report().to_primitive()
    mutate(prim)
    with pytest.raises(objects.SchemaError, match=match):
        objects.HostReport.from_primitive(prim)


def test_optional_nested_message():
    granted = objects.AllocResult(granted=True, device=objects.RemoteDevice(
        allocation_id='a', server_host='s', uri='nbd://x', size_kb=4))
    assert objects.AllocResult.from_primitive(
        granted.to_primitive()) == granted
    refused = objects.AllocResult(granted=False, reason='none')
    assert objects.AllocResult.from_primitive(
        refused.to_primitive()).device is None
