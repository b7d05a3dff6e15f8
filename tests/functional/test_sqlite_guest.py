"""A second real program in a test guest (issue 13): Debian's sqlite3 on
an in-memory table under skewed point lookups (tests/harness/sqlite.py),
its binary and shared libraries copied into the initramfs. About a
minute, one guest."""

from tests.harness import fixtures
from tests.harness import guest as guestmod
from tests.harness import sqlite


sqlite_factory = fixtures.guest_factory_on(sqlite.sqlite_image)


def test_sqlite_loads_its_table_and_answers_lookups_in_a_guest(
        sqlite_factory):
    g = sqlite_factory(memory_mib=256,
                       cmdline=sqlite.cmdline(8, rows=2000))
    g.wait_for(r'SQLITE done', 150)
    g.wait_shutoff(30)
    log = g.log()
    assert 'SQLITE fatal' not in log, log[-3000:]
    lines = guestmod.parse_lines(log, 'SQLITE')
    load = [d for d in lines if d['event'] == 'load']
    gets = [d for d in lines if d['event'] == 'get']
    assert load and load[0]['rows'] == 2000, log[-3000:]
    # the table is in sqlite3's memory: at least its rows' bytes
    assert load[0]['used_kb'] * 1024 >= 2000 * sqlite.ROW_BYTES, load
    # every batch was answered (sqlite3 counts the rows it found, and the
    # init script checks the answer) and the run lasted its 8 s
    assert gets and all(d['lookups'] == sqlite.BATCH for d in gets)
    # and timed by sqlite3 itself: a batch takes some time, not 8 s
    assert all(0 <= d['s'] < 8 for d in gets) and any(d['s'] > 0
                                                      for d in gets)
    assert gets[-1]['t'] - load[0]['t'] >= 8
    done = [d for d in lines if d['event'] == 'done'][0]
    assert done['lookups'] == sqlite.BATCH * len(gets)
