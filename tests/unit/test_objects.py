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


def test_checks_built_once_per_class_still_check_every_message():
    """The field checks are built at the first message of a class and
    reused: a later message gets each of them again, per field."""
    good = _report(remote_exports=['s1'], vms=[]).to_primitive()
    assert objects.HostReport.from_primitive(good).remote_exports == ['s1']
    for key, value, match in [
            ('remote_exports', 's1', 'HostReport.remote_exports: expected '
             'a list'),
            ('remote_exports', [1], 'HostReport.remote_exports: expected '
             'str, got 1'),
            ('cpu_util', 'x', "HostReport.cpu_util: expected float, got "
             "'x'"),
            ('remote_attachments', None, None)]:
        prim = dict(good, **{key: value})
        if match is None:
            assert getattr(objects.HostReport.from_primitive(prim),
                           key) is None
            continue
        with pytest.raises(objects.SchemaError, match=match):
            objects.HostReport.from_primitive(prim)
    # the nested VM's checks are its class's own
    prim = _report().to_primitive()
    prim['vms'][0]['wss_kb'] = 1.5
    with pytest.raises(objects.SchemaError, match='VMReport.wss_kb'):
        objects.HostReport.from_primitive(prim)
    assert objects.HostReport.from_primitive(good).remote_exports == ['s1']
