"""Pooling the page samples of consecutive rounds while they agree
(issue 13, the production back-ends).

Why: page_idle and kmod (KVM) read n random pages a round (n = 100 by
default, seed 004 section 2.4.3), so one round's working set has a
standard error of S sqrt(p (1 - p) / n): 12.5 MiB of a 256 MiB guest
using 60 % of it, 5 % of the booking. Every round's estimate carries
that noise, and a round that reads low is a shrink the guest pays for in
swap-ins. On the paged guest model with 100 sampled pages
(tests/benchmarks/results/badis50) the defaults' W1-W5 error was 2.4
times that with every page read (smaps), with as many memory saved.

What it does. A working set that did not change gives rounds that are
draws of one binomial proportion; their counts add up to a sample of
k n pages, whose standard error is sqrt(k) smaller. A working set that
changed gives a newest round that disagrees with the ones before. So,
from the newest round back, an older round joins the pool only while it
agrees with the pool so far (a two-proportion test at ``z``): the pool
stops at the first round that differs. A change as large as the test
resolves is followed at once; a smaller one blends in over at most
``rounds`` rounds (the lag this costs is bounded by what the test cannot
tell from noise). Back-ends that read every page (smaps) have no
sampling noise and are not pooled.
"""

import math

# two-sided 95 %: a round of an unchanged working set is left out of the
# pool (a needless loss of precision, not an error) one time in twenty
POOL_Z = 1.96


def pooled(samples, z=POOL_Z):
    """``samples``: (accessed, sampled) page counts of consecutive rounds,
    oldest first, all of the same span. Returns the (accessed, sampled)
    of the newest rounds that agree with each other: from the newest
    back, each older round joins while its proportion is within ``z``
    standard errors of the pool's (pooled variance)."""
    if not samples:
        raise ValueError('no samples to pool')
    acc, n = samples[-1]
    for a, m in reversed(samples[:-1]):
        total = (acc + a) / (n + m)
        se = math.sqrt(total * (1 - total) * (1 / n + 1 / m))
        if abs(acc / n - a / m) > z * se:
            break
        acc, n = acc + a, n + m
    return acc, n


def keep(history, accessed, sampled, span_kb, rounds):
    """``history`` (a list of (accessed, sampled, span_kb), oldest first)
    with this round's sample appended, the rounds past ``rounds`` and
    those of another span (the guest's memory was resized) dropped; in
    place, returned."""
    if history and history[-1][2] != span_kb:
        history.clear()
    history.append((accessed, sampled, span_kb))
    del history[:-rounds]
    return history
