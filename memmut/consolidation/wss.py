"""WSS^max_avg (seed 004 §2.6.2) and the headroom added to it for packing.

Badis keeps the moving average of a VM's last ``n`` working-set estimates
(n = 5) and reports the maximum of that average over the last time slice
``s`` (1 hour): WSS^max_avg. It sizes the VM and is what the consolidator
packs on. The functions here compute the same quantity from any series of
working-set samples (estimates from Badis, or the ``Memory usage`` column
of a trace), so the simulator and the controller share one definition:

* the moving average at sample ``k`` is the mean of samples
  ``k-n+1 .. k`` (fewer at the start of the series);
* WSS^max_avg at sample ``k`` is the maximum of the moving averages at
  samples ``k-w+1 .. k``, with ``w`` = the number of samples in one time
  slice (s / sampling interval: 12 for 1 h of 300 s samples). The window
  slides: a peak raises the value at once and leaves it after ``s``.
"""

import math

import numpy as np


def slice_samples(time_slice, interval):
    """Samples per time slice: ``s`` seconds of samples ``interval`` apart."""
    if time_slice <= 0 or interval <= 0:
        raise ValueError('time slice and interval must be positive')
    return max(1, int(math.ceil(time_slice / float(interval) - 1e-9)))


def moving_average(values, n):
    """Trailing mean of the last ``n`` values along the last axis.

    Works on a 1-D series or a 2-D array (one row per VM); NaN-free input.
    """
    if n < 1:
        raise ValueError('n must be at least 1')
    x = np.asarray(values, dtype=float)
    if x.shape[-1] == 0:
        return x.copy()
    c = np.cumsum(x, axis=-1)
    out = c.copy()
    if x.shape[-1] > n:
        out[..., n:] = c[..., n:] - c[..., :-n]
    counts = np.minimum(np.arange(1, x.shape[-1] + 1), n)
    return out / counts


def sliding_max(values, w):
    """Trailing maximum of the last ``w`` values along the last axis."""
    if w < 1:
        raise ValueError('w must be at least 1')
    x = np.asarray(values, dtype=float)
    length = x.shape[-1]
    if length == 0 or w == 1:
        return x.copy()
    # Pad on the left with -inf so early samples see a shorter window.
    pad = np.full(x.shape[:-1] + (w - 1,), -np.inf)
    padded = np.concatenate([pad, x], axis=-1)
    # Doubling trick: max over windows of 1, 2, 4, ... then combine, so
    # the cost is O(length * log w) whatever w is.
    out = padded.copy()
    span = 1
    while span * 2 <= w:
        out[..., span:] = np.maximum(out[..., span:], out[..., :-span])
        span *= 2
    if span < w:
        rest = w - span
        shifted = out.copy()
        shifted[..., rest:] = np.maximum(out[..., rest:], out[..., :-rest])
        out = shifted
    return out[..., w - 1:]


def max_avg_series(values, n=5, window=12, valid=None):
    """WSS^max_avg at every sample of a series (or of each row).

    ``n``: samples in the moving average; ``window``: samples per time
    slice. ``valid`` (same shape, booleans) marks the samples that exist
    (a VM not yet started or gone): averages and maxima only use those,
    and the result is 0 where no valid sample is in reach. Returns an
    array shaped like ``values``.
    """
    if valid is None:
        return sliding_max(moving_average(values, n), window)
    ok = np.asarray(valid, dtype=bool)
    x = np.where(ok, np.asarray(values, dtype=float), 0.0)
    k = np.minimum(np.arange(1, x.shape[-1] + 1), n)
    sums = moving_average(x, n) * k
    counts = moving_average(ok.astype(float), n) * k
    with np.errstate(invalid='ignore', divide='ignore'):
        avg = np.where(counts > 0.5, sums / np.maximum(counts, 1e-12),
                       -np.inf)
    out = sliding_max(avg, window)
    return np.where(np.isfinite(out), out, 0.0)


def max_avg(history, n=5, window=12):
    """WSS^max_avg now, from a history of samples (newest last).

    Only the last ``n + window - 1`` samples matter. Returns 0.0 for an
    empty history.
    """
    h = np.asarray(history, dtype=float)
    if h.size == 0:
        return 0.0
    tail = h[-(n + window - 1):]
    return float(max_avg_series(tail, n, window)[-1])
