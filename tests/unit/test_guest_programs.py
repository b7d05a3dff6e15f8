"""Host programs carried into the test guest (tests/harness/
guest_programs.py) and the sqlite workload's parameters."""

import os
import shutil

import pytest

from tests.harness import guest_programs
from tests.harness import sqlite


def test_a_program_comes_with_every_library_it_loads():
    sh = shutil.which('sh')
    out = guest_programs.extras('/opt/x', {'shell': 'sh'}, 'dash')
    assert out[0] == ('/opt/x/shell', os.path.realpath(sh), 0o755)
    libs = [guest for guest, _, _ in out[1:]]
    # at least libc and the dynamic loader, at the paths ldd names
    assert any('libc.so' in p for p in libs), libs
    assert any('ld-linux' in p for p in libs), libs
    assert all(os.path.isfile(host) for _, host, _ in out)


def test_a_missing_program_names_the_package_to_install():
    with pytest.raises(guest_programs.ProgramMissing,
                       match='apt-get install no-such-package'):
        guest_programs.extras('/opt/x', {'x': 'no-such-program-here'},
                              'no-such-package')


def test_sqlite_lookups_follow_the_stated_power_law():
    # x ** (1 / skew): the docstring's figures at skew 4
    assert round(sqlite.share_of_lookups(0.01), 2) == 0.32
    assert round(sqlite.share_of_lookups(0.1), 2) == 0.56
    assert round(1 - sqlite.share_of_lookups(0.5), 2) == 0.16
    assert sqlite.share_of_lookups(0.3, skew=1) == 0.3


def test_sqlite_cmdline_carries_the_run_and_refuses_nonsense():
    words = sqlite.cmdline(30, rows=1000, skew=2).split()
    assert 'memmut.sqlite=30' in words
    assert 'memmut.sqlite_rows=1000' in words
    assert 'memmut.sqlite_skew=2' in words
    assert 'memwork.poweroff=1' in words
    with pytest.raises(ValueError):
        sqlite.cmdline(30, rows=0)
    with pytest.raises(ValueError):
        sqlite.cmdline(30, skew=0.5)
    with pytest.raises(ValueError):
        sqlite.cmdline(30, pause_ms=-1)
    assert 'memmut.sqlite_pause_ms=100' in sqlite.cmdline(30, pause_ms=100)


def test_the_evictable_part_of_a_skewed_table_is_what_the_bound_allows():
    # 256 pages/s read back allowed, 37 000 lookups/s of 2 pages each:
    # the coldest rows whose lookups add up to 0.35 % of them
    f4 = sqlite.evictable_fraction(37000, 256, skew=4)
    f16 = sqlite.evictable_fraction(37000, 256, skew=16)
    assert 0.01 < f4 < 0.02 and 0.05 < f16 < 0.06
    # their lookups are the bound, by construction
    for f, skew in ((f4, 4), (f16, 16)):
        share = 1 - (1 - f) ** (1 / skew)
        assert abs(share * 2 * 37000 - 256) < 1e-6
    # an idle table can all go; a uniform one only the bound's share
    assert sqlite.evictable_fraction(0, 256) == 1.0
    assert abs(sqlite.evictable_fraction(1000, 256, skew=1,
                                         pages_per_lookup=1) - 0.256) < 1e-9
