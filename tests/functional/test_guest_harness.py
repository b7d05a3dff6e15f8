"""The guest harness's console parsing (tests/harness/guest.py): what
the functional tests wait on must survive the guest kernel's console
output cutting a line."""

import pytest

pytest.importorskip('libvirt')

from tests.harness import guest  # noqa: E402


def test_a_gueststat_line_cut_by_kernel_output_is_dropped():
    full = ('GUESTSTAT t=12.5 memtotal_kb=250000 memfree_kb=1000 '
            'memavail_kb=2000 swaptotal_kb=524288 swapfree_kb=400000 '
            'pswpin=10 pswpout=20 committed_as_kb=90000')
    text = '\n'.join([
        full,
        # the CI failure after stop 33: a printk in the middle of a line
        'GUESTSTAT t=13.5 memtotal_kb=250000 memfree_kb=1000 memavail_'
        '[   13.6] virtio_balloon virtio0: ...',
        full.replace('t=12.5', 't=14.5').replace('pswpout=20', 'pswpout=30'),
    ])
    lines = guest.stat_lines(text)
    assert [d['t'] for d in lines] == [12.5, 14.5]
    assert lines[-1]['pswpout'] == 30
    # parse_lines itself keeps every line (other prefixes need them)
    assert len(guest.parse_lines(text, 'GUESTSTAT')) == 3
