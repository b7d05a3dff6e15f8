"""What the simulator does to a trace before replaying it.

Four rules, each counted in the run's report:

Oversize VMs (:func:`reject_oversize`)
    A VM whose booked memory exceeds a host's memory, or whose CPU use ever
    exceeds a host's CPU, fits no host in either packing. It is removed
    from the trace at load with a warning naming it, and counted
    (``rejected_vms``). (Its provisioned CPU is not a criterion: CPU is
    time-shared, only its use has to fit.)

Missing memory readings (:func:`clean_memory`)
    A reading of ``Memory usage`` that is 0 (or a slot without a row) while
    the VM exists is missing data, not a working set of 0: a running VM
    always uses memory. Rule, per VM:

    1. the last real reading is carried forward; for at most
       ``carry_seconds`` (default 1 hour) it counts as data (*carried*);
    2. beyond that the carried value still stands in for the VM's use (in
       the packing and in host memory), but the reading is *unknown*: the
       shortfall metric leaves it out, since the trace does not say what
       the VM used. (Filling long gaps with the VM's peak instead was
       tried: the step from the carried value to the peak, in many VMs at
       once during a collection outage, made host overloads that were
       the rule's, not the trace's);
    3. before the VM's first real reading, its first real reading
       (unknown); a VM with no real reading at all uses its booked memory
       (unknown).

    The counts of missing, carried and unknown readings are reported.

Estimator error (:class:`ErrorModel`)
    In ``wss`` mode the working-set series the packing reads can be made
    to look like an estimator's output instead of the trace's truth: a lag
    of ``lag`` samples (the estimate at sample k is the truth at k - lag)
    and a relative error e drawn independently per VM and sample (the
    estimate is ``truth * (1 + e)``, at least 0), e from a normal
    distribution of standard deviation ``relative_sd`` or from measured
    errors (:func:`error_model_from_file`). What the VMs use (host memory,
    shortfall) stays the truth.

Lower bound (:func:`lower_bound`)
    Per step, no packing can use fewer hosts than ``max(ceil(sum CPU /
    host CPU), ceil(sum memory / host memory))`` over the VMs that exist,
    memory being the packing's memory column (booked, or WSS^max_avg plus
    headroom). The simulator reports its mean beside the active hosts.
    It is the bound issue 19's goal is stated against; it packs every
    step anew, for free, at 100 % of CPU (a planner within the issue's
    migration and CPU-overload budgets is bounded only a little below it,
    :mod:`memmut.simulator.budget_bound`, but even a clairvoyant one
    stays far above it on Bitbrains: doc/source/simulator.rst). Two
    fairer references are reported
    beside it (:func:`target_lower_bound`, :func:`held_lower_bound`):
    the same bound with the host capacities cut to the placement's
    utilization targets (what the planner is allowed to fill), and that
    bound held over blocks of steps (a placement kept for the block must
    fit the block's largest demand). Both are still lower bounds for
    their own rules, not plans.
"""

import dataclasses
import json
import logging
import math
import os
import typing

import numpy as np

LOG = logging.getLogger(__name__)


# ---------------------------------------------------------------------------
# Oversize VMs


def reject_oversize(trace, host_cpu_mhz, host_memory_mb):
    """``(trace without them, [names])`` of the VMs larger than a host."""
    big = (trace.booked > host_memory_mb) | (
        trace.cpu.max(axis=1, initial=0.0) > host_cpu_mhz)
    if not big.any():
        return trace, []
    names = [n for n, b in zip(trace.names, big) if b]
    for i in np.flatnonzero(big):
        LOG.warning('VM %s rejected: it books %.0f MiB and uses up to %.0f '
                    'MHz, more than a host (%.0f MiB, %.0f MHz); it is '
                    'left out of both packings', trace.names[i],
                    trace.booked[i], trace.cpu[i].max(initial=0.0),
                    host_memory_mb, host_cpu_mhz)
    if big.all():
        raise ValueError('every VM of the trace is larger than a host '
                         '(%.0f MiB, %.0f MHz)' % (host_memory_mb,
                                                   host_cpu_mhz))
    return trace.select(~big), names


# ---------------------------------------------------------------------------
# Missing readings


@dataclasses.dataclass
class Cleaned:
    """The memory series after the missing-reading rule.

    ``mem``: (VMs, steps) MiB; ``known``: the readings that are real or
    carried (the shortfall metric only uses those); counts of live
    readings by kind.
    """
    mem: np.ndarray
    known: np.ndarray
    live: int
    missing: int
    carried: int
    unknown: int
    vms_without_reading: int

    def summary(self):
        live = max(1, self.live)
        return {
            'live_readings': self.live,
            'missing_readings': self.missing,
            'missing_fraction': self.missing / live,
            'carried_forward': self.carried,
            'filled_unknown': self.unknown,
            'vms_without_reading': self.vms_without_reading,
        }


