"""memmut's rounds and nova executor against a real nova API.

nova's own in-process functional fixtures (``ProviderUsageBaseTestCase``:
the nova API behind wsgi-intercept, conductor, scheduler, placement and
two fake-driver computes, host1 and host2) run here, and memmut's
executor reaches their API over keystoneauth + openstacksdk exactly as in
production, with only the endpoint and the auth headers made up.

This module runs in a process of its own (``test_nova_executor.py``
starts it), because nova's test package chooses its concurrency mode at
import time and must come before memmut and oslo.messaging:

* nova runs in its native threading mode (``OS_NOVA_DISABLE_EVENTLET_
  PATCHING=1``, which also forbids importing eventlet): memmut runs on
  threads too, so nothing is monkey-patched. memmut's own choice of
  oslo.service's threading backend (memmut/__init__.py) then finds it
  already made, and futurist's probe for eventlet finds it absent.
* ``memmut.conf`` registers memmut's options on oslo.config's global
  ``CONF``, which in this process is nova's (both have ``[DEFAULT] host``,
  ``[libvirt]``...): memmut gets a ConfigOpts of its own while it is first
  imported. Its rounds and executor take their conf explicitly (a private
  one here), so they never touch nova's.
"""

import os
import sys

os.environ.setdefault('OS_NOVA_DISABLE_EVENTLET_PATCHING', '1')

from nova.tests.functional import integrated_helpers  # noqa: E402
from oslo_config import cfg  # noqa: E402

_nova_conf = cfg.CONF
cfg.CONF = cfg.ConfigOpts()
try:
    import memmut.conf  # noqa: E402,F401
finally:
    cfg.CONF = _nova_conf

import threading  # noqa: E402
import time  # noqa: E402

import fixtures  # noqa: E402
from openstack import proxy as sdk_proxy  # noqa: E402

from memmut.db import api as db_api  # noqa: E402
from memmut.db import migration  # noqa: E402
from memmut.globals import executor  # noqa: E402
from memmut.globals import rounds  # noqa: E402
from memmut import objects  # noqa: E402
from tests import common  # noqa: E402

GIB_KB = 1 << 20
# nova's OpenStackSDKFixture stubs this out for nova's own SDK users (its
# placement client); the executor's probe of the compute endpoint (version
# discovery against the API) should really run.
REAL_GET_ENDPOINT = sdk_proxy.Proxy.get_endpoint


def api_paste_config():
    """nova's wheel installs api-paste.ini as data under the prefix."""
    candidates = [os.path.join(sys.prefix, 'etc', 'nova', 'api-paste.ini')]
    try:
        from importlib import metadata
        for f in metadata.distribution('nova').files or ():
            if str(f).endswith('etc/nova/api-paste.ini'):
                candidates.append(str(f.locate()))
    except Exception:
        pass
    for path in candidates:
        if os.path.exists(path):
            return os.path.abspath(path)
    raise RuntimeError('nova\'s api-paste.ini not found in %s' % candidates)


