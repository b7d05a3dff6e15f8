"""memmut's services end cleanly on SIGTERM whatever they are waiting for:
here an unreachable broker, which oslo.messaging retries forever."""

import signal
import socket
import subprocess
import sys
import time

import pytest


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]       # closed again: nothing listens


def _conf(tmp_path):
    path = tmp_path / 'memmut.conf'
    path.write_text(
        '[DEFAULT]\nhost = n1\ngraceful_shutdown_timeout = 5\n'
        'transport_url = rabbit://guest:guest@127.0.0.1:%d/\n'
        '[database]\nconnection = sqlite:///%s\n'
        '[agent]\nhypervisor_driver = sim\n'
        % (_free_port(), tmp_path / 'memmut.sqlite'))
    return str(path)


@pytest.mark.parametrize('module', ['memmut.cmd.agent',
                                    'memmut.cmd.controller'])
def test_sigterm_with_the_broker_unreachable(module, tmp_path):
    conf = _conf(tmp_path)
    subprocess.run([sys.executable, '-m', 'memmut.cmd.db_manage',
                    '--config-file', conf, 'upgrade'], check=True,
                   capture_output=True)
    log = tmp_path / 'service.log'
    with open(log, 'wb') as out:
        proc = subprocess.Popen([sys.executable, '-m', module,
                                 '--config-file', conf], stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while b'Connection failed' not in log.read_bytes():
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        # well inside graceful_shutdown_timeout (5 s) plus start-up slack
        assert proc.wait(20) == 0, log.read_text()
        assert 'Received signal 15, stopping' in log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
