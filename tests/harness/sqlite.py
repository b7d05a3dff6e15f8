"""A second real program in the test guest, with skewed access: Debian's
sqlite3 holding an in-memory table, under a stream of point lookups
whose keys follow a power law (issue 13).

redis under redis-benchmark reads its keys uniformly: its working set
is all of its data. Real databases are read unevenly, a few rows often
and most rarely, which is where a working set is hard to state and
sampling on a sweep misleads. Here SQLite is the database engine and its
own SQL the load generator, so nothing but Debian's packages runs in the
guest.

The image carries the host's ``sqlite3`` under ``/opt/sqlite``
(tests/harness/guest_programs.py). With ``memmut.sqlite=SECONDS`` on
the kernel command line the guest's /init (tests/harness/guest/init)
starts ``sqlite3`` on an in-memory database (``:memory:``: every page
is anonymous memory of the process, which the guest can swap), loads
``memmut.sqlite_rows`` rows of ``ROW_BYTES`` random bytes (one row per
4 KiB database page), then runs batches of ``BATCH`` lookups for
SECONDS, one line per batch with its service time (``s``, sqlite3's own
timer)::

    SQLITE load rows=24000 used_kb=107300 t=6.3
    SQLITE get lookups=2000 s=0.046 t=6.9
    SQLITE done lookups=4380000 t=126.4

``memmut.sqlite_pause_ms`` makes the client think between batches (a
server at part of its capacity: the cold rows are then read rarely, and
far fewer of them must stay in memory).

A lookup reads row ``1 + floor(rows * u ** skew)`` for ``u`` uniform in
[0, 1) (``memmut.sqlite_skew``, 1 = uniform): the fraction ``x`` of the
rows with the smallest keys gets ``x ** (1 / skew)`` of the lookups (at
skew 4, 1 % of the rows get 32 % of them, 10 % get 56 %, the colder half
16 %). Each batch is one statement; the shell writes the next only after
sqlite3 has answered the last (two FIFOs), so the lines are the times
the lookups were done.
"""

from tests.harness import guest_programs

GUEST_DIR = '/opt/sqlite'
BINARIES = {'sqlite3': 'sqlite3'}
ROWS = 24000                 # about 100 MiB of database pages
ROW_BYTES = 3000             # one row per 4 KiB page, no overflow page
BATCH = 2000
SKEW = 4


def extras():
    """(guest path, host path, mode) of sqlite3 and its libraries;
    raises guest_programs.ProgramMissing naming the package."""
    return guest_programs.extras(GUEST_DIR, BINARIES, 'sqlite3')


def sqlite_image(cache_dir=None):
    """The harness image with sqlite3 (a GuestImage)."""
    return guest_programs.program_image(extras, cache_dir)


def share_of_lookups(fraction, skew=SKEW):
    """The share of lookups that reads the ``fraction`` of the rows with
    the smallest keys."""
    return fraction ** (1.0 / skew)


def evictable_fraction(lookups_per_s, bound_pages_per_s, skew=SKEW,
                       pages_per_lookup=2):
    """The largest fraction of the rows (the coldest) that can stay out
    of memory with the guest reading back at most ``bound_pages_per_s``:
    the definition of a skewed working set in doc/source/badis.rst (the
    smallest allocation at which the swap-in rate stays under a bound).
    The coldest fraction ``f`` gets ``1 - (1 - f) ** (1 / skew)`` of the
    lookups, each of which reads back ``pages_per_lookup`` pages (a 4 KiB
    database page straddles two guest pages in SQLite's page cache); the
    B-tree's interior pages are read by every lookup and stay in."""
    if lookups_per_s <= 0:
        return 1.0
    share = min(1.0, bound_pages_per_s / (pages_per_lookup * lookups_per_s))
    return 1.0 - (1.0 - share) ** skew


def cmdline(seconds, rows=ROWS, skew=SKEW, batch=BATCH, pause_ms=0,
            poweroff=True):
    if rows < 1 or skew < 1 or batch < 1 or pause_ms < 0:
        raise ValueError('rows, skew and batch must be at least 1 and the '
                         'pause not negative (got %r, %r, %r, %r)'
                         % (rows, skew, batch, pause_ms))
    words = ['memmut.sqlite=%d' % seconds, 'memmut.sqlite_rows=%d' % rows,
             'memmut.sqlite_skew=%g' % skew,
             'memmut.sqlite_row_bytes=%d' % ROW_BYTES,
             'memmut.sqlite_batch=%d' % batch,
             'memmut.sqlite_pause_ms=%d' % pause_ms]
    if poweroff:
        words.append('memwork.poweroff=1')
    return ' '.join(words)
