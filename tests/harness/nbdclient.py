"""A small NBD client for the tests (fixed newstyle, simple replies).

Written from the NBD protocol document; it can also send malformed input
on purpose (``raw``, ``request`` with any magic, command or flags).
"""

import socket
import struct

NBDMAGIC = 0x4e42444d41474943
IHAVEOPT = 0x49484156454F5054
REPLY_MAGIC_OPT = 0x3e889045565a9
REQUEST_MAGIC = 0x25609513
SIMPLE_REPLY_MAGIC = 0x67446698

OPT_EXPORT_NAME, OPT_ABORT, OPT_LIST, OPT_STARTTLS = 1, 2, 3, 5
OPT_INFO, OPT_GO, OPT_STRUCTURED_REPLY = 6, 7, 8
REP_ACK, REP_SERVER, REP_INFO = 1, 2, 3
REP_ERR_UNSUP, REP_ERR_POLICY, REP_ERR_INVALID = (
    0x80000001, 0x80000002, 0x80000003)
REP_ERR_UNKNOWN, REP_ERR_TOO_BIG = 0x80000006, 0x80000009
INFO_EXPORT, INFO_BLOCK_SIZE = 0, 3

CMD_READ, CMD_WRITE, CMD_DISC, CMD_FLUSH = 0, 1, 2, 3
CMD_TRIM, CMD_CACHE, CMD_WRITE_ZEROES, CMD_BLOCK_STATUS = 4, 5, 6, 7
FLAG_FUA, FLAG_NO_HOLE, FLAG_DF = 1, 2, 4

TF_HAS_FLAGS, TF_SEND_FLUSH, TF_SEND_FUA = 1, 4, 8
TF_SEND_TRIM, TF_SEND_WRITE_ZEROES = 32, 64

EIO, EINVAL, ENOSPC = 5, 22, 28


class Closed(Exception):
    """The server closed the connection."""


class NBDClient:
    def __init__(self, path, timeout=10):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.size = None
        self.flags = None
        self.cookie = 0

    def close(self):
        self.sock.close()

    def raw(self, data):
        self.sock.sendall(data)

    def recv(self, n):
        buf = b''
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise Closed('server closed after %d of %d bytes'
                             % (len(buf), n))
            buf += chunk
        return buf

    def closed_by_server(self):
        """True if the server closed the connection (EOF)."""
        try:
            return self.sock.recv(1) == b''
        except ConnectionResetError:
            return True

    # -- handshake --------------------------------------------------------

    def greet(self, client_flags=3):
        magic, opt, hflags = struct.unpack('>QQH', self.recv(18))
        assert (magic, opt) == (NBDMAGIC, IHAVEOPT)
        self.raw(struct.pack('>I', client_flags))
        return hflags

    def option(self, opt, data=b''):
        self.raw(struct.pack('>QII', IHAVEOPT, opt, len(data)) + data)

    def option_reply(self):
        magic, opt, kind, n = struct.unpack('>QIII', self.recv(20))
        assert magic == REPLY_MAGIC_OPT, hex(magic)
        return opt, kind, self.recv(n)

    def go(self, name=b'', infos=(INFO_BLOCK_SIZE,), opt=OPT_GO):
        """NBD_OPT_GO; returns the reply types received (ending with ACK
        or an error) and sets size/flags."""
        data = (struct.pack('>I', len(name)) + name
                + struct.pack('>H', len(infos))
                + b''.join(struct.pack('>H', i) for i in infos))
        self.option(opt, data)
        kinds = []
        while True:
            _, kind, payload = self.option_reply()
            kinds.append(kind)
            if kind == REP_INFO:
                itype, = struct.unpack('>H', payload[:2])
                if itype == INFO_EXPORT:
                    self.size, self.flags = struct.unpack('>QH',
                                                          payload[2:12])
                continue
            return kinds

    def connect(self, name=b''):
        self.greet()
        kinds = self.go(name)
        assert kinds[-1] == REP_ACK, kinds
        return self

    # -- transmission ------------------------------------------------------

    def request(self, cmd, offset=0, length=0, flags=0, payload=b'',
                magic=REQUEST_MAGIC, cookie=None):
        if cookie is None:
            self.cookie += 1
            cookie = self.cookie
        self.raw(struct.pack('>IHHQQI', magic, flags, cmd, cookie, offset,
                             length) + payload)
        return cookie

    def reply(self, data_len=0):
        """(error, cookie, data): data is read only when error == 0."""
        magic, error, cookie = struct.unpack('>IIQ', self.recv(16))
        assert magic == SIMPLE_REPLY_MAGIC, hex(magic)
        data = self.recv(data_len) if error == 0 and data_len else b''
        return error, cookie, data

    def read(self, offset, length, flags=0):
        c = self.request(CMD_READ, offset, length, flags)
        err, cookie, data = self.reply(length)
        assert cookie == c
        return err, data

    def recv_into(self, view):
        """Fill the writable buffer ``view`` from the socket (no copies
        beyond the kernel's: what a benchmark's client should cost)."""
        view = memoryview(view).cast('B')
        got = 0
        while got < len(view):
            n = self.sock.recv_into(view[got:])
            if not n:
                raise Closed('server closed after %d of %d bytes'
                             % (got, len(view)))
            got += n

    def read_into(self, offset, buf, flags=0):
        """READ ``len(buf)`` bytes at ``offset`` into ``buf`` (a
        bytearray or memoryview); returns the error code (the buffer is
        filled only when it is 0)."""
        c = self.request(CMD_READ, offset, len(buf), flags)
        head = bytearray(16)
        self.recv_into(head)
        magic, error, cookie = struct.unpack('>IIQ', head)
        assert magic == SIMPLE_REPLY_MAGIC, hex(magic)
        assert cookie == c
        if error == 0 and len(buf):
            self.recv_into(buf)
        return error

    def write(self, offset, data, flags=0):
        c = self.request(CMD_WRITE, offset, len(data), flags, data)
        err, cookie, _ = self.reply()
        assert cookie == c
        return err

    def simple(self, cmd, offset=0, length=0, flags=0):
        c = self.request(cmd, offset, length, flags)
        err, cookie, _ = self.reply()
        assert cookie == c
        return err

    def disconnect(self):
        self.request(CMD_DISC)
        self.close()
