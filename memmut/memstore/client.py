"""Client of memmut-memstore's control socket (protocol version 1).

Requests and replies are one JSON object per line; every request carries
``"v": 1`` and an ``"op"``; every reply has ``"v"`` and ``"ok"`` (and
``"error"`` when ``ok`` is false).  The message reference is in
doc/source/memstore.rst.
"""

import json
import socket
import threading

PROTOCOL_VERSION = 1


class MemstoreError(Exception):
    """memmut-memstore refused a request (the server's reason inside)."""


class MemstoreUnavailable(MemstoreError):
    """The control socket cannot be reached or the connection broke."""


class ControlClient:
    """A connection to ``<socket_dir>/control.sock``; reconnects on demand.

    Thread-safe: calls are serialised on one connection.
    """

    def __init__(self, path, timeout=5.0):
        self.path = path
        self.timeout = timeout
        self._sock = None
        self._file = None
        self._lock = threading.Lock()

    def close(self):
        with self._lock:
            self._close()

    def _close(self):
        for obj in (self._file, self._sock):
            try:
                if obj is not None:
                    obj.close()
            except OSError:
                pass
        self._sock = self._file = None

    def _connect(self):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.path)
        except OSError as e:
            sock.close()
            raise MemstoreUnavailable('cannot connect to memmut-memstore at '
                                      '%s: %s' % (self.path, e))
        self._sock = sock
        self._file = sock.makefile('rwb')

    def call(self, op, **fields):
        """Send one request; return the reply dict (raise MemstoreError
        with the server's reason when it says ok=false)."""
        request = dict(fields, v=PROTOCOL_VERSION, op=op)
        line = json.dumps(request).encode() + b'\n'
        with self._lock:
            for attempt in (0, 1):      # one retry on a stale connection
                if self._sock is None:
                    self._connect()
                try:
                    self._file.write(line)
                    self._file.flush()
                    raw = self._file.readline()
                    if not raw:
                        raise OSError('connection closed')
                    break
                except OSError as e:
                    self._close()
                    if attempt:
                        raise MemstoreUnavailable(
                            'memmut-memstore at %s: %s: %s'
                            % (self.path, op, e))
        try:
            reply = json.loads(raw)
        except ValueError as e:
            raise MemstoreError('unreadable reply to %s: %s' % (op, e))
        if reply.get('v') != PROTOCOL_VERSION:
            raise MemstoreError('reply to %s has protocol version %r, '
                                'expected %d' % (op, reply.get('v'),
                                                 PROTOCOL_VERSION))
        if not reply.get('ok'):
            raise MemstoreError('%s refused: %s' % (op, reply.get('error')))
        return reply

    # -- typed helpers ----------------------------------------------------

    def hello(self):
        return self.call('hello')

    def create_export(self, name, size, quota=None, bucket_pages=None,
                      pid=None):
        """Create (or find, same size) an export; returns (info, created).
        ``pid`` binds it (see :meth:`bind_export`)."""
        fields = {}
        if pid is not None:
            fields['pid'] = int(pid)
        reply = self.call('create', name=name, size=int(size),
                          quota=None if quota is None else int(quota),
                          bucket_pages=bucket_pages, **fields)
        return reply['export'], reply['created']

    def bind_export(self, name, pid):
        """Let only process ``pid`` (the VM's QEMU; besides memstore's user
        and root) open export ``name`` over NBD; ``None`` unbinds."""
        self.call('bind', name=name, pid=None if pid is None else int(pid))

    def delete_export(self, name, force=False):
        self.call('delete', name=name, force=bool(force))

    def list_exports(self):
        return self.call('list')['exports']

    def get_export(self, name):
        for e in self.list_exports():
            if e['name'] == name:
                return e
        return None

    def set_quota(self, name, quota):
        return self.call('set_quota', name=name,
                         quota=int(quota))['evicted_pages']

    def set_host_quota(self, quota):
        return self.call('set_host_quota', quota=int(quota))['evicted_bytes']

    def stats(self, name, reset=False, percentile=None):
        return self.call('stats', name=name, reset=bool(reset),
                         percentile=percentile)

    def events(self, name, since=0, max_events=4096):
        return self.call('events', name=name, since=int(since),
                         max=int(max_events))

    # -- remote memory (doc/source/remote-memory.rst) ----------------------

    def slab_create(self, slab_id, size, psk_identity, psk_key):
        """Lend ``size`` bytes of the host quota as slab ``slab_id``; the
        reply's ``slab`` (with its ``uri``)."""
        return self.call('slab_create', id=slab_id, size=int(size),
                         psk_identity=psk_identity, psk_key=psk_key)['slab']

    def slab_delete(self, slab_id):
        """Free a lent slab; True if there was one."""
        return bool(self.call('slab_delete', id=slab_id)['deleted'])

    def slab_attach(self, name, slab_id, uri, size, psk_identity, psk_key,
                    timeout_ms=None, dirty_window=None):
        """Use slab ``slab_id`` at ``uri`` as a tier of export ``name``;
        ``dirty_window`` (bytes, 0: none) bounds the page cache of the
        export's remote-placed pages."""
        fields = dict(name=name, id=slab_id, uri=uri, size=int(size),
                      psk_identity=psk_identity, psk_key=psk_key)
        if timeout_ms is not None:
            fields['timeout_ms'] = int(timeout_ms)
        if dirty_window is not None:
            fields['dirty_window'] = int(dirty_window)
        return self.call('slab_attach', **fields)['slab']

    def slab_detach(self, slab_id):
        """Stop using a slab; True if an export used it."""
        return bool(self.call('slab_detach', id=slab_id)['detached'])

    def slabs(self):
        """``{'lent': [...], 'attached': [...], 'remote_listen': ...}``."""
        return self.call('slabs')
