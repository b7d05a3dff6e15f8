"""The agent's memstore-backed remote memory (memmut.agent.remote) against
a fake memstore control client and a fake controller: the lender's books,
the client's attach/detach, and the client policy (local needs first, a
per-VM cap, release when the demand falls or a slab fails)."""

import oslo_messaging as messaging
import pytest

from memmut.agent.mutualization import books as bookmod
from memmut.agent import remote
from memmut.memstore import client as msclient
from memmut import objects

MIB = 1024
KEY = '0f' * 32


class FakeMemstore:
    """The slab ops of memmut.memstore.client.ControlClient."""

    def __init__(self):
        self.lent = {}
        self.attached = {}      # id -> (export, state)
        self.refuse = None
        self.calls = []
        self.dirty_windows = {}     # id -> slab_attach's dirty_window

    def _check(self, op):
        self.calls.append(op)
        if self.refuse:
            raise msclient.MemstoreError('%s refused: %s' % (op, self.refuse))

    def slab_create(self, slab_id, size, psk_identity, psk_key):
        self._check('slab_create')
        self.lent[slab_id] = size
        return {'id': slab_id, 'size': size,
                'uri': 'nbds://192.0.2.2:10809/%s' % slab_id}

    def slab_delete(self, slab_id):
        self._check('slab_delete')
        return self.lent.pop(slab_id, None) is not None

    def slab_attach(self, name, slab_id, uri, size, psk_identity, psk_key,
                    timeout_ms=None, dirty_window=None):
        self._check('slab_attach')
        self.attached[slab_id] = (name, 'attached', timeout_ms)
        self.dirty_windows[slab_id] = dirty_window
        return {'id': slab_id}

    def slab_detach(self, slab_id):
        self._check('slab_detach')
        return self.attached.pop(slab_id, None) is not None

    def slabs(self):
        self._check('slabs')
        return {'lent': [{'id': i} for i in self.lent],
                'attached': [{'id': i, 'export': e, 'state': s}
                             for i, (e, s, _) in self.attached.items()]}


def _request(aid='a1', size_kb=64 * MIB):
    return objects.LmcAllocRequest(
        allocation_id=aid, client_host='c', vm_uuid='vm', size_kb=size_kb,
        psk_identity='memmut-alloc-%s' % aid, psk_key=KEY)


def _device(aid='a1', size_kb=64 * MIB):
    return objects.RemoteDevice(
        allocation_id=aid, server_host='s',
        uri='nbds://192.0.2.2:10809/%s' % aid, size_kb=size_kb,
        psk_identity='memmut-alloc-%s' % aid, psk_key=KEY)


def test_a_lent_slab_is_booked_before_memstore_is_asked():
    ms = FakeMemstore()
    books = bookmod.Books(total_kb=1024 * MIB, reserve_kb=512 * MIB)
    rm = remote.MemstoreRemoteMemory('s', ms, books=lambda: books)
    device = rm.export(_request('a1', 100 * MIB))
    assert device.uri == 'nbds://192.0.2.2:10809/a1'
    assert device.psk_key is None       # the lender never echoes the key
    assert ms.lent == {'a1': 100 * MIB * 1024}
    assert books.exports == {'a1': 100 * MIB}
    assert books.pool_kb == 412 * MIB
    # more than the pool holds: refused by the books, memstore not asked
    with pytest.raises(remote.Refused, match='cannot lend'):
        rm.export(_request('a2', 413 * MIB))
    assert 'a2' not in ms.lent and ms.calls == ['slab_create']
    # memstore refuses: the books give the size back
    ms.refuse = 'the host quota has 0 of 1073741824 bytes free'
    with pytest.raises(remote.Refused, match='host quota'):
        rm.export(_request('a3', 10 * MIB))
    assert books.exports == {'a1': 100 * MIB}
    ms.refuse = None
    assert rm.exports() == ['a1']
    assert rm.unexport('a1') is True
    assert books.exports == {} and books.pool_kb == 512 * MIB
    assert rm.unexport('a1') is False
    assert rm.exports() == []


