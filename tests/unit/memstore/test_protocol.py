"""The NBD server of memmut-memstore, driven over its unix socket by a
client written from the protocol document, including malformed input."""

import os
import random
import socket
import struct

import pytest

from tests.harness import nbdclient as nbd

SIZE = 4 << 20


@pytest.fixture
def export(ctl, memstore):
    info, created = ctl.create_export('vm1', SIZE, quota=1 << 20)
    assert created and info['socket'] == memstore.socket_path('vm1')
    return info['socket']


def alive(ctl):
    """The server still answers (after abuse)."""
    return ctl.hello()['ok']


def test_handshake_and_info(export):
    c = nbd.NBDClient(export)
    assert c.greet() == 3              # FIXED_NEWSTYLE | NO_ZEROES
    c.option(nbd.OPT_LIST)
    _, kind, data = c.option_reply()
    assert kind == nbd.REP_SERVER and data[4:] == b'vm1'
    assert c.option_reply()[1] == nbd.REP_ACK
    assert c.go(b'vm1', opt=nbd.OPT_INFO)[-1] == nbd.REP_ACK
    assert c.go(b'nope') == [nbd.REP_ERR_UNKNOWN]
    c.option(nbd.OPT_STRUCTURED_REPLY)
    assert c.option_reply()[1] == nbd.REP_ERR_UNSUP
    c.option(nbd.OPT_STARTTLS)
    assert c.option_reply()[1] == nbd.REP_ERR_POLICY
    kinds = c.go(b'vm1')
    assert kinds == [nbd.REP_INFO, nbd.REP_INFO, nbd.REP_ACK]
    assert c.size == SIZE
    for f in (nbd.TF_HAS_FLAGS, nbd.TF_SEND_FLUSH, nbd.TF_SEND_FUA,
              nbd.TF_SEND_TRIM, nbd.TF_SEND_WRITE_ZEROES):
        assert c.flags & f
    c.disconnect()


def test_old_style_export_name(export):
    c = nbd.NBDClient(export)
    c.greet(client_flags=1)            # no NO_ZEROES: 124 zero bytes follow
    c.option(nbd.OPT_EXPORT_NAME, b'')
    size, flags = struct.unpack('>QH', c.recv(10))
    assert size == SIZE and c.recv(124) == bytes(124)
    assert c.write(0, b'x' * 512) == 0
    c.disconnect()

    c = nbd.NBDClient(export)
    c.greet()
    c.option(nbd.OPT_EXPORT_NAME, b'someone-else')
    assert c.closed_by_server()        # no error reply exists: closed


def test_read_write_trim_zero_flush(export):
    c = nbd.NBDClient(export).connect(b'vm1')
    model = bytearray(4 * 4096)        # what the first 4 pages must hold

    def put(off, data):
        model[off:off + len(data)] = data

    data = os.urandom(3 * 4096)
    assert c.write(4096, data) == 0
    put(4096, data)
    assert c.read(4096, len(data)) == (0, data)
    assert c.write(8192 + 100, b'abc', flags=nbd.FLAG_FUA) == 0
    put(8192 + 100, b'abc')
    assert c.read(8192 + 98, 7) == (0, bytes(model[8192 + 98:8192 + 105]))
    assert c.simple(nbd.CMD_TRIM, 4096, 4096) == 0
    put(4096, bytes(4096))
    assert c.simple(nbd.CMD_WRITE_ZEROES, 8192, 101,
                    flags=nbd.FLAG_NO_HOLE) == 0
    put(8192, bytes(101))
    assert c.simple(nbd.CMD_WRITE_ZEROES, 12288 + 5, 10) == 0
    put(12288 + 5, bytes(10))
    assert c.read(0, len(model)) == (0, bytes(model))
    assert c.simple(nbd.CMD_FLUSH) == 0
    assert c.simple(nbd.CMD_CACHE, 0, 4096) == 0
    # last byte of the export, zero-length requests
    assert c.write(SIZE - 1, b'z') == 0
    assert c.read(SIZE - 1, 1) == (0, b'z')
    assert c.read(0, 0) == (0, b'')
    c.disconnect()


@pytest.mark.parametrize('cmd,offset,length,flags,errno', [
    (nbd.CMD_READ, SIZE, 1, 0, nbd.EINVAL),            # past the end
    (nbd.CMD_READ, SIZE - 4095, 4096, 0, nbd.EINVAL),  # straddles the end
    (nbd.CMD_READ, 2 ** 64 - 1, 4096, 0, nbd.EINVAL),  # offset overflows
    (nbd.CMD_READ, 0, (32 << 20) + 1, 0, nbd.EINVAL),  # over max payload
    (nbd.CMD_READ, 0, 4096, nbd.FLAG_DF, nbd.EINVAL),  # DF, no structured
    (nbd.CMD_READ, 0, 4096, 0x8000, nbd.EINVAL),       # unknown flag
    (nbd.CMD_TRIM, SIZE - 4096, 8192, 0, nbd.ENOSPC),
    (nbd.CMD_WRITE_ZEROES, SIZE, 1, 0, nbd.ENOSPC),
    (nbd.CMD_TRIM, 0, 4096, nbd.FLAG_NO_HOLE, nbd.EINVAL),
    (nbd.CMD_BLOCK_STATUS, 0, 4096, 0, nbd.EINVAL),    # not negotiated
    (8, 0, 0, 0, nbd.EINVAL),                          # resize
    (0xffff, 0, 0, 0, nbd.EINVAL),                     # unknown command
])
def test_bad_requests_get_error_replies(export, ctl, cmd, offset, length,
                                        flags, errno):
    c = nbd.NBDClient(export).connect()
    cookie = c.request(cmd, offset, length, flags)
    assert c.reply() == (errno, cookie, b'')
    # the connection is still in step
    assert c.write(0, b'ok') == 0 and c.read(0, 2) == (0, b'ok')
    c.disconnect()
    assert ctl.stats('vm1')['counters']['errors'] >= 1


