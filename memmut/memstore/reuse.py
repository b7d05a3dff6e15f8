"""Geiger reuse distances as memmut-memstore reports them.

Seed 004 section 2.4.4: on a swap-in of page p, D is the number of pages
still in the evicted-page queue that were swapped out after p (0 for the
page swapped out last).  Had the VM had D + 1 more pages, the swap-in
would have been a hit.  The server counts D in buckets of ``bucket_pages``
pages; m_ghost for X % is the size of the smallest prefix of buckets that
holds X % of the swap-ins (bucket b ends at (b + 1) * bucket_pages pages).
This module mirrors the server's computation so the agent can ask for
another X without a round trip, and wraps one monitor reading.
"""

import dataclasses

PAGE_SIZE = 4096


def extra_pages(histogram, percent=95.0, bucket_pages=1):
    """Pages of extra memory that would have turned ``percent`` % of the
    swap-ins in ``histogram`` (pairs or a dict bucket -> count) into hits;
    0 for an empty histogram."""
    if not 0 < percent <= 100:
        raise ValueError('percent must be in (0, 100]')
    items = sorted(dict(histogram).items())
    total = sum(n for _, n in items)
    if not total:
        return 0
    need = percent / 100.0 * total
    seen = 0
    for bucket, n in items:
        seen += n
        if seen + 1e-9 >= need:
            return (bucket + 1) * bucket_pages
    return (items[-1][0] + 1) * bucket_pages


@dataclasses.dataclass
class ReuseReading:
    """One reading of an export's swap-traffic monitor."""
    swap_out_pages: int          # cumulative, since memstore started
    swap_in_pages: int
    interval_seconds: float
    interval_swap_ins: int       # swap-ins with a distance, this interval
    interval_cold: int           # swap-ins of pages not in the queue
    histogram: dict              # bucket -> count, this interval
    bucket_pages: int
    percentile: float
    extra_bytes: int             # m_ghost for ``percentile``, this interval
    queue_pages: int

    @classmethod
    def from_stats(cls, reply):
        m = reply['monitor']
        iv = m['interval']
        return cls(swap_out_pages=m['swap_out_pages'],
                   swap_in_pages=m['swap_in_pages'],
                   interval_seconds=m['interval_seconds'],
                   interval_swap_ins=iv['swap_ins'],
                   interval_cold=iv['cold'],
                   histogram={b: n for b, n in iv['histogram']},
                   bucket_pages=m['bucket_pages'],
                   percentile=m['percentile'],
                   extra_bytes=iv['extra_bytes'],
                   queue_pages=m['queue_pages'])

    def extra_bytes_for(self, percent):
        return extra_pages(self.histogram, percent,
                           self.bucket_pages) * PAGE_SIZE