def clean_memory(trace, carry_seconds=3600.0):
    """Apply the missing-reading rule (module documentation)."""
    alive = trace.alive()
    mem = np.asarray(trace.mem, dtype=float)
    valid = (trace.mem_valid if trace.mem_valid is not None
             else np.ones(mem.shape, dtype=bool))
    valid = valid & alive & (mem > 0)
    n_v, n_t = mem.shape
    idx = np.arange(n_t)
    last_idx = np.where(valid, idx[None, :], -1)
    np.maximum.accumulate(last_idx, axis=1, out=last_idx)
    rows = np.arange(n_v)[:, None]
    carried_val = mem[rows, np.maximum(last_idx, 0)]
    age = idx[None, :] - last_idx
    carry_steps = int(math.floor(carry_seconds / trace.step + 1e-9))
    has_any = valid.any(axis=1)
    first_idx = np.argmax(valid, axis=1)
    first_val = np.where(has_any, mem[np.arange(n_v), first_idx],
                         trace.booked)
    seen = last_idx >= 0
    carry = seen & ~valid & (age <= carry_steps)
    out = np.where(valid, mem, carried_val)
    out = np.where(~seen, first_val[:, None], out)
    out = np.where(alive, out, 0.0)
    out = np.minimum(out, np.maximum(trace.booked, 1.0)[:, None])
    missing = alive & ~valid
    unknown = missing & ~carry
    return Cleaned(mem=out, known=alive & ~unknown,
                   live=int(alive.sum()), missing=int(missing.sum()),
                   carried=int((missing & carry).sum()),
                   unknown=int(unknown.sum()),
                   vms_without_reading=int((~has_any).sum()))


# ---------------------------------------------------------------------------
# Estimator error


@dataclasses.dataclass(frozen=True)
class ErrorModel:
    """Lag (samples) and relative error injected into the WSS series.

    ``relative_sd``: standard deviation of a normal relative error, used
    when ``samples`` is empty; ``samples``: measured relative errors to
    draw from; ``seed``: of the draws; ``source``: where they came from.
    """
    relative_sd: float = 0.0
    lag: int = 0
    samples: typing.Tuple[float, ...] = ()
    seed: int = 0
    source: str = ''

    def __post_init__(self):
        if self.relative_sd < 0:
            raise ValueError('the relative error must not be negative')
        if self.lag < 0:
            raise ValueError('the lag must not be negative')

    @property
    def active(self):
        return bool(self.relative_sd or self.lag or len(self.samples))

    def describe(self):
        s = np.asarray(self.samples, dtype=float)
        return {
            'source': self.source or ('normal' if self.relative_sd
                                      else 'none'),
            'lag_samples': self.lag,
            'relative_sd': (float(s.std()) if len(s)
                            else self.relative_sd),
            'mean_abs_relative_error': (
                float(np.abs(s).mean()) if len(s)
                else self.relative_sd * math.sqrt(2 / math.pi)),
            'relative_bias': float(s.mean()) if len(s) else 0.0,
            'error_samples': len(s),
            'seed': self.seed,
        }

    def apply(self, mem, first):
        """The estimated series of ``mem`` (VMs, steps)."""
        est = np.asarray(mem, dtype=float)
        n_v, n_t = est.shape
        if self.lag:
            src = np.arange(n_t)[None, :] - self.lag
            src = np.maximum(src, np.asarray(first)[:, None])
            src = np.clip(src, 0, n_t - 1)
            est = est[np.arange(n_v)[:, None], src]
        rng = np.random.default_rng(self.seed)
        if len(self.samples):
            e = rng.choice(np.asarray(self.samples, dtype=float),
                           size=est.shape)
        elif self.relative_sd:
            e = rng.normal(0.0, self.relative_sd, size=est.shape)
        else:
            return est.copy() if est is mem else est
        return np.maximum(0.0, est * (1.0 + e))


def parse_error(value, lag=None, seed=0):
    """An :class:`ErrorModel` from ``--wss-error``: a number (relative
    standard deviation, e.g. 0.1) or the path of an estimator benchmark's
    results (:func:`error_model_from_file`); ``lag`` (samples) overrides
    the file's lag when not None."""
    value = (value or '').strip()
    if not value:
        return ErrorModel(lag=lag or 0, seed=seed)
    try:
        sd = float(value)
    except ValueError:
        model = error_model_from_file(value, seed=seed)
        if lag is not None:
            model = dataclasses.replace(model, lag=lag)
        return model
    return ErrorModel(relative_sd=sd, lag=lag or 0, seed=seed)


def _rows_file(path):
    if path.endswith('.jsonl'):
        return path
    sibling = os.path.splitext(path)[0] + '.jsonl'
    return sibling if os.path.exists(sibling) else None


