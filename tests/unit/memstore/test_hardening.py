"""memmut-memstore hardening (issue 17): private files and sockets, one
instance per state directory, peer credentials and export binding, full
file systems, atomic control operations, bounded resources."""

import concurrent.futures
import json
import os
import stat
import subprocess
import sys
import time

import pytest

from memmut.memstore import client as clientmod
from tests.harness import memstore as process
from tests.harness import nbdclient as nbd

PAGE = 4096


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_files_directories_and_sockets_are_private(memstore, ctl):
    info, _ = ctl.create_export('p', 1 << 20)
    assert mode(memstore.state_dir) == 0o700
    assert mode(info['backing_file']) == 0o600
    assert mode(os.path.join(memstore.state_dir, 'p.json')) == 0o600
    assert mode(memstore.control_path) == 0o600
    assert mode(info['socket']) == 0o600


def test_nbd_socket_group_option(memstore_binary, short_dir):
    p = process.MemstoreProcess(memstore_binary, short_dir,
                                extra_args=['--nbd-socket-group', '65534'])
    p.start()
    try:
        c = p.client()
        info, _ = c.create_export('g', 1 << 20)
        assert mode(info['socket']) == 0o660
        assert os.stat(info['socket']).st_gid == 65534
        assert mode(short_dir) == 0o710
        assert mode(p.control_path) == 0o600
        assert mode(info['backing_file']) == 0o600
        c.close()
    finally:
        p.kill()


def test_second_instance_refuses_with_the_holders_pid(memstore, ctl):
    info, _ = ctl.create_export('one', 1 << 20)
    c = nbd.NBDClient(info['socket']).connect()
    assert c.write(0, b'x' * PAGE) == 0
    second = subprocess.run(
        [memstore.binary, '--state-dir', memstore.state_dir,
         '--socket-dir', memstore.socket_dir],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    assert second.returncode == 1
    err = second.stderr.decode().strip()
    assert len(err.splitlines()) == 1, err
    assert 'in use by another memmut-memstore (pid %d)' % memstore.pid in err
    # the first one still serves its sockets
    assert ctl.hello()['pid'] == memstore.pid
    assert c.read(0, PAGE) == (0, b'x' * PAGE)
    c.disconnect()


@pytest.fixture
def full_tmpfs(short_dir):
    """A 4 MiB tmpfs at <short_dir>/state (root only), unmounted after."""
    state = os.path.join(short_dir, 'state')
    os.makedirs(state)
    if os.geteuid() != 0:
        pytest.skip('mounting a tmpfs needs root')
    r = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=4m', 'tmpfs',
                        state], capture_output=True)
    if r.returncode:
        pytest.skip('cannot mount a tmpfs: %s' % r.stderr.decode())
    yield state
    subprocess.run(['umount', '-l', state], check=True)


def fill(directory):
    """Fill the file system of ``directory``; returns the filler's path."""
    path = os.path.join(directory, 'filler')
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b'\xff' * PAGE)
    except OSError:
        pass
    finally:
        os.close(fd)
    return path


def test_full_tmpfs_reads_zeros_and_writes_get_enospc(memstore_binary,
                                                      short_dir, full_tmpfs):
    p = process.MemstoreProcess(memstore_binary, full_tmpfs, short_dir,
                                log_path=os.path.join(short_dir, 'log'))
    p.start()
    try:
        ctl = p.client()
        info, _ = ctl.create_export('vm', 16 << 20, quota=0)
        c = nbd.NBDClient(info['socket']).connect()
        assert c.write(0, b'a' * PAGE) == 0
        fill(full_tmpfs)
        # swap readahead over never-written pages: zeros, no SIGBUS
        assert c.read(0, 64 * PAGE) == (0, b'a' * PAGE + bytes(63 * PAGE))
        assert c.read(8 << 20, PAGE) == (0, bytes(PAGE))
        # writes into holes cannot get blocks: ENOSPC, never SIGBUS
        assert c.write(100 * PAGE, b'b' * PAGE) == nbd.ENOSPC
        assert c.write(200 * PAGE + 7, b'b' * 10) == nbd.ENOSPC
        assert c.simple(nbd.CMD_WRITE_ZEROES, 300 * PAGE, 8 * PAGE,
                        flags=nbd.FLAG_NO_HOLE) == nbd.ENOSPC
        # a written page can still be rewritten and read
        assert c.write(0, b'c' * PAGE) == 0
        assert c.read(0, PAGE) == (0, b'c' * PAGE)
        assert c.read(100 * PAGE, PAGE) == (0, bytes(PAGE))
        assert p.proc.poll() is None
        assert ctl.hello()['exports'] == 1
        c.disconnect()
        ctl.close()
    finally:
        p.kill()
    assert p.proc.returncode == -9, p.log()