class NovaExecutorTest(integrated_helpers.ProviderUsageBaseTestCase):
    compute_driver = 'fake.MediumFakeDriver'

    def setUp(self):
        self.flags(api_paste_config=api_paste_config(), group='wsgi')
        super().setUp()
        stub = sdk_proxy.Proxy.get_endpoint

        def get_endpoint(proxy, *args, **kwargs):
            # The compute endpoint for real (the executor probes it);
            # nova's stub for nova's own placement client.
            if proxy.service_type == 'compute':
                return REAL_GET_ENDPOINT(proxy, *args, **kwargs)
            return stub(proxy, *args, **kwargs)
        self.useFixture(fixtures.MonkeyPatch(
            'openstack.proxy.Proxy.get_endpoint', get_endpoint))
        self.compute1 = self._start_compute('host1')
        self.compute2 = self._start_compute('host2')
        self.flavor = self.api.get_flavors()[0]

        tmp = self.useFixture(fixtures.TempDir()).path
        url = 'sqlite:///%s' % os.path.join(tmp, 'memmut.sqlite')
        migration.upgrade(url)
        self.db = db_api.Database(url)
        self.addCleanup(self.db.close)

        # memmut's [nova] group as an operator would write it, pointed at
        # the fixture's API (no keystone here: auth_type none plus the
        # headers nova's stubbed auth middleware reads).
        self.conf = common.private_conf(
            nova={'auth_type': 'none',
                  'endpoint_override': self.api_fixture.base_url,
                  'poll_interval': 0.1, 'retry_interval': 0.1,
                  'migration_retries': 1, 'migration_timeout': 60},
            consolidation={'interval': 300, 'history_length': 24})
        self.addCleanup(self.conf.reset)
        self.session = executor.load_session(self.conf)
        self.session.additional_headers.update({
            'X-Auth-User': 'admin',
            'X-Auth-Project-Id': self.api_fixture.project_id,
            'X-Roles': 'admin,member,reader'})

    def _clear_attrs(self):
        # nova's TestCase deletes every instance attribute at clean-up,
        # including the test method pytest set on the instance and
        # deletes itself afterwards.
        pass

    def _executor(self, conf=None, db=None, stop=None):
        return executor.NovaExecutor(conf or self.conf, db or self.db,
                                     session=self.session, stop=stop)

    def _host_of(self, server):
        return self.admin_api.get_server(server['id'])[
            'OS-EXT-SRV-ATTR:host']

    def _nova_migrations(self, server):
        return [m for m in self.admin_api.get_migrations()
                if m['instance_uuid'] == server['id']]

    def _report(self, vms_on_host1, host1_kb, duration=7200.0, step=300.0,
                max_avg=False):
        """Agents of host1 and host2 report for ``duration`` s, up to now:
        ``vms_on_host1`` is [(uuid, booked_kb, wss_kb)]; with ``max_avg``
        the agents report wss_kb as WSS^max_avg too (an hour's slices)."""
        extra = (dict(max_avg_window=5, max_avg_slice_s=3600.0)
                 if max_avg else {})
        now = time.time()
        start = now - duration
        seq, t = 0, start
        while t <= now + 1e-6:
            seq += 1
            for host, mem_kb, vms in (('host1', host1_kb, vms_on_host1),
                                      ('host2', 8 * GIB_KB, [])):
                self.db.store_report(objects.HostReport(
                    host=host, boot_id='b-' + host, seq=seq, timestamp=t,
                    hypervisor='kvm', memory_total_kb=mem_kb,
                    memory_free_kb=mem_kb // 4, cpu_count=4, cpu_util=0.2,
                    vms=[objects.VMReport(
                        uuid=uuid, name='instance-%d' % i, timestamp=t,
                        state='running', booked_kb=booked,
                        balloon_kb=booked,
                        cpu_time_ns=int(0.2 * (t - start) * 1e9),
                        nova_instance=True, wss_kb=wss,
                        wss_max_avg_kb=wss if max_avg else None,
                        wss_estimator='badis', **extra)
                        for i, (uuid, booked, wss) in enumerate(vms)]))
            t += step

    def test_round_live_migrates_a_server_through_nova(self):
        server = self._boot_and_check_allocations(self.flavor, 'host1')
        # host1 (2 GiB) is overloaded on memory by the server's working
        # set (2000 MiB of its 2 GiB); host2 is empty: the round moves it.
        self._report([(server['id'], 2 * GIB_KB, 2000 << 10)], 2 * GIB_KB)
        runner = rounds.RoundRunner(
            self.conf, self.db,
            executor_factory=lambda conf, db, stop: self._executor(
                conf, db, stop))
        result = runner.run(dry_run=False)

        self.assertEqual('completed', result.status, result.reason)
        self.assertEqual({'host1': 'memory'}, result.plan.overloaded)
        (row,) = self.db.list_migrations(round_id=result.round_id)
        self.assertEqual(
            (server['id'], 'host1', 'host2', 'memory', 'overload',
             'completed', 1, None),
            (row.vm_uuid, row.source_host, row.dest_host, row.resource,
             row.kind, row.status, row.attempts, row.error))
        self.assertLessEqual(row.started_at, row.finished_at)
        rnd = self.db.get_round(result.round_id)
        self.assertEqual(('completed', {'completed': 1}),
                         (rnd.status, rnd.summary['outcomes']))

        # nova agrees: the server runs on host2, its live migration is
        # completed and placement holds its resources there.
        self.assertEqual('host2', self._host_of(server))
        self._wait_for_migration_status(server, ['completed'])
        self.assertFlavorMatchesAllocation(
            self.flavor, server['id'],
            self._get_provider_uuid_by_host('host2'))

    def test_a_round_plans_around_a_live_migration_still_running(self):
        """round_pacing clock: while nova still live-migrates the server
        of a first round, a second round plans around it (the VM is not
        planned again, its memory is reserved on host2), then the first
        completes."""
        server = self._boot_and_check_allocations(self.flavor, 'host1')
        self._report([(server['id'], 2 * GIB_KB, 2000 << 10)], 2 * GIB_KB)
        entered, release = threading.Event(), threading.Event()

        def slow(context, instance, dest, post_method, recover_method,
                 block_migration=False, migrate_data=None):
            # a long copy: the hypervisor finishes when the test says so
            entered.set()
            release.wait(60)
            post_method(context, instance, dest, block_migration,
                        migrate_data)
        self.useFixture(fixtures.MockPatch(
            'nova.virt.fake.FakeDriver.live_migration', side_effect=slow))
        runner = rounds.RoundRunner(
            self.conf, self.db,
            executor_factory=lambda conf, db, stop: self._executor(
                conf, db, stop))
        self.assertEqual('clock', runner.pacing)
        first = {}
        thread = threading.Thread(
            target=lambda: first.update(r=runner.run(dry_run=False)))
        thread.start()
        try:
            self.assertTrue(entered.wait(60))
            self.assertEqual(
                {server['id']: ('host1', 'host2')},
                rounds.in_flight_migrations(self.db))
            second = runner.run(dry_run=True)
            self.assertEqual('completed', second.status, second.reason)
            rnd = self.db.get_round(second.round_id)
            self.assertEqual((1, 0, 0), (rnd.summary['in_flight'],
                                         rnd.summary['vms'],
                                         rnd.summary['migrations']))
        finally:
            release.set()
            thread.join(120)
        self.assertEqual('completed', first['r'].status, first['r'].reason)
        self.assertEqual('host2', self._host_of(server))
        self.assertEqual({}, rounds.in_flight_migrations(self.db))

    def test_a_failing_migration_is_retried_then_recorded_failed(self):
        server = self._boot_and_check_allocations(self.flavor, 'host1')

        def fails(context, instance, dest, post_method, recover_method,
                  block_migration=False, migrate_data=None):
            # What a hypervisor does when the migration stream breaks:
            # roll back, the server keeps running on the source.
            recover_method(context, instance, dest, migrate_data)
        self.useFixture(fixtures.MockPatch(
            'nova.virt.fake.FakeDriver.live_migration', side_effect=fails))

        rnd = self.db.create_round()
        mig = self.db.add_migration(rnd.id, server['id'], 'host1', 'host2',
                                    'memory', 'overload')
        out = self._executor().execute([mig])

        self.assertEqual('failed', out[mig.id].status)
        (row,) = self.db.list_migrations(round_id=rnd.id)
        self.assertEqual(('failed', 2, 'host2'),
                         (row.status, row.attempts, row.dest_host))
        nova_migrations = self._nova_migrations(server)
        self.assertEqual(['failed', 'failed'],
                         [m['status'] for m in nova_migrations])
        for n, m in enumerate(sorted(nova_migrations,
                                     key=lambda m: m['id']), 1):
            self.assertIn('attempt %d: server still on host1 (ACTIVE), '
                          'nova migration %s failed' % (n, m['id']),
                          row.error)
        self.assertEqual('host1', self._host_of(server))
        self.assertIsNotNone(row.finished_at)

    def test_a_destination_down_is_refused_and_recorded(self):
        server = self._boot_and_check_allocations(self.flavor, 'host1')
        service = self.admin_api.get_services(
            host='host2', binary='nova-compute')[0]
        self.compute2.stop()
        self.admin_api.put_service(service['id'], {'forced_down': 'true'})

        rnd = self.db.create_round()
        mig = self.db.add_migration(rnd.id, server['id'], 'host1', 'host2',
                                    'cpu', 'underload')
        self._executor().execute([mig])

        (row,) = self.db.list_migrations(round_id=rnd.id)
        # nova's scheduler refuses host2 and the API the request (HTTP
        # 400, "No valid host"): not retried, the next round plans again.
        self.assertEqual(('failed', 1), (row.status, row.attempts))
        self.assertIn('nova refused the live migration: '
                      'BadRequestException: 400', row.error)
        self.assertIn('No valid host was found', row.error)
        self.assertEqual('host1', self._host_of(server))

    def test_placement_memory_ratio_from_working_sets(self):
        """memmut's ratio reaches nova's placement, leaves the inventory's
        total and reserved alone, and survives nova-compute's resource
        tracker (which keeps a ratio when ram_allocation_ratio is unset)."""
        from keystoneauth1 import adapter as ks_adapter
        from keystoneauth1 import session as ks_session
        from memmut.globals import placement

        server = self._boot_and_check_allocations(self.flavor, 'host1')
        booked = self.flavor['ram'] << 10
        self._report([(server['id'], booked, booked // 4)], 8 * GIB_KB,
                     max_avg=True)
        rp = self._get_provider_uuid_by_host('host1')
        url = '/resource_providers/%s/inventories/MEMORY_MB' % rp
        before = self.placement.get(url, version='1.26').body
        fixture = self.placement.fixture     # the PlacementFixture
        adapter = ks_adapter.Adapter(
            ks_session.Session(auth=None), service_type='placement',
            endpoint_override=fixture.endpoint,
            default_microversion=placement.MICROVERSION,
            additional_headers={'x-auth-token': fixture.token})
        conf = common.private_conf(
            placement={'max_allocation_ratio': 4.0},
            consolidation={'interval': 300})
        self.addCleanup(conf.reset)
        done = placement.RatioUpdater(conf, self.db, adapter=adapter).update()

        self.assertEqual(['host1'], sorted(done))
        self.assertGreater(done['host1'], 2.0)       # WSS a quarter booked
        after = self.placement.get(url, version='1.26').body
        self.assertAlmostEqual(done['host1'], after['allocation_ratio'],
                               places=3)
        for key in ('total', 'reserved', 'min_unit', 'max_unit',
                    'step_size'):
            self.assertEqual(before[key], after[key], key)

        self._run_periodics()
        again = self.placement.get(url, version='1.26').body
        self.assertAlmostEqual(done['host1'], again['allocation_ratio'],
                               places=3)

    def test_a_sleeping_host_is_powered_on_and_receives_the_vm(self):
        """host2 was powered off by memmut (its nova-compute stopped and
        forced down); host1 is overloaded on memory: the round runs the
        power-on hook, waits for nova to list host2's compute as up, and
        only then live-migrates the server there."""
        server = self._boot_and_check_allocations(self.flavor, 'host1')
        (svc,) = self.admin_api.get_services(binary='nova-compute',
                                             host='host2')
        self.compute2.stop()
        self.admin_api.put_service_force_down(svc['id'], True)

        # host2 reported two hours ago, then memmut powered it off
        past = db_api.Database(self.db.url, clock=lambda: time.time() - 7200)
        self.addCleanup(past.close)
        past.store_report(objects.HostReport(
            host='host2', boot_id='b-host2', seq=1,
            timestamp=time.time() - 7200, hypervisor='kvm',
            memory_total_kb=8 * GIB_KB, memory_free_kb=8 * GIB_KB,
            cpu_count=4, cpu_util=0.0, vms=[]))
        self.db.set_power_state('host2', 'off', 'round 1')
        self._report_host1_only([(server['id'], 2 * GIB_KB, 2000 << 10)],
                                2 * GIB_KB)

        woken = []

        def power_on(host):
            # what a BMC and a booting node do: nova-compute comes back
            woken.append(host)
            self.compute2 = self.restart_compute_service(self.compute2)
            self.admin_api.put_service_force_down(svc['id'], False)
            return True, 'powered on'
        self.conf.set_override('power_on_wait', 60, group='consolidation')
        runner = rounds.RoundRunner(
            self.conf, self.db, power_on=power_on,
            executor_factory=lambda conf, db, stop: self._executor(
                conf, db, stop))
        result = runner.run(dry_run=False)

        self.assertEqual('completed', result.status, result.reason)
        self.assertEqual(['host2'], woken)
        self.assertEqual(['host2'], result.powered_on)
        self.assertIn('nova-compute on host2 is up',
                      result.summary['power_on']['host2'])
        (row,) = self.db.list_migrations(round_id=result.round_id)
        self.assertEqual(('host2', 'completed'), (row.dest_host, row.status))
        self.assertEqual('host2', self._host_of(server))
        self.assertEqual('on', self.db.get_host('host2').power_state)

    def _report_host1_only(self, vms, host1_kb, duration=7200.0,
                           step=300.0):
        now = time.time()
        start = now - duration
        seq, t = 0, start
        while t <= now + 1e-6:
            seq += 1
            self.db.store_report(objects.HostReport(
                host='host1', boot_id='b-host1', seq=seq, timestamp=t,
                hypervisor='kvm', memory_total_kb=host1_kb,
                memory_free_kb=host1_kb // 4, cpu_count=4, cpu_util=0.2,
                vms=[objects.VMReport(
                    uuid=uuid, name='instance-%d' % i, timestamp=t,
                    state='running', booked_kb=booked, balloon_kb=booked,
                    cpu_time_ns=int(0.2 * (t - start) * 1e9),
                    nova_instance=True, wss_kb=wss, wss_estimator='badis')
                    for i, (uuid, booked, wss) in enumerate(vms)]))
            t += step
