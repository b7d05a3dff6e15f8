"""The openstack memmut commands: parsers, formatting, waiting, errors."""

import io
import json
from unittest import mock

from osc_lib import exceptions
import pytest
import yaml

from memmut.osc import client as client_mod
from memmut.osc import plugin
from memmut.osc.v1 import allocations
from memmut.osc.v1 import hosts
from memmut.osc.v1 import rounds
from memmut.osc.v1 import vms

HOST = {'name': 'compute-1', 'status': 'up', 'hypervisor': 'libvirt',
        'vm_count': 1, 'memory_total_kb': 1024, 'memory_free_kb': 512,
        'reservoir_kb': 64, 'lent_kb': 8, 'borrowed_kb': 0,
        'sampling_backends': ['badis/page_idle'],
        'vms': [{'uuid': 'u1', 'name': 'web', 'state': 'running'}]}
VM = {'uuid': 'u1', 'name': 'web', 'host': 'compute-1', 'state': 'running',
      'booked_kb': 2048, 'balloon_kb': 1024, 'wss_kb': 700,
      'wss_max_avg_kb': 800, 'badis_mode': 'VG', 'role': 'server'}
ROUND = {'id': 3, 'status': 'running', 'dry_run': True, 'reason': None,
         'started_at': 't0', 'finished_at': None, 'migration_count': 1,
         'migrations': [{'id': 1, 'status': 'planned'}], 'summary': {},
         'parameters': {'dry_run': True}}
ALLOC = {'allocation_id': 'a1', 'state': 'active', 'client_host': 'c',
         'server_host': 's', 'vm_uuid': 'u1', 'size_kb': 4}


def run(cls, argv, **client_methods):
    app = mock.Mock()
    app.stdout = io.StringIO()
    app.options.debug = False
    client = mock.Mock(**{k: mock.Mock(return_value=v) if not callable(v)
                          else mock.Mock(side_effect=v)
                          for k, v in client_methods.items()})
    app.client_manager.memmut = client
    cmd = cls(app, None)
    args = cmd.get_parser('openstack memmut').parse_args(argv)
    cmd.run(args)
    return app.stdout.getvalue(), client, args


def test_host_list_json_and_filters():
    out, client, _ = run(hosts.ListHost, ['--hypervisor', 'libvirt',
                                          '--limit', '5', '-f', 'json'],
                         hosts=[HOST])
    client.hosts.assert_called_once_with(hypervisor='libvirt', limit=5,
                                         marker=None)
    (row,) = json.loads(out)
    assert row['Name'] == 'compute-1'
    assert row['Sampling back-ends'] == ['badis/page_idle']


def test_host_list_table():
    out, _, _ = run(hosts.ListHost, [], hosts=[HOST])
    assert 'compute-1' in out and 'Reservoir KiB' in out


def test_host_show_yaml_keeps_structures():
    out, client, _ = run(hosts.ShowHost, ['compute-1', '-f', 'yaml'],
                         host=HOST)
    client.host.assert_called_once_with('compute-1')
    doc = yaml.safe_load(out)
    assert doc['vms'][0]['name'] == 'web'


def test_vm_list_and_show_history():
    out, client, _ = run(vms.ListVM, ['--host', 'compute-1', '--state',
                                      'running', '-f', 'json'], vms=[VM])
    client.vms.assert_called_once_with(host='compute-1', state='running',
                                       limit=None, marker=None)
    assert json.loads(out)[0]['WSS max avg KiB'] == 800
    history = [{'timestamp': 't', 'wss_kb': 1, 'state': 'running',
                'swap_in_kb': 0}]
    out, client, _ = run(vms.ShowVM, ['u1', '--history', '--history-limit',
                                      '3', '-f', 'json'], vm=dict(VM),
                         vm_history=history)
    client.vm_history.assert_called_once_with('u1', limit=3, kind=None)
    doc = json.loads(out)
    assert doc['history'] == [{'timestamp': 't', 'wss_kb': 1,
                               'swap_in_kb': 0}]
    out, client, _ = run(vms.ShowVM, ['u1', '-f', 'json'], vm=dict(VM))
    assert 'history' not in json.loads(out)
    client.vm_history.assert_not_called()


