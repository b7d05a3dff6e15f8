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
SECONDS, one line per batch::

    SQLITE load rows=24000 t=21.3
    SQLITE get lookups=2000 t=21.9
    SQLITE done lookups=180000 t=81.4

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


def cmdline(seconds, rows=ROWS, skew=SKEW, poweroff=True):
    if rows < 1 or skew < 1:
        raise ValueError('rows and skew must be at least 1 (got %r, %r)'
                         % (rows, skew))
    words = ['memmut.sqlite=%d' % seconds, 'memmut.sqlite_rows=%d' % rows,
             'memmut.sqlite_skew=%g' % skew,
             'memmut.sqlite_row_bytes=%d' % ROW_BYTES,
             'memmut.sqlite_batch=%d' % BATCH]
    if poweroff:
        words.append('memwork.poweroff=1')
    return ' '.join(words)
