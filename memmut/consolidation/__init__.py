"""Consolidation: OpenStack Neat's algorithms, extended with memory.

Neat (Beloglazov) splits dynamic consolidation into four swappable
decisions, each a factory ``f(time_step, migration_time, params)`` that
returns a ``decide`` function:

* underload detection (:mod:`.underload`): is the host light enough to be
  emptied and suspended?
* overload detection (:mod:`.overload`, :mod:`.mhod`): must VMs leave it?
* VM selection (:mod:`.vm_selection`): which VMs leave an overloaded host?
* VM placement (:mod:`.placement`): where do they go?

memmut runs every detection twice per host, on its CPU utilization and on
its memory load (the sum of its VMs' working sets, WSS^max_avg of
:mod:`.wss`), and packs VMs on WSS^max_avg plus headroom instead of their
booked memory (seed 004 §2.6.2). :func:`.planner.plan_round` turns one
round of decisions into a migration plan with a reason per move;
:mod:`.loader` finds the algorithms by name (stevedore entry points) and
reads their parameters from the ``[consolidation]`` options.
"""