def error_model_from_file(path, estimator='badis', seed=0, max_lag=10):
    """Lag and relative errors measured by ``bench_badis``.

    ``path``: its ``badis.json`` (the per-poll records are read from the
    ``badis.jsonl`` beside it) or the ``.jsonl`` itself. For every run of
    ``estimator``, each poll with an estimate is compared with the true
    working set ``L`` polls earlier; the lag ``L`` (0..``max_lag``) with
    the smallest mean absolute error is the estimator's lag, and the
    relative errors ``estimate / truth - 1`` at that lag are the error
    distribution. The lag in polls becomes a lag in estimator rounds
    (``ceil(L * poll_s / round_interval)``, from the file's setup), and
    one round is taken as one trace sample: a conservative reading, since
    a deployed Badis round (60 s) is shorter than a 300 s sample.
    """
    if not os.path.exists(path):
        raise ValueError('estimator results %s do not exist' % path)
    rows_path = _rows_file(path)
    if rows_path is None:
        raise ValueError('%s has no per-poll records beside it (%s): '
                         'cannot measure the estimator\'s error'
                         % (path, os.path.splitext(path)[0] + '.jsonl'))
    poll_s, round_s = 0.5, 1.0
    summary = os.path.splitext(rows_path)[0] + '.json'
    if os.path.exists(summary):
        try:
            with open(summary) as f:
                setup = json.load(f).get('setup', {})
            poll_s = float(setup.get('poll_s', poll_s))
            round_s = float(setup.get('agent_options', {}).get(
                'badis', {}).get('round_interval', round_s))
        except (ValueError, TypeError, AttributeError):
            pass
    series = []
    try:
        with open(rows_path) as f:
            for line in f:
                if not line.strip():
                    continue
                run = json.loads(line)
                if run.get('estimator') != estimator:
                    continue
                rows = run.get('rows') or []
                truth = np.array([r['truth_kb'] for r in rows], dtype=float)
                est = np.array([r.get(estimator, np.nan) for r in rows],
                               dtype=float)
                series.append((truth, est))
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError('cannot read estimator results %s: %s'
                         % (rows_path, e))
    if not series:
        raise ValueError('no %s run with per-poll records in %s'
                         % (estimator, rows_path))
    best = None
    for lag in range(max_lag + 1):
        errs = []
        for truth, est in series:
            if len(truth) <= lag:
                continue
            e, t = est[lag:], truth[:len(truth) - lag]
            ok = np.isfinite(e) & (t > 0)
            errs.append(e[ok] / t[ok] - 1.0)
        errs = np.concatenate(errs) if errs else np.zeros(0)
        if len(errs) and (best is None or
                          np.abs(errs).mean() < best[1]):
            best = (lag, float(np.abs(errs).mean()), errs)
    if best is None:
        raise ValueError('no estimate in %s' % rows_path)
    lag_polls, _, errs = best
    lag_rounds = int(math.ceil(lag_polls * poll_s / round_s - 1e-9))
    return ErrorModel(lag=lag_rounds, samples=tuple(float(x) for x in errs),
                      seed=seed,
                      source='%s (%s, lag %d polls)' % (
                          os.path.basename(rows_path), estimator,
                          lag_polls))


# ---------------------------------------------------------------------------
# Lower bound


def lower_bound(cpu, mem, alive, host_cpu_mhz, host_memory_mb):
    """Per-step ``(bound, cpu bound, memory bound)`` arrays."""
    c = np.where(alive, cpu, 0.0).sum(axis=0)
    m = np.where(alive, mem, 0.0).sum(axis=0)
    cb = np.ceil(c / host_cpu_mhz - 1e-9)
    mb = np.ceil(m / host_memory_mb - 1e-9)
    return np.maximum(cb, mb), cb, mb


def target_lower_bound(cpu, mem, alive, host_cpu_mhz, host_memory_mb,
                       cpu_target, memory_target):
    """Per-step bound when a host may only be filled to ``cpu_target``
    of its CPU and ``memory_target`` of its memory (the placement's
    thresholds): :func:`lower_bound` on capacities cut to the targets.
    A planner that packs to its targets cannot beat it (it may when
    load grows after it packed, which is an overload)."""
    if not 0 < cpu_target <= 1 or not 0 < memory_target <= 1:
        raise ValueError('targets must be in (0, 1]')
    return lower_bound(cpu, mem, alive, host_cpu_mhz * cpu_target,
                       host_memory_mb * memory_target)[0]


def held_lower_bound(bound, hold):
    """A per-step bound held over blocks of ``hold`` steps: each step
    gets the largest bound of its block. Hosts that keep their VMs for
    the block must hold the block's largest total demand, so a planner
    that moves VMs at most once per block needs at least this many
    hosts; ``hold`` 1 gives the per-step bound back."""
    if hold < 1:
        raise ValueError('hold must be at least 1')
    b = np.asarray(bound, dtype=float)
    if hold == 1 or not len(b):
        return b.copy()
    pad = (-len(b)) % hold
    blocks = np.concatenate([b, np.full(pad, -np.inf)]).reshape(-1, hold)
    return np.repeat(blocks.max(axis=1), hold)[:len(b)]
