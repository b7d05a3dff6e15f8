"""Reuse distances (seed 004 section 2.4.4) computed by memmut-memstore
from real NBD traffic, against the hand-worked example of
doc/source/memstore.rst."""

import pytest

from memmut.memstore import reuse
from tests import reference_models
from tests.harness import nbdclient as nbd

PAGE = 4096

# (op, page): swap-out 1..5, swap-in 2 (D=3: 3,4,5 are newer), swap-in 5
# (D=0), swap-out 1 again (back to the head), swap-in 3 (D=2: 4 and 1),
# swap-in 1 (D=0), swap-in 9 (never swapped out: cold)
EXAMPLE = ([('w', p) for p in range(1, 6)]
           + [('r', 2), ('r', 5), ('w', 1), ('r', 3), ('r', 1), ('r', 9)])
DISTANCES = [3, 0, 2, 0, None]
HISTOGRAM = {0: 2, 2: 1, 3: 1}


def test_naive_reference_on_the_example():
    assert reference_models.naive_distances(EXAMPLE) == DISTANCES


@pytest.mark.parametrize('percent,pages', [(50, 1), (75, 3), (95, 4),
                                           (100, 4), (25, 1)])
def test_extra_pages(percent, pages):
    assert reuse.extra_pages(HISTOGRAM, percent) == pages
    assert reuse.extra_pages(list(HISTOGRAM.items()), percent,
                             bucket_pages=256) == pages * 256


def test_extra_pages_edges():
    assert reuse.extra_pages({}, 95) == 0
    # 95 % of 20 swap-ins is exactly 19: no float slack needed
    assert reuse.extra_pages({0: 19, 7: 1}, 95) == 1
    with pytest.raises(ValueError):
        reuse.extra_pages(HISTOGRAM, 0)


def test_server_reports_the_example(ctl):
    info, _ = ctl.create_export('geiger', 1 << 20, bucket_pages=1)
    c = nbd.NBDClient(info['socket']).connect()
    for op, page in EXAMPLE:
        if op == 'w':
            assert c.write(page * PAGE, bytes([page]) * PAGE) == 0
        else:
            err, data = c.read(page * PAGE, PAGE)
            assert err == 0
    c.disconnect()

    st = ctl.stats('geiger', percentile=95)
    mon = reuse.ReuseReading.from_stats(st)
    assert mon.histogram == HISTOGRAM
    assert (mon.interval_swap_ins, mon.interval_cold) == (4, 1)
    assert (mon.swap_out_pages, mon.swap_in_pages) == (6, 5)
    assert mon.queue_pages == 1                      # page 4 only
    assert mon.extra_bytes == 4 * PAGE
    assert mon.extra_bytes_for(75) == 3 * PAGE
    assert ctl.stats('geiger', percentile=50)['monitor']['interval'][
        'extra_bytes'] == PAGE
    assert st['counters']['writes'] == 6 and st['counters']['reads'] == 5

    # the page-offset stream of swap-outs and swap-ins
    ev = ctl.events('geiger')
    assert [(op, page) for _, op, page in ev['events']] == EXAMPLE
    assert ev['lost'] == 0 and ev['next'] == len(EXAMPLE)
    assert reference_models.naive_distances(
        (op, page) for _, op, page in ev['events']) == DISTANCES
    assert [e[0] for e in ctl.events('geiger', since=9)['events']] == [9, 10]


def test_interval_reset_and_buckets(ctl):
    info, _ = ctl.create_export('buckets', 1 << 20, bucket_pages=2)
    c = nbd.NBDClient(info['socket']).connect()
    assert c.write(0, bytes(10 * PAGE)) == 0        # pages 0..9, in order
    for page in (0, 1, 2, 3):                        # D = 9, 8, 7, 6
        assert c.read(page * PAGE, PAGE)[0] == 0
    c.disconnect()
    st = ctl.stats('buckets', reset=True)['monitor']
    assert st['interval']['histogram'] == [[3, 2], [4, 2]]
    assert st['interval']['extra_bytes'] == 10 * PAGE   # 95 %: 5 buckets
    assert st['reset'] is True
    st = ctl.stats('buckets')['monitor']
    assert st['interval']['swap_ins'] == 0
    assert st['interval']['extra_bytes'] == 0
    assert st['cumulative']['swap_ins'] == 4


def test_trim_forgets_pages(ctl):
    info, _ = ctl.create_export('trim', 1 << 20, bucket_pages=1)
    c = nbd.NBDClient(info['socket']).connect()
    assert c.write(0, bytes(3 * PAGE)) == 0
    assert c.simple(nbd.CMD_TRIM, PAGE, PAGE) == 0      # page 1 discarded
    assert c.read(0, PAGE)[0] == 0                      # D = 1 (page 2)
    assert c.read(PAGE, PAGE)[0] == 0                   # cold
    c.disconnect()
    iv = ctl.stats('trim')['monitor']['interval']
    assert iv['histogram'] == [[1, 1]] and iv['cold'] == 1
