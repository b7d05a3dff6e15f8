"""memmut-memstore hardening (issue 17): private files and sockets, one
instance per state directory, peer credentials and export binding, full
file systems, atomic control operations, bounded resources."""

import os
import stat
import subprocess

import pytest

from tests.harness import memstore as process
from tests.unit.memstore import nbdclient as nbd

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

