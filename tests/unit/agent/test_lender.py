"""The lender takes lent memory back for its own VMs (GMC_reclaim;
memmut.agent.lender): which slabs, when it gives up waiting, and what it
tells the controller."""

import oslo_messaging as messaging

from memmut.agent import lender
from memmut.agent.mutualization import books as bookmod

MIB = 1024


def test_choose_reclaims_one_covering_slab_else_largest_first():
    exports = {'a': 64 * MIB, 'b': 256 * MIB, 'c': 128 * MIB}
    assert lender.choose_reclaims(exports, 0) == []
    assert lender.choose_reclaims({}, 10) == []
    # the smallest slab that covers the need alone
    assert lender.choose_reclaims(exports, 100 * MIB) == ['c']
    assert lender.choose_reclaims(exports, 64 * MIB) == ['a']
    # none covers it: the largest first until it is covered
    assert lender.choose_reclaims(exports, 300 * MIB) == ['b', 'c']
    # more than everything: everything
    assert lender.choose_reclaims(exports, 1 << 30) == ['b', 'c', 'a']
    # ties by id
    assert lender.choose_reclaims({'y': 5, 'x': 5}, 5) == ['x']


class Remote:
    def __init__(self, books):
        self.books, self.deleted = books, []

    def unexport(self, aid):
        self.deleted.append(aid)
        self.books.release_export(aid)
        return True


class Controller:
    def __init__(self, books, remote, answer=True):
        self.books, self.remote, self.answer = books, remote, answer
        self.asked = []

    def gmc_reclaim(self, request, timeout=None):
        self.asked.append((request.size_kb, request.allocation_ids))
        if not self.answer:
            raise messaging.MessagingTimeout('controller down')
        # the GMC detaches the client, then LMC_release frees the slab
        freed = 0
        for aid in request.allocation_ids:
            freed += self.books.release_export(aid)
        return freed


class Clock:
    t = 0.0

    def __call__(self):
        return self.t


def _parts(answer=True, timeout=30):
    books = bookmod.Books(4 << 20, 1 << 20)
    for aid, kb in (('a', 64 * MIB), ('b', 256 * MIB)):
        books.export(aid, kb)
    remote = Remote(books)
    ctl = Controller(books, remote, answer)
    clock = Clock()
    return (lender.LenderReclaim('s', remote, ctl, lambda: books, timeout,
                                 clock=clock), books, remote, ctl, clock)


def test_reclaim_through_the_controller_frees_the_slab():
    lr, books, remote, ctl, _ = _parts()
    pool = books.pool_kb
    assert lr.step(0) == [] and lr.step(None) == []
    assert lr.step(100 * MIB) == ['b']
    assert ctl.asked == [(256 * MIB, ['b'])]
    # freed by the controller's LMC_release during the call: nothing left
    # to wait for, the pool has it for Algorithm 1's next round
    assert lr.pending == {} and books.pool_kb == pool + 256 * MIB
    assert remote.deleted == []
    assert lr.step(None) == []


def test_a_reclaim_nobody_answers_ends_after_the_timeout():
    lr, books, remote, ctl, clock = _parts(answer=False, timeout=30)
    assert lr.step(300 * MIB) == ['b', 'a']
    assert set(lr.pending) == {'a', 'b'} and books.exports
    # the same need while they are being reclaimed: nothing asked again
    clock.t = 29
    assert lr.step(300 * MIB) == [] and len(ctl.asked) == 1
    assert remote.deleted == []
    # the timeout: the lender deletes them itself
    clock.t = 30
    assert lr.step(300 * MIB) == []
    assert sorted(remote.deleted) == ['a', 'b'] and books.exports == {}
    assert lr.pending == {}


def test_a_need_that_grows_asks_only_for_the_difference():
    lr, books, remote, ctl, clock = _parts(answer=False)
    assert lr.step(10 * MIB) == ['a']
    assert lr.reclaiming_kb() == 64 * MIB
    assert lr.step(60 * MIB) == []              # covered by a
    assert lr.step(100 * MIB) == ['b']          # 36 MiB more: b
    # a was freed meanwhile (the client detached late): forgotten
    books.release_export('a')
    lr.step(100 * MIB)
    assert list(lr.pending) == ['b']
