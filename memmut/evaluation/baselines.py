"""Baseline estimators for comparisons (evaluation only).

Zballoond (seed 004 §2.4.2) and self-ballooning (§2.4.1, seed 002) need
the guest's ``Committed_AS``, which only a look inside the guest gives
(intrusive): memmut's test guests print it on their serial console
(:class:`ConsoleCommittedAS`). Both are registered as estimators
(``zballoond``, ``selfballoon``) so that benchmarks run them through the
agent's own pipeline, beside Badis.
"""

import dataclasses
import os
import re

from oslo_log import log as logging

from memmut.agent.wss import badis
from memmut.agent.wss import badis_rounds
from memmut.agent.wss import estimate as estimate_mod
from memmut.agent.wss import estimators
from memmut.agent.wss import techniques

LOG = logging.getLogger(__name__)
Estimate = estimate_mod.Estimate

SOURCE_ZBALLOOND = 'zballoond'
SOURCE_SELFBALLOON = 'self-ballooning'


_STAT = re.compile(r'^GUESTSTAT .*\bcommitted_as_kb=(\d+)', re.M)


class ConsoleCommittedAS:
    """Committed_AS as a test guest prints it on its serial console.

    memmut's test guests print ``GUESTSTAT ... committed_as_kb=N`` lines;
    ``path_for(vm)`` names the console log of a VM (None: unknown). Reading
    a guest's own figures is intrusive: the baselines that need it exist
    for comparisons only.
    """

    def __init__(self, path_for, tail_bytes=16384):
        self.path_for = path_for
        self.tail_bytes = tail_bytes

    def __call__(self, vm):
        path = self.path_for(vm)
        if not path:
            return None
        try:
            with open(path, 'rb') as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - self.tail_bytes))
                text = f.read().decode('utf-8', 'replace')
        except OSError:
            return None
        found = _STAT.findall(text)
        return int(found[-1]) if found else None


def committed_in_balloon_terms(source, vm, st):
    """Committed_AS in balloon terms: the guest's figure counts only
    user-space commitments inside its MemTotal, so the kernel's
    reservation (balloon actual - available) is added, as Badis's
    initial correction does, and the kernel's in-use memory seen at the
    first reading. None without a source."""
    if source is None:
        return None
    try:
        committed = source(vm)
    except Exception as e:
        LOG.debug('VM %s (%s): no Committed_AS: %s', vm.name, vm.uuid,
                  e)
        return None
    if committed is None:
        return None
    # In balloon terms the guest also needs its kernel's own memory,
    # which Committed_AS (user-space commitments) leaves out: what it
    # reserved at boot (actual - available) and what it uses inside
    # MemTotal (slab, page tables, an in-memory root file system). The
    # latter is taken once, at the first reading, as the in-use memory
    # of the balloon statistics (actual - usable) above Committed_AS +
    # the reservation (later readings are squeezed by the balloon the
    # baseline itself sets). Without it a guest whose Committed_AS is
    # small (W_i,d) was held about 25 MiB under its needs for good and,
    # with a low floor, OOM-killed.
    size = int(committed) + badis_rounds.guest_reserved_kb(vm)
    if st is not None and st.kernel_extra_kb is None:
        stats = vm.memory_stats or {}
        actual = stats.get('actual', vm.balloon_kb)
        usable = stats.get('usable')
        if actual and usable is not None and usable <= actual:
            st.kernel_extra_kb = max(0, actual - usable - size)
    if st is not None and st.kernel_extra_kb:
        size += st.kernel_extra_kb
    return size


class ZballoondEstimator(estimators.Estimator):
    """Zballoond's shrink-until-swap loop driven from the host (active:
    the estimate carries the size to probe, ``probe_kb``). It starts from
    Committed_AS when a source of it is given, else from the booked
    memory."""
    name = 'zballoond'

    def __init__(self, pipeline):
        super().__init__(pipeline)
        self.target_params = badis.TargetParams.from_conf(pipeline.conf)

    def round(self, vm, st, now):
        reading = self.pipeline.swap_reading(vm, vm.balloon_kb)
        committed = committed_in_balloon_terms(self.pipeline.committed, vm, st)
        origin = 'committed_as'
        if committed is None:
            committed = vm.booked_kb
            origin = 'booked'
            self.pipeline.warn_once(
                st, 'no-committed', logging.INFO,
                'VM %s (%s): Zballoond runs without Committed_AS: each '
                'descent starts from the booked memory', vm.name, vm.uuid)
        b = self.conf.badis
        floor = min(self.target_params.floor_kb, vm.booked_kb)
        prev = st.zballoond
        if prev is not None and prev.target_kb != vm.balloon_kb and (
                abs(prev.target_kb - vm.balloon_kb) >= 1024):
            # Someone else moved the balloon: descend from where it is.
            prev = dataclasses.replace(prev, target_kb=vm.balloon_kb)
        st.zballoond = zballoond_step(
            prev, committed, reading.swapping,
            decrease_fraction=b.zballoond_decrease_fraction,
            change_fraction=b.zballoond_change_fraction, floor_kb=floor,
            booked_kb=vm.booked_kb)
        z = st.zballoond
        return Estimate(uuid=vm.uuid, wss_kb=z.wss_kb, max_avg_kb=z.wss_kb,
                        demand_kb=z.wss_kb,
                        source='zballoond/%s+%s' % (origin, reading.source),
                        timestamp=now, probe_kb=z.target_kb,
                        detail='swapping' if reading.swapping else '')


