"""Run the planner's worked cases through the incremental host sums too.

A module that sets ``pytestmark = pytest.mark.usefixtures(
'incremental_plans')`` runs each case twice: as written, and with every
``plan_round`` call checked against the incremental path of
:class:`memmut.consolidation.history_sums.HistorySums`. That path plans a
previous round whose histories are the case's moved back by one sample
(a window of the series ``[h[0]] + h``), then the case's round with the
histories moved on (``history_end`` 0 then 1); its plan must equal the
from-scratch plan.
"""

import dataclasses

import numpy as np
import pytest

from memmut.consolidation import history_sums
from memmut.consolidation import planner as pl


def _back(history):
    if not len(history):
        return history
    if isinstance(history, np.ndarray):
        return np.concatenate((history[:1], history[:-1]))
    return [history[0]] + list(history[:-1])


@pytest.fixture(params=['from scratch', 'incremental'])
def incremental_plans(request, monkeypatch):
    if request.param == 'from scratch':
        yield None
        return
    real = pl.plan_round
    checked = []

    def plan_round(hosts, vms, algorithms, params=None, sums=None,
                   recent_migrations=0):
        if sums is not None:
            return real(hosts, vms, algorithms, params, sums,
                        recent_migrations)
        scratch = real(hosts, vms, algorithms, params,
                       recent_migrations=recent_migrations)
        cache = history_sums.HistorySums()
        real(hosts, [dataclasses.replace(
            v, cpu_history=_back(v.cpu_history),
            mem_history=_back(v.mem_history), history_end=0) for v in vms],
            algorithms, params, cache, recent_migrations)
        before = cache.reused
        inc = real(hosts, [dataclasses.replace(v, history_end=1)
                           for v in vms], algorithms, params, cache,
                   recent_migrations)
        assert inc == scratch
        # Every host with VMs whose histories have two samples or more,
        # all of one length, came from last round's sums (the shift keeps
        # each length: a shorter history then did not grow, as a young
        # VM's would, and its host is summed afresh).
        running = {v.host for v in vms if v.host is not None}
        short = {v.host for v in vms if v.host is not None and
                 min(len(v.cpu_history), len(v.mem_history)) < 2}
        lengths = {}
        for v in vms:
            if v.host is not None:
                lengths.setdefault(v.host, set()).update(
                    (len(v.cpu_history), len(v.mem_history)))
        uneven = {h for h, ls in lengths.items() if len(ls) > 1}
        assert cache.reused - before == len(running - short - uneven)
        checked.append(len(running))
        return inc

    monkeypatch.setattr(pl, 'plan_round', plan_round)
    yield checked