def test_vm_show_what_badis_learned():
    vm = dict(VM, pinned_kb=73728, pinned_at='2026-11-24T11:45:00+00:00',
              pinned_note='learned in VG: swapping at 300 MiB, sampled '
                          '228 MiB')
    out, _, _ = run(vms.ShowVM, ['u1', '-f', 'json'], vm=vm)
    doc = json.loads(out)
    assert doc['pinned_kb'] == 73728
    assert doc['pinned_note'].startswith('learned in VG')
    assert doc['pinned_at'] == '2026-11-24T11:45:00+00:00'
    out, _, _ = run(vms.ShowVM, ['u1'], vm=vm)
    assert 'pinned_note' in out and 'learned in VG' in out
    history = [{'timestamp': 't', 'pinned_kb': 73728, 'state': 'running'}]
    out, _, _ = run(vms.ShowVM, ['u1', '--history', '-f', 'json'], vm=vm,
                    vm_history=history)
    assert json.loads(out)['history'] == [{'timestamp': 't',
                                           'pinned_kb': 73728}]


def test_vm_show_the_shrink_floor():
    vm = dict(VM, shrink_floor_kb=122880,
              shrink_floor_at='2026-12-01T10:00:00+00:00',
              shrink_floor_note='shrink floor set at 120 MiB: swapped in '
                                'at 120 MiB after a shrink')
    out, _, _ = run(vms.ShowVM, ['u1', '-f', 'json'], vm=vm)
    doc = json.loads(out)
    assert doc['shrink_floor_kb'] == 122880
    assert doc['shrink_floor_note'].startswith('shrink floor set at')
    history = [{'timestamp': 't', 'shrink_floor_kb': 122880,
                'shrink_floor_note': 'long', 'state': 'running'}]
    out, _, _ = run(vms.ShowVM, ['u1', '--history', '-f', 'json'], vm=vm,
                    vm_history=history)
    assert json.loads(out)['history'] == [{'timestamp': 't',
                                           'shrink_floor_kb': 122880}]


def test_vm_show_history_with_rollups():
    # microversion 1.3: the history goes on with rolled-up intervals, each
    # marked kind rollup and showing its own figures
    history = [
        {'kind': 'rollup', 'timestamp': 't0', 'interval_start': 's',
         'interval_end': 'e', 'samples': 5, 'host': 'compute-1',
         'booked_kb': 8, 'wss_max_kb': 6, 'wss_max_avg_kb': 7,
         'cpu_used_s': 240.0, 'cpu_spent_s': 240.0, 'cpu_mean_cores': 1.0,
         'cpu_peak_cores': 1.5},
        {'kind': 'sample', 'timestamp': 't1', 'wss_kb': 1,
         'state': 'running'}]
    out, client, _ = run(vms.ShowVM, ['u1', '--history', '-f', 'json'],
                         vm=dict(VM), vm_history=history)
    assert json.loads(out)['history'] == [
        {'kind': 'rollup', 'timestamp': 't0', 'wss_max_avg_kb': 7,
         'interval_start': 's', 'interval_end': 'e', 'samples': 5,
         'wss_max_kb': 6, 'cpu_mean_cores': 1.0, 'cpu_peak_cores': 1.5},
        {'kind': 'sample', 'timestamp': 't1', 'wss_kb': 1}]
    out, client, _ = run(vms.ShowVM, ['u1', '--history', '--history-kind',
                                      'rollup', '-f', 'json'],
                         vm=dict(VM), vm_history=history[:1])
    client.vm_history.assert_called_once_with('u1', limit=20,
                                              kind='rollup')


def test_client_asks_for_the_newest_microversion():
    from memmut.api import microversion
    assert client_mod.MICROVERSION == str(microversion.MAX_VERSION) == '1.5'


@pytest.mark.parametrize('argv,dry_run', [([], None), (['--dry-run'], True),
                                          (['--no-dry-run'], False)])
def test_round_create_dry_run_flags(argv, dry_run):
    finished = dict(ROUND, status='completed')
    out, client, _ = run(rounds.CreateRound, argv + ['-f', 'json'],
                         create_round=finished)
    client.create_round.assert_called_once_with(dry_run=dry_run)
    assert json.loads(out)['status'] == 'completed'


def test_round_create_dry_run_flags_are_exclusive():
    with pytest.raises(SystemExit):
        run(rounds.CreateRound, ['--dry-run', '--no-dry-run'])