def test_books_follow_a_restarted_memstore():
    ms = FakeMemstore()
    books = bookmod.Books(total_kb=1024 * MIB, reserve_kb=512 * MIB)
    rm = remote.MemstoreRemoteMemory('s', ms, books=lambda: books)
    rm.export(_request('a1', 100 * MIB))
    rm.export(_request('a2', 50 * MIB))
    assert rm.exports() == ['a1', 'a2'] and books.pool_kb == 362 * MIB
    del ms.lent['a1']           # memstore restarted without a1
    assert rm.exports() == ['a2']
    assert books.exports == {'a2': 50 * MIB} and books.pool_kb == 462 * MIB
    assert rm.unexport('a1') is False


def test_attach_detach_and_what_the_reports_list():
    ms = FakeMemstore()
    rm = remote.MemstoreRemoteMemory('c', ms, timeout=0.2)
    rm.attach('vm-1', _device('a1'))
    assert ms.attached['a1'] == ('vm-1', 'attached', 200)
    ms.attached['a2'] = ('vm-1', 'failed', 200)
    assert rm.attachments() == ['a1']       # a failed slab is not in use
    assert rm.detach('a1') is True and rm.detach('a1') is False
    with pytest.raises(remote.Refused, match='credentials'):
        rm.attach('vm-1', _device('a3').__class__(
            allocation_id='a3', server_host='s', uri='nbds://x:1/a3',
            size_kb=1))
    ms.refuse = 'TLS: handshake failure'
    with pytest.raises(remote.Refused, match='TLS'):
        rm.attach('vm-1', _device('a4'))
    # memstore unreachable: the report says "unknown", not "none"
    ms.refuse = None
    rm.client = msclient.ControlClient('/nonexistent/control.sock')
    assert rm.attachments() is None and rm.exports() is None


def test_make_chooses_by_configuration(conf):
    assert isinstance(remote.make(conf, 'h'), remote.NoRemoteMemory)
    conf.set_override('enabled', True, 'memstore')
    conf.set_override('remote_timeout', 0.5, 'memstore')
    rm = remote.make(conf, 'h', client=FakeMemstore())
    assert isinstance(rm, remote.MemstoreRemoteMemory) and rm.timeout == 0.5
    # the page-cache bound goes to memstore with each attach, in bytes
    assert rm.dirty_window == 64 * 1024 * 1024
    conf.set_override('remote_dirty_window', 0, 'memstore')
    rm = remote.make(conf, 'h', client=FakeMemstore())
    rm.attach('vm-1', _device('a9'))
    assert rm.client.dirty_windows['a9'] == 0
    assert conf.mutualization.remote_cap_kb == 0    # off unless asked


class FakeGMC:
    def __init__(self, grant=True):
        self.grant = grant
        self.allocs, self.released, self.failed = [], [], []
        self.n = 0
        self.up = True

    def gmc_alloc(self, request, timeout=None):
        if not self.up:
            raise messaging.MessagingTimeout('no reply')
        self.allocs.append((request.vm_uuid, request.size_kb))
        if not self.grant:
            return objects.AllocResult(granted=False, reason='no lender')
        self.n += 1
        return objects.AllocResult(granted=True, device=_device(
            'g%d' % self.n, request.size_kb))

    def gmc_release(self, ref, timeout=None):
        self.released.append((ref.allocation_id, ref.reason))
        self.failed.append(ref.failed)
        return {'released': True, 'reason': ''}


def _policy(cap_kb=256 * MIB, grant=True):
    ms, gmc = FakeMemstore(), FakeGMC(grant)
    rm = remote.MemstoreRemoteMemory('c', ms)
    return remote.RemoteClientPolicy('c', rm, gmc, cap_kb), ms, gmc


