"""What a VM with little memory history is packed on.

A VM's WSS^max_avg says nothing of a spike the VM has not had yet: a new
arrival, or any VM during its first day, may be packed on a quiet hour
and then grow several times over (a nightly batch job, a backup). Where
spikes are common this is most of the memory overload and most
memory-caused migrations (the ``memory_spikes`` synthetic profile of
issue 19: three quarters of them in the VMs' first day). A *young VM
policy* decides what a VM is packed on until it has ``min_age`` seconds
of history; its memory load in overload and underload detection stays its
WSS^max_avg (it is what the VM uses; only the room kept for it changes).

Policies (``[consolidation] young_vm_policy`` and its parameters):

``time_slice``
    the booking during the VM's first time slice (before Badis has a
    WSS^max_avg), then WSS^max_avg plus headroom: memmut's behaviour
    before this module. No parameters.
``booked``
    the booking until the VM is ``min_age`` seconds old (default a day):
    it is then packed on what it has shown in that time.
``prior``
    until ``min_age``, the larger of its own WSS^max_avg plus headroom
    and a population prior: the ``quantile`` (default 0.9) over the VMs
    that are at least ``min_age`` old of their peak WSS^max_avg over their
    last ``min_age`` seconds as a fraction of their booking, times the
    VM's booking (capped at it). With no such VM yet, the booking.
``spike_prior``
    until ``min_age``, its own WSS^max_avg plus a population prior of the
    *rise*: the ``quantile`` (default 0.9), over all VMs past their first
    time slice, of how far their WSS^max_avg rose above its current
    value within their last ``min_age`` seconds, as a fraction of their
    booking; then headroom, capped at the booking. A spike seen in some
    VMs (a group's batch job) makes room on the hosts of the VMs that
    have not shown theirs yet, where spikes are common, and costs little
    where they are not; it needs no VM to be ``min_age`` old first.

All of them count the booking during the first time slice, as before.
The simulator applies a policy to whole (VMs, steps) arrays
(:func:`packing_series`), the controller to one round's VMs
(:func:`prior_fraction` and :func:`packed`).
"""

import dataclasses

import numpy as np

from memmut import sizing
from memmut.consolidation import wss as wss_mod

POLICIES = ('time_slice', 'booked', 'prior', 'spike_prior')
_DEFAULTS = {'time_slice': {},
             'booked': {'min_age': 86400.0},
             'prior': {'min_age': 86400.0, 'quantile': 0.9},
             'spike_prior': {'min_age': 86400.0, 'quantile': 0.9}}


@dataclasses.dataclass(frozen=True)
class YoungPolicy:
    """A named policy with its parameters (see the module doc)."""
    name: str = 'time_slice'
    parameters: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        if self.name not in POLICIES:
            raise ValueError('unknown young VM policy %r (known: %s)'
                             % (self.name, ', '.join(POLICIES)))
        unknown = sorted(set(self.parameters) - set(_DEFAULTS[self.name]))
        if unknown:
            raise ValueError('young VM policy %r has no parameter %s '
                             '(it takes: %s)' % (
                                 self.name, ', '.join(map(repr, unknown)),
                                 ', '.join(sorted(_DEFAULTS[self.name]))
                                 or 'none'))
        p = self.effective()
        if p.get('min_age', 0.0) < 0:
            raise ValueError('min_age must not be negative')
        if not 0.0 <= p.get('quantile', 0.5) <= 1.0:
            raise ValueError('quantile must be within [0, 1]')

    @classmethod
    def from_conf(cls, conf):
        import json
        c = conf.consolidation
        text = c.young_vm_policy_parameters
        params = json.loads(text) if text and text.strip() else {}
        if not isinstance(params, dict):
            raise ValueError('young_vm_policy_parameters: want a JSON '
                             'object, got %r' % text)
        return cls(c.young_vm_policy, params)

    def effective(self):
        """The parameters completed with the policy's defaults."""
        p = dict(_DEFAULTS[self.name])
        p.update(self.parameters)
        return p

    @property
    def min_age(self):
        """Seconds of history after which a VM is no longer young (0 for
        ``time_slice``, whose rule is the time slice's)."""
        return float(self.effective().get('min_age', 0.0))