def test_wait_for_round_shows_progress():
    states = [dict(ROUND), dict(ROUND, status='completed',
                                migrations=[{'id': 1,
                                             'status': 'planned'}])]
    client = mock.Mock()
    client.round.side_effect = states[1:]
    out = io.StringIO()
    ticks = iter(range(100))
    rnd = rounds.wait_for_round(client, states[0], 60, 1, out,
                                clock=lambda: next(ticks),
                                sleep=lambda s: None)
    assert rnd['status'] == 'completed'
    lines = out.getvalue().splitlines()
    assert lines[0].startswith('Round 3: running, 0/1 migration(s) done')
    assert lines[-1].startswith('Round 3: completed after')


def test_wait_for_round_times_out():
    client = mock.Mock()
    client.round.return_value = dict(ROUND)
    ticks = iter(range(0, 1000, 10))
    with pytest.raises(exceptions.CommandError, match='still running'):
        rounds.wait_for_round(client, dict(ROUND), 25, 1, io.StringIO(),
                              clock=lambda: next(ticks),
                              sleep=lambda s: None)


def test_round_list_and_show():
    out, client, _ = run(rounds.ListRound, ['--status', 'completed',
                                            '--no-dry-run', '-f', 'json'],
                         rounds=[ROUND])
    client.rounds.assert_called_once_with(status='completed', dry_run=False,
                                          limit=None, marker=None)
    assert json.loads(out)[0]['ID'] == 3
    out, client, _ = run(rounds.ShowRound, ['3', '-f', 'json'], round=ROUND)
    assert json.loads(out)['migrations'][0]['status'] == 'planned'


def test_allocation_list_and_show():
    out, client, _ = run(allocations.ListAllocation,
                         ['--host', 's', '--state', 'active', '-f', 'json'],
                         allocations=[ALLOC])
    client.allocations.assert_called_once_with(host='s', state='active',
                                               limit=None, marker=None)
    assert json.loads(out)[0]['Allocation ID'] == 'a1'
    out, _, _ = run(allocations.ShowAllocation, ['a1', '-f', 'value',
                                                 '-c', 'size_kb'],
                    allocation=ALLOC)
    assert out.strip() == '4'


class FakeResponse:
    def __init__(self, status, body, reason='Bad Request'):
        self.status_code = status
        self.reason = reason
        self._body = body
        self.content = json.dumps(body).encode()
        self.text = self.content.decode()

    def json(self):
        return self._body


def test_client_errors_are_one_line():
    resp = FakeResponse(403, {'errors': [{
        'status': 403, 'title': 'Forbidden', 'detail': 'policy says no',
        'code': 'memmut.forbidden', 'request_id': 'req-1'}]}, 'Forbidden')
    assert client_mod.error_message(resp) == (
        'HTTP 403 Forbidden: policy says no (request req-1)')


def test_client_follows_next_links():
    c = client_mod.Client(session=mock.Mock())
    pages = [FakeResponse(200, {'hosts': [{'name': 'a'}], 'links': [
        {'rel': 'next', 'href': 'http://x/hosts?limit=1&marker=a'}]}),
        FakeResponse(200, {'hosts': [], 'links': []})]
    c.adapter = mock.Mock()
    c.adapter.request.side_effect = pages
    assert c.hosts() == [{'name': 'a'}]
    second = c.adapter.request.call_args_list[1]
    assert second.kwargs['params'] == {'limit': '1', 'marker': 'a'}
    c.adapter.request.side_effect = [FakeResponse(
        400, {'errors': [{'detail': 'bad limit', 'status': 400}]})]
    with pytest.raises(exceptions.CommandError, match='HTTP 400'):
        c.hosts(limit=100000)


def test_plugin_option_and_client_class():
    import argparse
    parser = plugin.build_option_parser(argparse.ArgumentParser())
    args = parser.parse_args(['--os-memmut-api-version', '1'])
    assert args.os_memmut_api_version == '1'
    instance = mock.Mock(_api_version={'memmut': '1'}, region_name='R',
                         interface='public')
    instance._cli_options.config = {}
    made = plugin.make_client(instance)
    assert isinstance(made, client_mod.Client)
    assert made.adapter.service_type == 'memmut'


def test_round_summary_is_indented_json_in_tables_and_a_dict_in_json():
    rnd = dict(ROUND, status='completed',
               summary={'hosts': 2, 'by_reason': {'memory overload': 1}})
    out, _, _ = run(rounds.ShowRound, ['3'], round=rnd)
    assert '"memory overload": 1' in out
    out, _, _ = run(rounds.ShowRound, ['3', '-f', 'json'], round=rnd)
    assert json.loads(out)['summary']['by_reason'] == {'memory overload': 1}