def test_policy_asks_only_for_unmet_demand_up_to_the_cap():
    pol, ms, gmc = _policy(cap_kb=256 * MIB)
    vms = {'v1', 'v2'}
    # local mutualization covered everything: nobody asks
    pol.step({}, vms)
    assert gmc.allocs == []
    # v1 lacks 100.5 MiB: rounded up to whole MiB; v2 lacks more than the
    # cap: capped
    pol.step({'v1': 100 * MIB + 512, 'v2': 900 * MIB}, vms)
    assert sorted(gmc.allocs) == [('v1', 101 * MIB), ('v2', 256 * MIB)]
    assert {i: e for i, (e, _, _) in ms.attached.items()} == {
        'g1': 'v1', 'g2': 'v2'}
    assert pol.held_kb('v1') == 101 * MIB
    # the same demand next round: nothing more is asked
    pol.step({'v1': 100 * MIB + 512, 'v2': 900 * MIB}, vms)
    assert len(gmc.allocs) == 2
    # v1 needs more: it asks for the difference only
    pol.step({'v1': 150 * MIB, 'v2': 900 * MIB}, vms)
    assert gmc.allocs[-1] == ('v1', 49 * MIB)
    # v1's demand falls below its newest allocation: that one goes back
    pol.step({'v1': 90 * MIB, 'v2': 900 * MIB}, vms)
    assert gmc.released == [('g3', 'demand fell')]
    assert 'g3' not in ms.attached and pol.held_kb('v1') == 101 * MIB
    # a round that planned nothing resizes nothing
    pol.step(None, vms)
    assert len(gmc.released) == 1
    # no more unmet demand: everything goes back
    pol.step({}, vms)
    assert sorted(a for a, _ in gmc.released) == ['g1', 'g2', 'g3']
    assert ms.attached == {} and pol.held == {}


def test_policy_releases_failed_slabs_and_unusable_grants():
    pol, ms, gmc = _policy()
    pol.step({'v1': 10 * MIB}, {'v1'})
    assert list(ms.attached) == ['g1']
    # the lender died: memstore detached the slab by itself
    ms.attached['g1'] = ('v1', 'failed', 200)
    pol.step(None, {'v1'})
    # released as failed (the controller closes it as failed), and
    # detached from memstore
    assert gmc.released == [('g1', 'slab failed: lender or link down')]
    assert gmc.failed == [True] and 'g1' not in ms.attached
    # still short: a new allocation is asked for
    pol.step({'v1': 10 * MIB}, {'v1'})
    assert list(ms.attached) == ['g2']
    # the lender reclaimed it (LMC_reclaim detached it): a plain release
    ms.attached.pop('g2')
    pol.step(None, {'v1'})
    assert gmc.released[-1] == ('g2', 'slab detached (reclaimed)')
    assert gmc.failed[-1] is False
    pol.step({'v1': 10 * MIB}, {'v1'})
    assert list(ms.attached) == ['g3']
    # the VM leaves the host: released
    pol.step({}, set())
    assert gmc.released[-1] == ('g3', 'the VM left this host')
    # a grant memstore cannot attach (credentials, lender unreachable) is
    # released at once
    ms.refuse = 'cannot attach slab g4: Connection refused'
    pol.step({'v1': 10 * MIB}, {'v1'})
    assert gmc.released[-1][0] == 'g4' and pol.held == {}


def test_policy_is_off_at_cap_zero_and_survives_a_silent_gmc():
    pol, ms, gmc = _policy(cap_kb=0)
    pol.step({'v1': 10 * MIB}, {'v1'})
    assert gmc.allocs == [] and ms.calls == []
    pol, ms, gmc = _policy(grant=False)
    pol.step({'v1': 10 * MIB}, {'v1'})
    assert gmc.allocs == [('v1', 10 * MIB)] and pol.held == {}
    gmc.up = False
    pol.step({'v1': 10 * MIB}, {'v1'})
    assert pol.held == {}