class SelfBalloonEstimator(estimators.Estimator):
    """Self-ballooning on Committed_AS; needs a Committed_AS source."""
    name = 'selfballoon'

    def __init__(self, pipeline):
        super().__init__(pipeline)
        self.target_params = badis.TargetParams.from_conf(pipeline.conf)

    def round(self, vm, st, now):
        self.pipeline.swap_reading(vm, vm.balloon_kb)
        committed = committed_in_balloon_terms(self.pipeline.committed, vm, st)
        if committed is None:
            self.pipeline.warn_once(
                st, 'no-committed', logging.ERROR,
                'VM %s (%s): self-ballooning needs the guest\'s Committed_AS, '
                'which this VM does not report: no estimate', vm.name,
                vm.uuid)
            return None
        b = self.conf.badis
        floor = min(self.target_params.floor_kb, vm.booked_kb)
        target = selfballoon_target(
            vm.balloon_kb, committed, reserve_kb=b.selfballoon_reserve_kb,
            down_hysteresis=b.selfballoon_down_hysteresis, up_hysteresis=1,
            floor_kb=floor)
        goal = min(vm.booked_kb, committed + b.selfballoon_reserve_kb)
        probe = min(vm.booked_kb, target.wss_kb)
        return Estimate(uuid=vm.uuid, wss_kb=goal, max_avg_kb=goal,
                        demand_kb=goal, source='selfballoon/committed_as',
                        timestamp=now, probe_kb=probe)


@dataclasses.dataclass(frozen=True)
class ZballoondState:
    """State of the Zballoond controller between epochs.

    ``target_kb`` is the memory size to set now; ``wss_kb`` the lowest size
    at which an epoch passed without swap-in or refault events (the
    Zballoond estimate); ``committed_kb`` the ``Committed_AS`` the current
    descent started from.
    """
    target_kb: int
    wss_kb: int
    committed_kb: int

    def estimate(self):
        return techniques.TechniqueEstimate(self.wss_kb, SOURCE_ZBALLOOND)


def zballoond_step(state, committed_as_kb, swapping, decrease_fraction=0.05,
                   change_fraction=0.05, floor_kb=0, booked_kb=None):
    """One epoch of Zballoond; returns the next :class:`ZballoondState`.

    Seed 004 §2.4.2: (1) start at ``Committed_AS``; (2) every epoch lower
    the size by ``decrease_fraction`` of ``Committed_AS``; (3) when
    ``Committed_AS`` changes, go back to (1). The WSS is the lowest size
    with no swap-in or refault. When the epoch that just ended saw swapping
    (``swapping``), the last decrease went too far: the size goes back up
    one step and that size is the estimate; the descent resumes next epoch,
    so the controller keeps probing (this is why Zballoond is "active").

    ``change_fraction`` is how much ``Committed_AS`` must move (relative)
    to count as a change. Sizes stay within [floor_kb, booked_kb].
    """
    techniques.nonneg('committed_as_kb', committed_as_kb)
    ceiling = committed_as_kb if booked_kb is None else min(
        committed_as_kb, booked_kb)
    ceiling = max(ceiling, floor_kb)
    step = max(1, int(committed_as_kb * decrease_fraction))
    if state is None or abs(committed_as_kb - state.committed_kb) > (
            change_fraction * max(1, state.committed_kb)):
        return ZballoondState(target_kb=ceiling, wss_kb=ceiling,
                              committed_kb=committed_as_kb)
    if swapping:
        up = min(ceiling, state.target_kb + step)
        return ZballoondState(target_kb=up, wss_kb=up,
                              committed_kb=state.committed_kb)
    down = max(floor_kb, state.target_kb - step)
    return ZballoondState(target_kb=down, wss_kb=state.target_kb,
                          committed_kb=state.committed_kb)


def selfballoon_target(cur_kb, committed_as_kb, reserve_kb=0,
                       down_hysteresis=8, up_hysteresis=1, floor_kb=0):
    """Xen self-ballooning: move toward Committed_AS + reserve.

    Seed 002: the guest sizes itself on ``Committed_AS``. As in Xen's
    selfballoon driver, the goal is ``Committed_AS`` + a reserve; each
    interval the size moves by 1/up_hysteresis of the gap when growing (1:
    the whole gap at once) and 1/down_hysteresis when shrinking (8: an
    eighth of the excess), never below ``floor_kb``.
    """
    techniques.nonneg('cur_kb', cur_kb)
    techniques.nonneg('committed_as_kb', committed_as_kb)
    if down_hysteresis < 1 or up_hysteresis < 1:
        raise ValueError('hysteresis divisors must be at least 1')
    goal = committed_as_kb + reserve_kb
    if cur_kb > goal:
        target = cur_kb - (cur_kb - goal) // down_hysteresis
    elif cur_kb < goal:
        target = cur_kb + (goal - cur_kb) // up_hysteresis
    else:
        target = cur_kb
    return techniques.TechniqueEstimate(int(max(floor_kb, target)),
                                        SOURCE_SELFBALLOON)