def prior_fraction(peaks, booked, quantile):
    """The population prior: ``quantile`` of ``peaks / booked`` over the
    VMs given (the mature ones); None when there is none."""
    peaks = np.asarray(peaks, dtype=float)
    booked = np.asarray(booked, dtype=float)
    ok = booked > 0
    if not ok.any():
        return None
    return float(np.quantile(np.minimum(1.0, peaks[ok] / booked[ok]),
                             quantile))


def packed(policy, demand, booked, age, prior, headroom_mb=0.0,
           headroom_fraction=0.0, wss=None):
    """What one VM past its first time slice is packed on: ``demand``
    (its WSS^max_avg plus headroom) unless it is younger than the
    policy's ``min_age`` (seconds), then the booking (``booked``) or the
    larger of ``demand`` and the prior's (``prior``: a fraction of the
    booking, None for no mature VM yet; for ``spike_prior`` a rise as a
    fraction of the booking, added to ``wss``, its WSS^max_avg)."""
    if policy.name == 'time_slice' or age >= policy.min_age:
        return float(demand)
    if policy.name == 'booked' or prior is None:
        return float(booked)
    if policy.name == 'spike_prior':
        if wss is None:
            raise ValueError('spike_prior needs the VM\'s WSS^max_avg')
        base = min(float(booked), float(wss) + prior * float(booked))
    else:
        base = prior * float(booked)
    p = float(sizing.demand(base, booked, headroom_mb, headroom_fraction))
    return float(max(demand, p))


def _quantile_per_step(values, q):
    """Quantile ``q`` of each column's non-NaN values (NaN where none)."""
    out = np.full(values.shape[1], np.nan)
    have = ~np.all(np.isnan(values), axis=0)
    if have.any():
        out[have] = np.nanquantile(values[:, have], q, axis=0)
    return out


def packing_series(policy, ma, demand, booked, age, alive, step,
                   headroom_mb=0.0, headroom_fraction=0.0, w_first=1):
    """The simulator's (VMs, steps) packing array for VMs past their
    first time slice: ``demand`` where the policy keeps it, else what
    :func:`packed` gives, the prior computed at every step from the VMs
    alive and at least ``min_age`` old then (their peak WSS^max_avg
    ``ma`` over the last ``min_age`` seconds; for ``spike_prior`` from
    the VMs at least ``w_first`` samples old, past their first time
    slice, and their rise above their current value)."""
    if policy.name == 'time_slice':
        return demand
    k = max(1, int(round(policy.min_age / step)))
    young = alive & (age < k)
    if policy.name == 'booked' or not young.any():
        return np.where(young, np.broadcast_to(booked[:, None],
                                               demand.shape), demand)
    q = policy.effective()['quantile']
    peak = wss_mod.sliding_max(np.where(alive, ma, 0.0), k)
    b = np.broadcast_to(booked[:, None], demand.shape)
    if policy.name == 'spike_prior':
        warm = alive & (age >= w_first)
        rise = np.where(warm, np.minimum(1.0, (peak - ma) / b), np.nan)
        prior = _quantile_per_step(rise, q)
        base = np.minimum(b, ma + np.nan_to_num(prior)[None, :] * b)
        from_prior = np.maximum(demand, sizing.demand(
            base, b, headroom_mb, headroom_fraction))
        return np.where(young & ~np.isnan(prior)[None, :], from_prior,
                        demand)
    frac = np.where(alive & (age >= k),
                    np.minimum(1.0, peak / booked[:, None]), np.nan)
    prior = _quantile_per_step(frac, q)
    from_prior = np.where(
        np.isnan(prior)[None, :], b,
        np.maximum(demand, sizing.demand(np.nan_to_num(prior)[None, :] * b,
                                         b, headroom_mb,
                                         headroom_fraction)))
    return np.where(young, from_prior, demand)
