"""A bad configuration stops a service at start with one clear line and
exit status 2, never a traceback (run as an operator would)."""

import subprocess
import sys


def _agent(*args):
    return subprocess.run(
        [sys.executable, '-c', 'import sys; from memmut.cmd import agent; '
         'sys.argv[0] = "memmut-agent"; agent.main(sys.argv[1:])'] +
        list(args), capture_output=True, text=True, timeout=60)


def test_out_of_range_option_is_one_line_and_status_2(tmp_path):
    conf = tmp_path / 'memmut.conf'
    conf.write_text('[agent]\npoll_interval = -5\n')
    done = _agent('--config-file', str(conf))
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(
        'memmut-agent: error: [agent] poll_interval: should be greater '
        'than or equal to 0.05'), done.stderr
    assert 'Traceback' not in done.stderr


def test_missing_and_garbage_config_files(tmp_path):
    done = _agent('--config-file', str(tmp_path / 'absent.conf'))
    assert done.returncode == 2 and 'Traceback' not in done.stderr
    assert 'absent.conf' in done.stderr
    garbage = tmp_path / 'garbage.conf'
    garbage.write_text('this is not [an ini file\n')
    done = _agent('--config-file', str(garbage))
    assert done.returncode == 2 and 'Traceback' not in done.stderr
    assert done.stderr.startswith('memmut-agent: error: ')