NOBODY = 65534


@pytest.fixture
def memstore_as_nobody(memstore_binary, short_dir):
    """memmut-memstore running as uid/gid 65534 (root only): permissions
    then apply to it, so a read-only state directory is really one."""
    if os.geteuid() != 0:
        pytest.skip('running memstore as another user needs root')
    os.chmod(short_dir, 0o711)
    state, sockets = (os.path.join(short_dir, d) for d in ('state', 'run'))
    for d in (state, sockets):
        os.mkdir(d)
        os.chown(d, NOBODY, NOBODY)
    p = process.MemstoreProcess(memstore_binary, state, sockets,
                                log_path=os.path.join(short_dir, 'log'),
                                user=NOBODY)
    p.start()
    yield p
    p.kill()
    os.chmod(state, 0o700)


def test_delete_on_a_read_only_state_dir_fails_and_keeps_the_export(
        memstore_as_nobody):
    p = memstore_as_nobody
    ctl = p.client()
    info, _ = ctl.create_export('vm', 1 << 20)
    c = nbd.NBDClient(info['socket']).connect()
    assert c.write(0, b'k' * PAGE) == 0
    os.chmod(p.state_dir, 0o500)
    with pytest.raises(clientmod.MemstoreError, match='export kept'):
        ctl.delete_export('vm', force=True)
    # still listed, still served, and still there after a restart
    assert ctl.get_export('vm')['stored_bytes'] == PAGE
    assert c.read(0, PAGE) == (0, b'k' * PAGE)
    c.disconnect()
    ctl.close()
    p.kill()
    os.chmod(p.state_dir, 0o700)
    p.start()
    ctl = p.client()
    assert ctl.get_export('vm')['stored_bytes'] == PAGE
    # writable again: the delete goes through, and nothing comes back
    ctl.delete_export('vm')
    assert sorted(os.listdir(p.state_dir)) == ['memstore.lock']
    ctl.close()


def test_set_quota_that_fails_leaves_the_old_quota(memstore_as_nobody):
    p = memstore_as_nobody
    ctl = p.client()
    ctl.create_export('vm', 1 << 20, quota=8 * PAGE)
    c = nbd.NBDClient(p.socket_path('vm')).connect()
    for i in range(8):
        assert c.write(i * PAGE, b'q' * PAGE) == 0
    os.chmod(p.state_dir, 0o500)
    with pytest.raises(clientmod.MemstoreError, match='cannot write'):
        ctl.set_quota('vm', PAGE)
    e = ctl.get_export('vm')
    assert (e['quota'], e['ram_bytes']) == (8 * PAGE, 8 * PAGE)
    os.chmod(p.state_dir, 0o700)
    assert ctl.set_quota('vm', PAGE) == 7
    c.disconnect()
    ctl.close()


def test_create_that_cannot_persist_leaves_nothing(memstore_as_nobody):
    p = memstore_as_nobody
    ctl = p.client()
    os.chmod(p.state_dir, 0o500)
    with pytest.raises(clientmod.MemstoreError):
        ctl.create_export('vm', 1 << 20)
    assert ctl.list_exports() == []
    assert not os.path.exists(p.socket_path('vm'))
    os.chmod(p.state_dir, 0o700)
    assert ctl.create_export('vm', 1 << 20)[1]
    ctl.close()


# A peer as another user: waits for a line on stdin, then connects and
# prints what it got (the control socket's reply, or the NBD_OPT_GO reply
# type), so that the test can bind the export to its pid first.
PEER = r'''
import json, socket, struct, sys
kind, path = sys.argv[1:]
print('ready', flush=True)
sys.stdin.readline()
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
try:
    s.connect(path)
except OSError as e:
    print(json.dumps({'connect': e.errno}))
    sys.exit()
f = s.makefile('rwb')
if kind == 'control':
    try:    # a refused peer gets its reply at once, and the socket closed
        f.write(b'{"v": 1, "op": "hello"}\n')
        f.flush()
    except OSError:
        pass
    print(f.readline().decode().strip() or '{"closed": true}')
else:
    f.read(18)
    f.write(struct.pack('>I', 3))
    f.write(struct.pack('>QII', 0x49484156454F5054, 7, 6) + bytes(6))
    f.flush()
    _, _, rtype, n = struct.unpack('>QIII', f.read(20))
    print(json.dumps({'reply': rtype, 'msg': f.read(n).decode()}))
'''


