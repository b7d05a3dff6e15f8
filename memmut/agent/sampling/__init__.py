"""Access-sampling back-ends of the "VMware" technique, and their choice.

Back-ends (all behind :class:`base.Sampler`):

``smaps``
    clear_refs + Referenced of the guest RAM mapping; TCG only.
``page_idle``
    idle page tracking of n random guest pages; TCG and KVM.
``sim``
    the simulated hypervisor's sampler.
``kmod``
    memmut's kernel helper (/dev/memmut_wss): n random guest pages, host
    page tables and, through the MMU notifier, KVM's; TCG and KVM.

A later back-end (memmut's kernel helper, DAMON) registers itself with
:func:`register`; ``[agent] sampling_backend = auto`` tries the registered
back-ends in :data:`AUTO_ORDER` order and takes the first whose
:meth:`~base.Sampler.capability` says it can see the VM's guest accesses.
A back-end named explicitly that cannot see a VM is refused for that VM
(an error in the log, once); the caller then runs without sampling and says
so in the estimate's source.
"""

from oslo_log import log as logging

from memmut.agent.sampling import base
from memmut.agent.sampling import kmod
from memmut.agent.sampling import page_idle
from memmut.agent.sampling import sim
from memmut.agent.sampling import smaps

LOG = logging.getLogger(__name__)

AUTO_ORDER = ['sim', 'smaps', 'page_idle']
_FACTORIES = {}


def register(name, factory, auto_rank=None):
    """Make a back-end available: ``factory(conf, driver) -> Sampler``.
    ``auto_rank`` is its place in the ``auto`` order (None: last)."""
    _FACTORIES[name] = factory
    if name not in AUTO_ORDER:
        if auto_rank is None:
            AUTO_ORDER.append(name)
        else:
            AUTO_ORDER.insert(auto_rank, name)


register('smaps', lambda conf, driver: smaps.SmapsSampler(
    offset_kb=conf.badis.referenced_offset_kb))
register('page_idle', lambda conf, driver: page_idle.PageIdleSampler(
    pages=conf.badis.sample_pages))
register('sim', lambda conf, driver: sim.SimSampler(
    driver, pages=conf.badis.sample_pages))
register('kmod', lambda conf, driver: kmod.KmodSampler(
    pages=conf.badis.sample_pages))


class SamplerChoice:
    """Chooses and remembers the back-end of every VM of a host."""

    def __init__(self, conf, driver, samplers=None):
        self.setting = conf.agent.sampling_backend
        self.driver = driver
        if samplers is None:
            names = (AUTO_ORDER if self.setting == 'auto'
                     else [self.setting])
            samplers = {n: _FACTORIES[n](conf, driver) for n in names
                        if n in _FACTORIES}
        self.samplers = samplers
        self._chosen = {}          # uuid -> Sampler or None

    def pid(self, vm):
        try:
            return self.driver.qemu_pid(vm.uuid)
        except Exception as e:      # a vanished VM, an unreadable pid file
            LOG.debug('VM %s (%s): no QEMU pid: %s', vm.name, vm.uuid, e)
            return None

    def for_vm(self, vm, pid):
        """The back-end to use for this VM, or None (decided once)."""
        if vm.uuid in self._chosen:
            return self._chosen[vm.uuid]
        names = AUTO_ORDER if self.setting == 'auto' else [self.setting]
        refused = []
        chosen = None
        for name in names:
            sampler = self.samplers.get(name)
            if sampler is None or (
                    name == 'sim' and self.setting == 'auto' and
                    not hasattr(self.driver, 'access_sample')):
                continue
            cap = sampler.capability(vm, pid)
            if cap.usable:
                chosen = sampler
                LOG.info('VM %s (%s): access sampling with %s (%s)',
                         vm.name, vm.uuid, name, cap.reason)
                break
            refused.append('%s: %s' % (name, cap.reason))
        if chosen is None:
            if self.setting == 'auto':
                LOG.warning('VM %s (%s): no access-sampling back-end can '
                            'see its guest accesses (%s); its working set '
                            'is estimated from the balloon statistics '
                            'instead', vm.name, vm.uuid,
                            '; '.join(refused) or 'none available')
            else:
                LOG.error('VM %s (%s): refusing sampling back-end %s: %s; '
                          'its working set is estimated from the balloon '
                          'statistics instead', vm.name, vm.uuid,
                          self.setting, '; '.join(refused) or
                          'not available')
        self._chosen[vm.uuid] = chosen
        return chosen

    def forget(self, uuid):
        sampler = self._chosen.pop(uuid, None)
        if sampler is not None:
            sampler.forget(uuid)

    def reset(self, uuid):
        """Decide again next time (e.g. after a sampling failure)."""
        self.forget(uuid)


__all__ = ['base', 'register', 'SamplerChoice', 'AUTO_ORDER']
