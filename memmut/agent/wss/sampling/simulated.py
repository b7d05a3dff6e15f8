"""The ``sim`` back-end: access sampling of the simulated hypervisor's VMs.

It asks :meth:`memmut.virt.simulated.SimDriver.access_sample` for ``n`` random
pages at the end of each interval; the simulated guest answers from its
working set with binomial sampling noise, so Badis runs on the embedded
default exactly as it does on a real host, errors included.  Drivers say
whether they can through
:attr:`memmut.virt.driver.Driver.simulates_access_sampling`.
"""

import time

from memmut.agent.wss.sampling import base


class SimSampler(base.Sampler):
    name = 'sim'
    auto_rank = 0

    @classmethod
    def from_conf(cls, conf, driver):
        return cls(driver, pages=conf.badis.sample_pages)

    def __init__(self, driver, pages=100, clock=time.monotonic):
        self.driver = driver
        self.pages = pages
        self.clock = clock
        self._started = {}

    def capability(self, vm, pid):
        if not self.driver.simulates_access_sampling:
            return base.Capability(
                self.name, False, 'the %s driver does not simulate access '
                'sampling' % self.driver.name)
        return base.Capability(self.name, True,
                               'simulated sampling of %d random pages'
                               % self.pages)

    def begin(self, vm, pid):
        self._started[vm.uuid] = self.clock()

    def end(self, vm, pid):
        started = self._started.pop(vm.uuid, None)
        if started is None:
            return None
        try:
            accessed, sampled, span = self.driver.access_sample(
                vm.uuid, self.pages)
        except Exception as e:
            raise base.SamplerError(str(e))
        return base.AccessSample(backend=self.name, accessed=accessed,
                                 sampled=sampled, span_kb=span,
                                 interval_s=self.clock() - started)

    def forget(self, uuid):
        self._started.pop(uuid, None)