def _python_for(uid):
    """A Python interpreter user ``uid`` may run (the test's may live under
    root's home)."""
    for exe in (sys.executable, '/usr/bin/python3'):
        try:
            if subprocess.run([exe, '-c', ''], user=uid, group=uid,
                              extra_groups=[], cwd='/').returncode == 0:
                return exe
        except OSError:
            pass
    pytest.skip('no Python interpreter that uid %d may run' % uid)


class Peer:
    def __init__(self, kind, path, uid=NOBODY):
        self.proc = subprocess.Popen(
            [_python_for(uid), '-c', PEER, kind, path], user=uid, group=uid,
            extra_groups=[], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            cwd='/')
        assert self.proc.stdout.readline() == b'ready\n'

    @property
    def pid(self):
        return self.proc.pid

    def go(self):
        out, _ = self.proc.communicate(b'go\n', timeout=30)
        return json.loads(out)


@pytest.fixture
def open_memstore(memstore_binary, short_dir):
    """A memstore whose export sockets are open to group 65534 (QEMU's, in
    the test) and whose control socket an operator opened to everyone
    (mode 0666): what is left to keep strangers out is the peer check."""
    if os.geteuid() != 0:
        pytest.skip('peers of another uid need root')
    os.chmod(short_dir, 0o711)
    p = process.MemstoreProcess(memstore_binary, short_dir,
                                log_path=os.path.join(short_dir, 'log'),
                                extra_args=['--nbd-socket-group',
                                            str(NOBODY)])
    p.start()
    yield p
    p.kill()


def test_control_socket_refuses_other_users(open_memstore):
    p = open_memstore
    os.chmod(p.socket_dir, 0o711)
    os.chmod(p.control_path, 0o666)
    r = Peer('control', p.control_path).go()
    assert r['ok'] is False and 'refused' in r['error'], r
    assert 'uid %d' % NOBODY in r['error']
    assert 'control: peer pid' in p.log()
    # root and memstore's own user still get in
    assert p.client().hello()['ok']


def test_export_bound_to_a_pid_refuses_every_other_peer(open_memstore):
    p = open_memstore
    ctl = p.client()
    ctl.create_export('vm1', 1 << 20)
    ctl.create_export('vm2', 1 << 20)
    qemu1 = Peer('nbd', p.socket_path('vm1'))
    qemu2 = Peer('nbd', p.socket_path('vm1'))      # another VM's QEMU
    ctl.bind_export('vm1', qemu1.pid)
    assert ctl.get_export('vm1')['pid'] == qemu1.pid
    assert qemu1.go()['reply'] == nbd.REP_INFO
    r = qemu2.go()
    assert r['reply'] == nbd.REP_ERR_POLICY, r
    assert 'bound to pid %d' % qemu1.pid in r['msg']
    assert ('refused: the export is bound to pid %d' % qemu1.pid
            in p.log())
    # an unbound export: the socket's group decides
    assert Peer('nbd', p.socket_path('vm2')).go()['reply'] == nbd.REP_INFO
    # root (admin tools) may open a bound export
    c = nbd.NBDClient(p.socket_path('vm1')).connect()
    c.disconnect()
    # the binding survives a restart; unbinding opens it to the group again
    p.kill()
    p.start()
    ctl = p.client()
    assert ctl.get_export('vm1')['pid'] == qemu1.pid
    assert Peer('nbd', p.socket_path('vm1')).go()['reply'] == (
        nbd.REP_ERR_POLICY)
    ctl.bind_export('vm1', None)
    assert Peer('nbd', p.socket_path('vm1')).go()['reply'] == nbd.REP_INFO
    with pytest.raises(clientmod.MemstoreError, match='no process'):
        ctl.bind_export('vm1', 2 ** 31 - 2)
    with pytest.raises(clientmod.MemstoreError, match='missing pid'):
        ctl.call('bind', name='vm1')
    ctl.close()


def vm_kib(pid, field):
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith(field + ':'):
                return int(line.split()[1])
    raise KeyError(field)


