"""On-demand allocation, one VM at a time (local mutualization off).

Each fresh estimate sets the VM's balloon to its demand plus headroom,
rate-limited (:func:`memmut.agent.wss.badis.balloon_target`), every
change logged with its reason. Active baselines (Zballoond,
self-ballooning) instead carry the exact size they want to probe. The
balloon controller ``on_demand`` of ``memmut.agent.balloon_controllers``;
``mutualization`` is :class:`~.local_controller.LocalController`.
"""

from oslo_log import log as logging

from memmut.agent.wss import badis
from memmut import units
from memmut.virt import driver as virt_driver

LOG = logging.getLogger(__name__)
_mib = units.fmt_kb


class OnDemandController:
    """Sets each VM's balloon from its fresh estimate (no sharing between
    VMs: that is local mutualization's job)."""

    def __init__(self, conf, driver, controller_api=None):
        self.driver = driver
        self.params = badis.TargetParams.from_conf(conf)
        self._failed = set()          # (uuid, error type) already logged

    def plan(self, vm, est):
        """``(target_kb, reason)`` for one VM, or None."""
        if est is None or not est.fresh:
            return None
        if est.probe_kb is not None:
            floor = min(self.params.floor_kb, vm.booked_kb)
            target = min(vm.booked_kb, max(floor, est.probe_kb))
            if target == vm.balloon_kb:
                return None
            return target, '%s %s -> %s: %s probes this size' % (
                'grow' if target > vm.balloon_kb else 'shrink',
                _mib(vm.balloon_kb), _mib(target), est.source)
        return badis.balloon_target(est.demand_kb, vm.balloon_kb,
                                    vm.booked_kb, self.params, est.source)

    def vm_status(self, uuid):
        """No roles without mutualization."""
        return None

    @property
    def reservoir_kb(self):
        return 0

    def step(self, vms, estimates, now=None):
        """Apply the plans; returns [(uuid, target_kb, reason)] made."""
        done = []
        for vm in vms:
            if vm.state != 'running':
                continue
            plan = self.plan(vm, estimates.get(vm.uuid))
            if plan is None:
                continue
            target, reason = plan
            try:
                applied = self.driver.set_balloon(vm.uuid, target)
            except virt_driver.VMNotFound:
                continue
            except (virt_driver.InvalidBalloonTarget,
                    virt_driver.HypervisorUnavailable) as e:
                LOG.warning('VM %s (%s): balloon change failed (%s): %s',
                            vm.name, vm.uuid, reason, e)
                continue
            except Exception as e:
                # Any other hypervisor error (e.g. libvirt's "cannot acquire
                # state change lock" during a migration) is this VM's: the
                # others are still ballooned. Logged once per kind.
                kind = (vm.uuid, type(e).__name__)
                if kind not in self._failed:
                    self._failed.add(kind)
                    LOG.warning('VM %s (%s): balloon change failed (%s): '
                                '%s: %s', vm.name, vm.uuid, reason,
                                type(e).__name__, e)
                continue
            if applied != target:
                reason += '; raised to the VM\'s floor %s' % _mib(applied)
            LOG.info('VM %s (%s): balloon %s', vm.name, vm.uuid, reason)
            done.append((vm.uuid, applied, reason))
        return done
