"""Write the small seed corpus of the memstore fuzzers (committed; run
again only to change it): corpus/control/* are control request lines,
corpus/nbd/* client streams (first byte: 0 = allowed peer, 1 = refused)."""

import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
IHAVEOPT = 0x49484156454F5054
REQ = 0x25609513

CONTROL = [
    b'{"v":1,"op":"hello"}',
    b'{"v":1,"op":"create","name":"vm1","size":1048576,"quota":8192}',
    b'{"v":1,"op":"create","name":"vm1","size":1048576,"pid":42,'
    b'"bucket_pages":4}',
    b'{"v":1,"op":"bind","name":"vm1","pid":1234}',
    b'{"v":1,"op":"bind","name":"vm1","pid":null}',
    b'{"v":1,"op":"delete","name":"vm1","force":true}',
    b'{"v":1,"op":"list"}',
    b'{"v":1,"op":"set_quota","name":"vm1","quota":0}',
    b'{"v":1,"op":"set_host_quota","quota":1073741824}',
    b'{"v":1,"op":"stats","name":"vm1","reset":true,"percentile":50.5}',
    b'{"v":1,"op":"events","name":"vm1","since":3,"max":100000}',
    b'{"v":2,"op":"hello"}',
    b'{"op":"hello"}',
    b'[1,2]',
    b'{"v":1,"op":"create","name":"n","size":-1}',
    b'{"v":1,"op":"bind","name":"x","pid":99999999999}',
]


def opt(o, data=b''):
    return struct.pack('>QII', IHAVEOPT, o, len(data)) + data


def go(name=b'', infos=(3,), o=7):
    return opt(o, struct.pack('>I', len(name)) + name
               + struct.pack('>H', len(infos))
               + b''.join(struct.pack('>H', i) for i in infos))


def req(cmd, off=0, length=0, flags=0, payload=b'', cookie=1):
    return struct.pack('>IHHQQI', REQ, flags, cmd, cookie, off,
                       length) + payload


HELLO = struct.pack('>I', 3)
NBD = {
    'go_rw': b'\0' + HELLO + go(b'vm1') + req(1, 4096, 8, payload=b'x' * 8)
    + req(0, 4090, 20, cookie=2) + req(3, cookie=3) + req(2),
    'export_name': b'\0' + HELLO + opt(1, b'vm1') + req(0, 0, 4096),
    'options': b'\0' + HELLO + opt(3) + opt(5) + opt(99, b'zz')
    + go(b'nope') + go(b'', (), 6) + opt(2),
    'trim_zero': b'\0' + HELLO + go() + req(4, 0, 8192)
    + req(6, 100, 5000, flags=2) + req(6, 0, 4096, flags=16)
    + req(5, 0, 4096),
    'bad_requests': b'\0' + HELLO + go() + req(1, (1 << 20) - 2, 4,
                                               payload=b'abcd')
    + req(0, 1 << 20, 1) + req(42) + req(3, flags=0x80)
    + req(0, 0, 33 << 20) + struct.pack('>I', 0xdeadbeef),
    'denied': b'\1' + HELLO + go(b'vm1') + opt(3) + opt(1, b'vm1'),
    'big_option': b'\0' + HELLO + opt(6, bytes(70000)),
    'bad_flags': b'\0' + struct.pack('>I', 0x80),
}

for kind, items in (('control', dict(('%02d' % i, c)
                                     for i, c in enumerate(CONTROL))),
                    ('nbd', NBD)):
    d = os.path.join(HERE, 'corpus', kind)
    os.makedirs(d, exist_ok=True)
    for name, data in items.items():
        with open(os.path.join(d, name), 'wb') as f:
            f.write(data)
