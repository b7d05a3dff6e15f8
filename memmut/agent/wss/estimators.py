"""Working-set estimators: the plug-ins of the estimation pipeline.

An estimator turns what the pipeline's collectors read (access samples,
swap monitors, balloon statistics) into one :class:`~.estimate.Estimate`
per VM and round. They are registered in ``setup.cfg`` under
``memmut.agent.wss_estimators`` and chosen by ``[agent] wss_estimator``:
``badis`` (:mod:`.badis_rounds`, the product's), the guest's own balloon
statistics here (baselines), and the evaluation-only baselines of
:mod:`memmut.evaluation.baselines` (Zballoond, self-ballooning).
"""

import abc

from memmut.agent.wss import estimate as estimate_mod
from memmut.agent.wss import techniques

Estimate = estimate_mod.Estimate


class Estimator(abc.ABC):
    """One estimator for all the VMs of a pipeline.

    ``pipeline`` is the :class:`~.pipeline.EstimationPipeline` it serves:
    its swap monitors, samplers and per-VM records (``st``, a
    :class:`~.pipeline.TrackedVM`) are the estimator's inputs.
    """
    name = None
    # False: the pipeline produces nothing (estimator "none").
    active = True

    def __init__(self, pipeline):
        self.pipeline = pipeline
        self.conf = pipeline.conf

    def start(self, vm, st):
        """The VM is seen for the first time (its first estimate comes one
        round later)."""

    def forget(self, uuid):
        """The VM is gone."""

    def peek(self, vm, st, now):
        """A poll between two rounds (the collectors may read what the
        running interval has seen so far)."""

    def react(self, vm, st, now):
        """An estimate between two rounds (``[badis] react_to_swapping``),
        or None."""
        return None

    def round_now(self, vm, st, now):
        """Whether the VM's round should end at this poll, before it is
        due (``[badis] end_round_on_thrashing``)."""
        return False

    @abc.abstractmethod
    def round(self, vm, st, now):
        """This round's estimate of the VM, or None."""


class NoEstimator(Estimator):
    """No estimation at all (``none``)."""
    name = 'none'
    active = False

    def round(self, vm, st, now):
        return None


class BalloonStatsEstimator(Estimator):
    """Baseline: the guest's used memory from the balloon statistics
    (available - unused), disk caches included."""
    name = 'balloon_stats'
    include_caches = True

    def round(self, vm, st, now):
        self.pipeline.swap_reading(vm, vm.balloon_kb)
        used = techniques.balloon_used(vm.memory_stats,
                                       self.include_caches)
        if used is None:
            return None
        wss = min(used.wss_kb, vm.booked_kb)
        return Estimate(uuid=vm.uuid, wss_kb=wss, max_avg_kb=wss,
                        demand_kb=wss, source=self.name, timestamp=now,
                        detail=used.source)


class BalloonStatsNoCacheEstimator(BalloonStatsEstimator):
    """Baseline: the same without the disk caches."""
    name = 'balloon_stats_nocache'
    include_caches = False
