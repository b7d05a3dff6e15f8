"""The page store: RAM quotas per export and per host, overflow to the
backing file, run-time quota changes, and SIGKILL + restart durability."""

import os
import signal

import pytest

from memmut.memstore import client as clientmod
from tests.harness import nbdclient as nbd

PAGE = 4096


def pages(n, seed=0):
    return [os.urandom(PAGE) for _ in range(n)]


def write_all(c, data, first=0):
    for i, d in enumerate(data):
        assert c.write((first + i) * PAGE, d) == 0


def check_all(c, data, first=0):
    for i, d in enumerate(data):
        assert c.read((first + i) * PAGE, PAGE) == (0, d), i


def test_export_quota_overflows_to_file(ctl):
    info, _ = ctl.create_export('q', 1 << 20, quota=4 * PAGE)
    c = nbd.NBDClient(info['socket']).connect()
    data = pages(10)
    write_all(c, data)
    st = ctl.stats('q')
    assert st['export']['ram_bytes'] == 4 * PAGE
    assert st['export']['stored_bytes'] == 10 * PAGE
    assert st['counters']['evicted_pages'] == 6
    check_all(c, data)
    st = ctl.stats('q')['counters']
    assert (st['ram_hit_pages'], st['file_read_pages']) == (4, 6)
    # shrink at run time: everything still readable, from the file
    assert ctl.set_quota('q', 0) == 4
    assert ctl.get_export('q')['ram_bytes'] == 0
    check_all(c, data)
    # grow again: new writes are cached
    ctl.set_quota('q', 1 << 20)
    write_all(c, data[:3])
    assert ctl.get_export('q')['ram_bytes'] == 3 * PAGE
    c.disconnect()


def test_host_quota_is_shared_and_changeable(ctl):
    a, _ = ctl.create_export('a', 1 << 20)
    b, _ = ctl.create_export('b', 1 << 20)
    ca = nbd.NBDClient(a['socket']).connect()
    cb = nbd.NBDClient(b['socket']).connect()
    da, db = pages(8), pages(8)
    write_all(ca, da)
    write_all(cb, db)
    assert ctl.hello()['host_ram_bytes'] == 16 * PAGE
    freed = ctl.set_host_quota(10 * PAGE)
    assert freed == 6 * PAGE
    hello = ctl.hello()
    assert hello['host_ram_bytes'] == 10 * PAGE
    assert hello['host_quota'] == 10 * PAGE
    assert sum(e['ram_bytes'] for e in ctl.list_exports()) == 10 * PAGE
    write_all(ca, pages(4), first=100)       # over the host quota now
    assert ctl.hello()['host_ram_bytes'] <= 10 * PAGE
    check_all(ca, da)
    check_all(cb, db)
    ca.disconnect()
    cb.disconnect()


def test_sigkill_and_restart_lose_no_acknowledged_page(ctl, memstore):
    info, _ = ctl.create_export('vm', 4 << 20, quota=16 * PAGE)
    c = nbd.NBDClient(info['socket']).connect()
    data = pages(64)
    write_all(c, data)                       # acknowledged, no FLUSH sent
    c.simple(nbd.CMD_TRIM, 10 * PAGE, PAGE)
    data[10] = bytes(PAGE)
    memstore.kill(signal.SIGKILL)
    assert memstore.proc.returncode == -signal.SIGKILL
    with pytest.raises((nbd.Closed, OSError)):
        c.read(0, PAGE)
    c.close()

    memstore.start()
    restored = memstore.client()
    e = restored.get_export('vm')
    assert e['size'] == 4 << 20 and e['quota'] == 16 * PAGE
    assert e['stored_bytes'] == 63 * PAGE
    assert e['ram_bytes'] == 0
    c = nbd.NBDClient(memstore.socket_path('vm')).connect()
    check_all(c, data)
    c.disconnect()
    assert 'restored export vm' in memstore.log()
    restored.close()


def test_export_lifecycle_and_bad_requests(ctl, memstore):
    with pytest.raises(clientmod.MemstoreError, match='invalid export name'):
        ctl.create_export('../etc', 4096)
    with pytest.raises(clientmod.MemstoreError, match='out of range'):
        ctl.create_export('zero', 0)
    info, created = ctl.create_export('x', 1 << 20)
    assert created
    assert ctl.create_export('x', 1 << 20) == (ctl.get_export('x'), False)
    with pytest.raises(clientmod.MemstoreError, match='exists with size'):
        ctl.create_export('x', 2 << 20)
    c = nbd.NBDClient(info['socket']).connect()
    with pytest.raises(clientmod.MemstoreError, match='connected client'):
        ctl.delete_export('x')
    ctl.delete_export('x', force=True)
    assert c.closed_by_server()
    assert not os.path.exists(info['socket'])
    assert not os.path.exists(info['backing_file'])
    assert ctl.get_export('x') is None
    with pytest.raises(clientmod.MemstoreError, match='no export'):
        ctl.stats('x')
    with pytest.raises(clientmod.MemstoreError, match='unknown op'):
        ctl.call('frobnicate')
    with pytest.raises(clientmod.MemstoreError, match='percentile'):
        ctl.call('stats', name='nonexistent-but-checked-later',
                 percentile=250)


def test_a_client_in_its_handshake_keeps_its_export(ctl):
    """A connection counts among the export's clients from accept: the
    client reads NBD_OPT_GO's acknowledgement before the server's thread
    goes on, and a delete without force in that gap used to see no
    client and remove a disk the guest had just attached."""
    import socket
    import time
    info, _ = ctl.create_export('h', 1 << 20)
    raw = socket.socket(socket.AF_UNIX)
    raw.settimeout(10)
    raw.connect(info['socket'])
    assert len(raw.recv(18)) == 18          # the greeting: accepted
    with pytest.raises(clientmod.MemstoreError, match='connected client'):
        ctl.delete_export('h')
    assert ctl.get_export('h')['clients'] == 1
    raw.close()
    deadline = time.monotonic() + 10
    while ctl.get_export('h')['clients'] and time.monotonic() < deadline:
        time.sleep(0.05)
    ctl.delete_export('h')
    assert ctl.get_export('h') is None


def test_control_protocol_raw(memstore):
    import json
    import socket
    s = socket.socket(socket.AF_UNIX)
    s.connect(memstore.control_path)
    f = s.makefile('rwb')

    def send(line):
        f.write(line + b'\n')
        f.flush()
        return json.loads(f.readline())

    r = send(b'{"v": 2, "op": "hello"}')
    assert r == {'v': 1, 'ok': False, 'error': r['error']}
    assert 'unsupported protocol version' in r['error']
    assert 'malformed JSON' in send(b'{"v": 1, "op": ')['error']
    assert send(b'"hello"')['ok'] is False
    assert send(b'{"op": "hello"}')['ok'] is False
    assert send(b'{"v": 1, "op": "create", "name": "n", "size": "big"}')[
        'error'] == 'size must be a non-negative integer'
    assert send(b'{"v": 1, "op": "hello"}')['server'] == 'memmut-memstore'
    s.close()


def test_unavailable(short_dir):
    c = clientmod.ControlClient(os.path.join(short_dir, 'none.sock'), 1)
    with pytest.raises(clientmod.MemstoreUnavailable):
        c.hello()
