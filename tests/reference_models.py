"""Reference models the tests check memmut's real code against.

Plain, slow, obviously correct versions of what memstore (Rust) and the
Geiger technique compute: a ghost queue of evicted pages, and reuse
distances computed naively from a trace of swap events.
"""

import collections


class GhostQueue:
    """Reference model of Geiger's queue of pages evicted to swap.

    The production queue lives where the swap traffic is seen (memstore);
    this model defines the distance the agent expects and serves tests and
    the simulator. ``evict(page)`` records a swap-out; ``reload(page)``
    records a swap-in and returns its reuse distance in pages: 1 + the
    number of pages evicted after it and not reloaded since, i.e. how many
    extra pages of memory would have kept it resident under LRU (the
    published prototype counts the same way). ``None`` when the page is not
    in the queue (evicted before the queue started, or dropped from it).

    The queue keeps at most ``max_pages`` entries; the oldest are dropped
    first (their reloads then have an unknown, large distance).
    """

    def __init__(self, max_pages=1 << 20):
        if max_pages <= 0:
            raise ValueError('max_pages must be positive')
        self.max_pages = max_pages
        self._queue = collections.OrderedDict()   # oldest eviction first

    def __len__(self):
        return len(self._queue)

    def evict(self, page):
        self._queue.pop(page, None)
        self._queue[page] = True
        while len(self._queue) > self.max_pages:
            self._queue.popitem(last=False)

    def reload(self, page):
        if page not in self._queue:
            return None
        distance = 1
        for other in reversed(self._queue):
            if other == page:
                break
            distance += 1
        del self._queue[page]
        return distance


def naive_distances(events):
    """Reference computation on a list of ('w'|'r'|'t', page) events:
    the reuse distance of every swap-in (None when the page was not
    queued).  Quadratic; for tests and for checking a server's event log."""
    queue = []                  # oldest first
    out = []
    for op, page in events:
        if op == 'w':
            if page in queue:
                queue.remove(page)
            queue.append(page)
        elif op == 'r':
            if page in queue:
                i = queue.index(page)
                out.append(len(queue) - 1 - i)
                del queue[i]
            else:
                out.append(None)
        elif op == 't':
            if page in queue:
                queue.remove(page)
    return out
