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


class ReferenceStream:
    """A guest given as a page-reference stream, for tests and studies of
    the sampling estimators: ``advance(t)`` applies the references up to
    time ``t`` (``refs``: an iterable of (time, page), in time order) and
    remembers when each page was last touched. ``pages`` is the size of
    the guest's memory in 4 KiB pages."""

    def __init__(self, refs, pages):
        self._refs = iter(refs)
        self._next = next(self._refs, None)
        self.pages = pages
        self.last_touch = {}
        self.now = 0.0

    def advance(self, t):
        while self._next is not None and self._next[0] <= t:
            ts, page = self._next
            self.last_touch[page] = ts
            self._next = next(self._refs, None)
        self.now = t


class StreamSampler(base.Sampler):
    """Access sampling of :class:`ReferenceStream` guests (``guests``:
    uuid -> stream): ``pages`` random pages (None: every page, as the smaps
    back-end) are "cleared" at :meth:`begin` and counted accessed when
    touched since; :meth:`peek` re-reads them, as page_idle does."""
    name = 'sim-stream'
    can_peek = True

    def __init__(self, guests, pages=None, rng=None):
        import random
        self.guests = guests
        self.pages = pages
        self.rng = rng or random.Random(0)
        self._started = {}
        self._short = {}

    def capability(self, vm, pid):
        return base.Capability(self.name, vm.uuid in self.guests,
                               'reference-stream guest',
                               exact=self.pages is None)

    def begin(self, vm, pid):
        g = self.guests[vm.uuid]
        chosen = (range(g.pages) if self.pages is None else
                  self.rng.sample(range(g.pages), min(self.pages, g.pages)))
        self._started[vm.uuid] = (g.now, list(chosen))
        self._short.pop(vm.uuid, None)

    # a second set of pages outside the first's 2 MiB regions, as the
    # page_idle and kmod back-ends keep it (short_set); not beside every
    # page (smaps: one clear for the whole process)
    @property
    def can_short(self):
        return self.pages is not None

    def begin_short(self, vm, pid, pages):
        started = self._started.get(vm.uuid)
        if started is None or self.pages is None:
            raise base.SamplerError('no running interval of sampled pages')
        g = self.guests[vm.uuid]
        # a reference stream has no huge pages: only the main set's own
        # pages are left out
        self._short[vm.uuid] = (g.now, base.short_pages(
            self.rng, g.pages, pages, started[1]))

    def peek_short(self, vm, pid):
        started = self._short.get(vm.uuid)
        if started is None:
            return None
        return self._read(vm, started, exact=False)

    def peek(self, vm, pid):
        started = self._started.get(vm.uuid)
        if started is None:
            return None
        return self._read(vm, started, exact=self.pages is None)

    def _read(self, vm, started, exact):
        t0, chosen = started
        g = self.guests[vm.uuid]
        touched = g.last_touch
        accessed = sum(1 for p in chosen if touched.get(p, -1.0) >= t0)
        span_kb = g.pages * base.PAGE_KB
        if exact:
            kb = accessed * base.PAGE_KB
            return base.AccessSample(
                backend=self.name, accessed=accessed, sampled=len(chosen),
                span_kb=span_kb, interval_s=g.now - t0, referenced_kb=kb)
        return base.AccessSample(
            backend=self.name, accessed=accessed, sampled=len(chosen),
            span_kb=span_kb, interval_s=g.now - t0)

    def end(self, vm, pid):
        sample = self.peek(vm, pid)
        self._started.pop(vm.uuid, None)
        return sample

    def forget(self, uuid):
        self._started.pop(uuid, None)
        self._short.pop(uuid, None)
