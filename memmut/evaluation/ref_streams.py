"""Synthetic page-reference streams and the LRU memory that judges an
allocation on them (issue 13: the working-set function's tests and its
simulation benchmark).

A stream is a sequence of page numbers referenced at a constant rate;
:func:`timed` gives them times. :func:`stack_distances` computes every
reference's LRU stack distance (Mattson et al.) in O(L log L) with a
Fenwick tree, so the fault rate of an LRU memory of any size is a count
(:func:`lru_rate`) and the smallest size that keeps it under a bound a
binary search (:func:`smallest_frames`). The guest's reclaim is
LRU-like (CLOCK over active/inactive lists): this is the reference an
estimate's fault rate is judged against.
"""

import math


def timed(pages, rate):
    """(time, page) pairs of ``pages`` referenced at ``rate`` per second."""
    return ((i / rate, p) for i, p in enumerate(pages))


def preloaded(pages, refs):
    """Every one of ``pages`` touched once in address order (the data
    loaded), then ``refs``: a later first reference is then a reuse, as
    in a guest whose data is all in memory or swap, never a fresh page
    (which costs no swap-in)."""
    yield from range(pages)
    yield from refs


def sweep(n, count):
    """Every page of ``n`` in address order, round and round."""
    return (i % n for i in range(count))


def uniform(n, count, rng):
    return (rng.randrange(n) for _ in range(count))


def zipf(n, exponent, count, rng):
    """Page of rank r drawn with probability proportional to
    1 / r^exponent; ranks are spread over the pages at random."""
    weights = [1.0 / (r + 1) ** exponent for r in range(n)]
    order = list(range(n))
    rng.shuffle(order)
    return iter(rng.choices(order, weights, k=count))


def moving_hot(hot, move_s, count, rate, pages):
    """A window of ``hot`` pages swept in order, moved on by its size
    every ``move_s`` seconds, round the ``pages`` of memory."""
    for i in range(count):
        base = (int(i / rate / move_s) * hot) % pages
        yield base + i % hot


def load_then_idle(hot, count, pages):
    """Every page touched once (the load), then the first ``hot`` swept."""
    yield from range(pages)
    yield from (i % hot for i in range(count - pages))


class _Fenwick:
    def __init__(self, n):
        self.t = [0] * (n + 1)

    def add(self, i, v):
        i += 1
        while i < len(self.t):
            self.t[i] += v
            i += i & -i

    def total(self, i):
        """The sum over [0, i)."""
        s = 0
        while i > 0:
            s += self.t[i]
            i -= i & -i
        return s


def stack_distances(pages):
    """The LRU stack distance of every reference (1: the page referenced
    last; inf: its first reference)."""
    pages = list(pages)
    bit = _Fenwick(len(pages))
    last = {}
    out = []
    for i, p in enumerate(pages):
        j = last.get(p)
        if j is None:
            out.append(math.inf)
        else:
            # distinct pages referenced since: last-reference markers in
            # (j, i), plus p itself
            out.append(bit.total(i) - bit.total(j + 1) + 1)
            bit.add(j, -1)
        bit.add(i, 1)
        last[p] = i
    return out


def lru_rate(dists, start, frames, rate, end=None):
    """Faults per second of an LRU memory of ``frames`` pages over the
    references from index ``start`` on, up to ``end`` (the memory is warm:
    a first reference after ``start`` is a fault, those before are not
    counted)."""
    end = len(dists) if end is None else min(end, len(dists))
    n = end - start
    if n <= 0:
        return 0.0
    faults = sum(1 for d in dists[start:end] if d > frames)
    return faults * rate / n


def shrinking(before, after, at_s, rate):
    """``before`` (an iterable of pages) up to ``at_s`` seconds, then
    ``after``: a working set that changes, e.g. falls, at a known time."""
    n = int(at_s * rate)
    for i, p in enumerate(before):
        if i >= n:
            break
        yield p
    yield from after


def smallest_frames(dists, start, bound, rate, pages):
    """The smallest LRU memory (pages, at most ``pages``) whose fault rate
    from ``start`` on is at most ``bound`` per second."""
    lo, hi = 0, pages
    while lo < hi:
        mid = (lo + hi) // 2
        if lru_rate(dists, start, mid, rate) <= bound:
            hi = mid
        else:
            lo = mid + 1
    return lo
