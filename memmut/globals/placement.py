"""MEMORY_MB allocation ratios in placement from measured working sets
(``[placement] update_allocation_ratio``, off by default).

For each host whose agent is up, the ratio is the booked memory of its
running VMs over their demand (:func:`memmut.sizing.demand` of the
WSS^max_avg their agent reported, the figure consolidation rounds pack
on; the booking while a VM is younger than a time slice), clamped to
``[placement] min_allocation_ratio .. max_allocation_ratio``. A host
without running VMs is left as it is.

Placement is updated read-modify-write: the MEMORY_MB inventory is read
with its provider generation, only ``allocation_ratio`` is changed (never
``reserved``, ``total`` or the units), and the write names the generation
it read; a 409 (someone else wrote in between, typically nova-compute's
resource tracker) re-reads and retries.
"""

import time

from keystoneauth1 import loading as ks_loading
from oslo_log import log as logging

from memmut.conf import placement as placement_conf
from memmut.globals import rounds
from memmut import sizing

LOG = logging.getLogger(__name__)

MICROVERSION = '1.26'      # inventories may be PUT with total == reserved
RC = 'MEMORY_MB'


class PlacementError(Exception):
    pass


def load_adapter(conf):
    group = placement_conf.GROUP
    auth = ks_loading.load_auth_from_conf_options(conf, group)
    session = ks_loading.load_session_from_conf_options(conf, group,
                                                        auth=auth)
    return ks_loading.load_adapter_from_conf_options(
        conf, group, session=session, auth=auth,
        default_microversion=MICROVERSION)


def host_ratio(conf, db, vms, now):
    """(ratio, booked_kb, demand_kb) for one host's VMs, or None."""
    c = conf.placement
    b = conf.badis
    booked = demand = 0.0
    for vm in vms:
        if vm.state not in rounds.RUNNING_STATES:
            continue
        samples = db.vm_samples(vm.uuid, since=now - 2 * b.time_slice)
        booked_mb = vm.booked_kb / 1024.0
        # the figure rounds pack on: the agent's WSS^max_avg, the booking
        # while the VM is cold or reports none
        wss_mb = rounds.memory_history(
            samples, now, float(conf.consolidation.interval), 1, booked_mb,
            vm.first_seen, b.time_slice,
            carry_floor=conf.consolidation.pack_on_shrink_floor)
        wss_mb = wss_mb[-1] if wss_mb else booked_mb
        booked += booked_mb
        demand += float(sizing.demand(wss_mb, booked_mb,
                                      b.headroom_kb / 1024.0,
                                      b.headroom_fraction))
    if booked <= 0:
        return None
    ratio = booked / max(demand, 1.0)
    ratio = min(max(ratio, c.min_allocation_ratio), c.max_allocation_ratio)
    return round(ratio, 3), booked * 1024, demand * 1024


def _check(resp, what):
    if resp.status_code >= 400:
        raise PlacementError('%s: HTTP %d %s' % (what, resp.status_code,
                                                 resp.text[:200]))
    return resp.json()


def set_memory_ratio(adapter, host, ratio, min_change=0.0, retries=5):
    """Set ``host``'s MEMORY_MB allocation_ratio; the ratio placement had
    (unchanged when within ``min_change``)."""
    providers = _check(adapter.get('/resource_providers', params={
        'name': host}, raise_exc=False), 'resource provider %s' % host)
    if not providers.get('resource_providers'):
        raise PlacementError('no resource provider named %s' % host)
    uuid = providers['resource_providers'][0]['uuid']
    url = '/resource_providers/%s/inventories/%s' % (uuid, RC)
    for _ in range(retries):
        inv = _check(adapter.get(url, raise_exc=False),
                     '%s inventory of %s' % (RC, host))
        old = inv['allocation_ratio']
        if abs(old - ratio) <= min_change:
            return old
        body = {k: inv[k] for k in ('total', 'reserved', 'min_unit',
                                    'max_unit', 'step_size')}
        body['allocation_ratio'] = ratio
        body['resource_provider_generation'] = inv[
            'resource_provider_generation']
        resp = adapter.put(url, json=body, raise_exc=False)
        if resp.status_code == 409:
            LOG.debug('%s inventory of %s changed meanwhile; retrying',
                      RC, host)
            continue
        _check(resp, 'updating %s inventory of %s' % (RC, host))
        return old
    raise PlacementError('%s inventory of %s kept changing (%d conflicts)'
                         % (RC, host, retries))


class RatioUpdater:
    def __init__(self, conf, db, adapter=None, clock=time.time):
        self.conf = conf
        self.db = db
        self._adapter = adapter
        self._clock = clock

    @property
    def adapter(self):
        if self._adapter is None:
            self._adapter = load_adapter(self.conf)
        return self._adapter

    def update(self):
        """One pass over the up hosts; {host: ratio set} (errors logged)."""
        now = self._clock()
        down_after = self.conf.controller.host_down_after
        done = {}
        vms = self.db.list_vms()
        for host in self.db.list_hosts():
            if host.last_report_at is None or \
                    now - host.updated_at > down_after:
                continue
            figures = host_ratio(self.conf, self.db,
                                 [v for v in vms if v.host_id == host.id],
                                 now)
            if figures is None:
                continue
            ratio, booked_kb, demand_kb = figures
            try:
                old = set_memory_ratio(self.adapter, host.name, ratio,
                                       self.conf.placement.min_change)
            except Exception as e:
                LOG.warning('Placement ratio of %s not updated: %s',
                            host.name, e)
                continue
            if abs(old - ratio) > self.conf.placement.min_change:
                LOG.info('Placement %s allocation_ratio of %s: %.3f -> %.3f '
                         '(booked %d MiB, demand %d MiB)', RC, host.name,
                         old, ratio, booked_kb // 1024, demand_kb // 1024)
            done[host.name] = ratio
        return done
