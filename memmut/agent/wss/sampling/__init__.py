"""Access-sampling back-ends of the "VMware" technique, and their choice.

Back-ends (all behind :class:`base.Sampler`, registered in ``setup.cfg``
under ``memmut.agent.samplers``):

``sim``
    the simulated hypervisor's sampler.
``smaps``
    clear_refs + Referenced of the guest RAM mapping; TCG only.
``page_idle``
    idle page tracking of n random guest pages; TCG and KVM.
``kmod``
    memmut's kernel helper (/dev/memmut_wss): n random guest pages, host
    page tables and, through the MMU notifier, KVM's; TCG and KVM.

``[agent] sampling_backend = auto`` tries the registered back-ends in the
order of their ``auto_rank`` and takes the first whose
:meth:`~base.Sampler.capability` says it can see the VM's guest accesses.
A back-end named explicitly that cannot see a VM is refused for that VM
(an error in the log, once); the caller then runs without sampling and says
so in the estimate's source.
"""

from oslo_log import log as logging

from memmut.agent.wss.sampling import base
from memmut import plugins

LOG = logging.getLogger(__name__)


def auto_order(factories):
    """Names of the back-ends ``auto`` tries, in order."""
    ranked = [(f.auto_rank, n) for n, f in factories.items()
              if getattr(f, 'auto_rank', None) is not None]
    return [n for _, n in sorted(ranked)]


def load_factories(names=None):
    """The registered back-end classes by name (``names``: only these)."""
    names = plugins.names(plugins.SAMPLERS) if names is None else names
    return {n: plugins.load(plugins.SAMPLERS, n) for n in names}


class SamplerChoice:
    """Chooses and remembers the back-end of every VM of a host."""

    def __init__(self, conf, driver, samplers=None):
        self.setting = conf.agent.sampling_backend
        self.driver = driver
        if self.setting == 'none':
            samplers = {}
        if samplers is None:
            factories = load_factories(
                None if self.setting == 'auto' else [self.setting])
            self.order = (auto_order(factories) if self.setting == 'auto'
                          else [self.setting])
            samplers = {n: factories[n].from_conf(conf, driver)
                        for n in self.order}
        elif self.setting == 'none':
            self.order = []
        else:
            self.order = (sorted(samplers, key=lambda n: (
                getattr(samplers[n], 'auto_rank', None) is None,
                getattr(samplers[n], 'auto_rank', 0) or 0, n))
                if self.setting == 'auto' else [self.setting])
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
        names = self.order
        refused = []
        chosen = None
        for name in names:
            sampler = self.samplers.get(name)
            if sampler is None:
                continue
            cap = sampler.capability(vm, pid)
            if cap.usable:
                chosen = sampler
                LOG.info('VM %s (%s): access sampling with %s (%s)',
                         vm.name, vm.uuid, name, cap.reason)
                break
            refused.append('%s: %s' % (name, cap.reason))
        if chosen is None:
            if self.setting == 'none':
                LOG.info('VM %s (%s): access sampling is off ([agent] '
                         'sampling_backend = none); its working set is '
                         'estimated from the balloon statistics', vm.name,
                         vm.uuid)
            elif self.setting == 'auto':
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


__all__ = ['base', 'SamplerChoice', 'auto_order', 'load_factories']