def test_bad_write_payload_is_consumed(export):
    c = nbd.NBDClient(export).connect()
    payload = b'P' * 8192
    cookie = c.request(nbd.CMD_WRITE, SIZE - 4096, len(payload),
                       payload=payload)
    assert c.reply() == (nbd.ENOSPC, cookie, b'')
    # a write with an unknown flag: EINVAL, payload skipped too
    cookie = c.request(nbd.CMD_WRITE, 0, 4, flags=0x40, payload=b'QQQQ')
    assert c.reply() == (nbd.EINVAL, cookie, b'')
    assert c.read(0, 4) == (0, bytes(4))
    assert c.read(SIZE - 4096, 4096) == (0, bytes(4096))
    c.disconnect()


def test_bad_magic_closes_only_that_connection(export, ctl):
    good = nbd.NBDClient(export).connect()
    bad = nbd.NBDClient(export).connect()
    bad.request(nbd.CMD_READ, 0, 512, magic=0x12345678)
    assert bad.closed_by_server()
    assert good.write(0, b'still here') == 0
    good.disconnect()
    assert alive(ctl)


def test_handshake_abuse(export, ctl):
    c = nbd.NBDClient(export)
    c.greet(client_flags=0x80)         # unknown client flag
    assert c.closed_by_server()

    c = nbd.NBDClient(export)
    c.greet()
    c.raw(b'\0' * 16)                  # bad option magic
    assert c.closed_by_server()

    c = nbd.NBDClient(export)
    c.greet()
    c.option(nbd.OPT_GO, b'\0\0\0\x09abc')      # name longer than data
    assert c.option_reply()[1] == nbd.REP_ERR_INVALID
    c.option(nbd.OPT_INFO, b'x' * (64 << 10 + 1))
    assert c.option_reply()[1] == nbd.REP_ERR_TOO_BIG
    c.option(77, b'junk')
    assert c.option_reply()[1] == nbd.REP_ERR_UNSUP
    c.option(nbd.OPT_ABORT, b'x')
    assert c.option_reply()[1] == nbd.REP_ERR_INVALID
    c.option(nbd.OPT_ABORT)
    assert c.option_reply()[1] == nbd.REP_ACK
    assert c.closed_by_server()
    assert alive(ctl)


def test_truncated_and_random_input_never_kills_the_server(export, ctl,
                                                           memstore):
    rnd = random.Random(4)
    for i in range(60):
        c = nbd.NBDClient(export, timeout=5)
        try:
            if i % 3:
                c.connect()
            blob = bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(
                1, 200)))
            if i % 4 == 0:   # a valid header with a truncated payload
                blob = struct.pack('>IHHQQI', nbd.REQUEST_MAGIC, 0,
                                   nbd.CMD_WRITE, 1, 0, 4096) + blob[:100]
            c.raw(blob)
            c.sock.shutdown(socket.SHUT_WR)
            while c.sock.recv(65536):
                pass
        except (nbd.Closed, OSError):
            pass
        finally:
            c.close()
    assert memstore.proc.poll() is None
    assert alive(ctl)
    c = nbd.NBDClient(export).connect()
    assert c.write(8192, b'after the storm') == 0
    c.disconnect()


def test_pipelined_requests(export):
    """32 requests in flight, replies matched by cookie."""
    c = nbd.NBDClient(export).connect()
    pages = {i: os.urandom(4096) for i in range(256)}
    for i, d in pages.items():
        c.request(nbd.CMD_WRITE, i * 4096, 4096, payload=d, cookie=i)
    assert sorted(c.reply()[:2] for _ in pages) == [(0, i) for i in pages]
    for batch in range(0, len(pages), 32):
        for i in range(batch, batch + 32):
            c.request(nbd.CMD_READ, i * 4096, 4096, cookie=1000 + i)
        for _ in range(32):
            err, cookie, data = c.reply(4096)
            assert err == 0 and data == pages[cookie - 1000]
    c.disconnect()


def test_two_exports_are_separate(ctl, memstore):
    a, _ = ctl.create_export('a', 1 << 20)
    b, _ = ctl.create_export('b', 2 << 20)
    ca = nbd.NBDClient(a['socket']).connect(b'a')
    cb = nbd.NBDClient(b['socket']).connect()
    assert (ca.size, cb.size) == (1 << 20, 2 << 20)
    assert ca.write(0, b'A' * 4096) == 0
    assert cb.read(0, 4096) == (0, bytes(4096))
    cx = nbd.NBDClient(a['socket'])
    cx.greet()
    assert cx.go(b'b') == [nbd.REP_ERR_UNKNOWN]   # one export per socket
    cx.close()
    ca.disconnect()
    cb.disconnect()