def test_rss_stays_bounded_with_24_clients_reading_32_mib(memstore, ctl):
    # default options: the request-buffer budget is 64 MiB.  Before it,
    # each connection allocated its whole 32 MiB reply (RSS +768 MiB).
    info, _ = ctl.create_export('big', 64 << 20, quota=0)
    clients = [nbd.NBDClient(info['socket'], timeout=60).connect()
               for _ in range(24)]
    base = vm_kib(memstore.pid, 'VmRSS')
    for i, c in enumerate(clients):
        # nobody reads the replies yet: every connection is stuck writing
        c.request(nbd.CMD_READ, (i % 2) * (32 << 20), 32 << 20)
    ctl.hello()                                   # requests were taken in

    def take_reply(c):
        header = c.recv(16)
        assert header[4:8] == bytes(4), header               # error 0
        data = bytearray(32 << 20)
        view, got = memoryview(data), 0
        while got < len(data):
            n = c.sock.recv_into(view[got:])
            assert n, 'closed after %d bytes' % got
            got += n
        assert data.count(0) == len(data)
        c.disconnect()

    with concurrent.futures.ThreadPoolExecutor(len(clients)) as pool:
        for f in [pool.submit(take_reply, c) for c in clients]:
            f.result()
    peak = vm_kib(memstore.pid, 'VmHWM')
    grown = (peak - base) * 1024
    # budget 64 MiB + 24 connections' 128 KiB buffers + stacks, with margin
    assert grown < 160 << 20, 'RSS peak grew by %d MiB' % (grown >> 20)


def test_large_requests_are_served_in_chunks_of_the_budget(
        memstore_binary, short_dir):
    p = process.MemstoreProcess(
        memstore_binary, short_dir, log_path=os.path.join(short_dir, 'log'),
        extra_args=['--request-buffer-budget', '64K'])
    p.start()
    try:
        info, _ = p.client().create_export('c', 8 << 20, quota=1 << 20)
        c = nbd.NBDClient(info['socket']).connect()
        data = os.urandom(3 << 20)
        assert c.write(4096 + 7, data) == 0
        assert c.read(4096 + 7, len(data)) == (0, data)
        assert c.read(0, 8 << 20)[1][4096 + 7:4096 + 7 + len(data)] == data
        # above the maximum block size: refused, stream still in step
        assert c.read(0, (32 << 20) + 1) == (nbd.EINVAL, b'')
        assert c.read(0, 4) == (0, bytes(4))
        c.disconnect()
    finally:
        p.kill()


def test_connections_over_the_limit_are_refused_and_slow_handshakes_cut(
        memstore_binary, short_dir):
    p = process.MemstoreProcess(
        memstore_binary, short_dir, log_path=os.path.join(short_dir, 'log'),
        extra_args=['--max-connections', '3', '--handshake-timeout', '1'])
    p.start()
    try:
        info, _ = p.client().create_export('m', 1 << 20)
        held = [nbd.NBDClient(info['socket']).connect() for _ in range(3)]
        extra = nbd.NBDClient(info['socket'], timeout=30)
        assert extra.closed_by_server()             # refused at once
        assert '(--max-connections 3)' in p.log()
        held.pop().disconnect()
        # a slot is free again (once the connection's thread has ended)
        for _ in range(100):
            again = nbd.NBDClient(info['socket'], timeout=30)
            try:
                again.connect()
                break
            except (nbd.Closed, OSError, AssertionError):
                again.close()
                # the slot frees when the closed connection's thread
                # ends: on a loaded machine, later than 100 tries at once
                time.sleep(0.05)
        else:
            pytest.fail('no connection accepted after one was closed')
        again.disconnect()
        # a client that never completes the handshake is dropped (its
        # slot may take a moment to free after the disconnect above, as
        # the first connect shows: retry until it is greeted)
        for _ in range(100):
            silent = nbd.NBDClient(info['socket'], timeout=30)
            try:
                silent.recv(18)                       # the greeting only
                break
            except (nbd.Closed, OSError):
                silent.close()
                time.sleep(0.05)
        else:
            pytest.fail('no greeting for the silent client')
        assert silent.closed_by_server()
        assert 'no handshake within 1s (--handshake-timeout)' in p.log()
        for c in held:
            assert c.read(0, 4) == (0, bytes(4))      # unaffected
            c.disconnect()
    finally:
        p.kill()
