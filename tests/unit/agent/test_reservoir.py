"""The per-host memory books."""

import pytest

from memmut.agent.mutualization import algorithm1 as mut
from memmut.agent.mutualization import books as bookmod

MiB = 1024
GiB = 1024 * MiB


def books():
    b = bookmod.Books(total_kb=8 * GiB, reserve_kb=1 * GiB)
    b.add_vm('a', 2 * GiB, 2 * GiB, 4 * GiB)
    b.add_vm('b', 2 * GiB, 2 * GiB, 4 * GiB)
    return b


def test_accounts_add_up():
    b = books()
    assert b.budget_kb == 7 * GiB
    assert b.pool_kb == 3 * GiB
    assert b.unassigned_kb == 3 * GiB
    assert b.reservoir_kb == 3 * GiB
    b.check()


def test_moves_keep_the_invariant_and_the_views():
    b = books()
    b.reclaim('a', 512 * MiB)               # a becomes a server
    b.grant('b', 1 * GiB)                   # b becomes a client
    b.export('alloc-1', 256 * MiB)
    b.store_local(128 * MiB)
    assert b.vms['a'].role == 'server' and b.vms['b'].role == 'client'
    assert b.pool_kb == 3 * GiB + 512 * MiB - 1 * GiB - 384 * MiB
    assert b.lent_local_kb == 1 * GiB
    assert b.reclaimed_kb == 512 * MiB
    assert b.granted_within_init_kb == 2 * GiB + 1536 * MiB
    # pool + exports + local store + lent_local = reclaimed + unassigned
    assert (b.pool_kb + b.exported_kb + b.local_store_kb + b.lent_local_kb ==
            b.reclaimed_kb + b.unassigned_kb)
    assert b.release_export('alloc-1') == 256 * MiB
    b.release_local(128 * MiB)
    assert b.remove_vm('b') == 3 * GiB
    assert b.pool_kb == 7 * GiB - (2 * GiB - 512 * MiB)
    b.check()


def test_refusals_change_nothing():
    b = books()
    before = b.summary()
    with pytest.raises(bookmod.BooksError, match='pool has'):
        b.grant('a', 4 * GiB)
    with pytest.raises(bookmod.BooksError, match='above its booked'):
        b.grant('a', 2 * GiB + 1)
    with pytest.raises(bookmod.BooksError, match='cannot reclaim'):
        b.reclaim('a', 3 * GiB)
    with pytest.raises(bookmod.BooksError, match='not in the books'):
        b.grant('zz', 1)
    with pytest.raises(bookmod.BooksError, match='already'):
        b.add_vm('a', 1, 1, 1)
    with pytest.raises(bookmod.BooksError, match='pool has'):
        b.export('x', 4 * GiB)
    with pytest.raises(bookmod.BooksError, match='no export'):
        b.release_export('x')
    with pytest.raises(bookmod.BooksError, match='non-negative'):
        b.reclaim('a', -1)
    assert b.summary() == before


def test_check_reports_double_counting():
    b = books()
    b.vms['a'].alloc_kb += 100              # granted without leaving pool
    with pytest.raises(bookmod.BooksError,
                       match=r'off by \+100.*pool_kb'):
        b.check()


def test_check_reports_vm_above_booked():
    b = books()
    b.vms['a'].booked_kb = 1
    with pytest.raises(bookmod.BooksError, match='above its booked'):
        b.check()


def test_open_overcommitted_host():
    with pytest.raises(bookmod.BooksError, match='pool has'):
        bookmod.Books.open(4 * GiB, 1 * GiB,
                           [('a', 2 * GiB, 2 * GiB, 2 * GiB),
                            ('b', 2 * GiB, 2 * GiB, 2 * GiB)])
    with pytest.raises(bookmod.BooksError, match='reserve'):
        bookmod.Books(1, 2)


def test_set_allocation_resyncs():
    b = books()
    b.set_allocation('a', 1 * GiB)
    assert b.pool_kb == 4 * GiB
    b.set_allocation('a', 3 * GiB)
    assert b.pool_kb == 2 * GiB


def test_apply_plan():
    b = books()
    plan = mut.distribute(
        [mut.VMDemand('a', 2 * GiB, 2 * GiB, 1 * GiB, 4 * GiB),
         mut.VMDemand('b', 2 * GiB, 2 * GiB, 4 * GiB, 4 * GiB)],
        b.pool_kb, 'equal')
    b.apply(plan)
    assert {u: vm.alloc_kb for u, vm in b.vms.items()} == plan.allocations
    assert b.pool_kb == plan.pool_after_kb
