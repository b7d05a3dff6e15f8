"""memmut-consolidate, as an operator runs it (a separate process)."""

import subprocess
import sys

from memmut.db import migration


def _run(tmp_path, *args):
    conf = tmp_path / 'memmut.conf'
    conf.write_text('[database]\nconnection = sqlite:///%s\n'
                    % (tmp_path / 'm.sqlite'))
    return subprocess.run(
        [sys.executable, '-m', 'memmut.cmd.consolidate', '--config-file',
         str(conf)] + list(args), capture_output=True, text=True, timeout=60)


def test_refuses_a_database_without_schema(tmp_path):
    done = _run(tmp_path, 'run', '--dry-run')
    assert done.returncode == 1
    assert 'memmut-db-manage upgrade' in done.stderr
    assert 'Traceback' not in done.stderr


def test_dry_run_round_is_recorded_and_listed(tmp_path):
    migration.upgrade('sqlite:///%s' % (tmp_path / 'm.sqlite'))
    done = _run(tmp_path, 'run', '--dry-run')
    assert done.returncode == 0, done.stderr
    assert 'round 1: completed (dry run)' in done.stdout
    listed = _run(tmp_path, 'list')
    assert listed.returncode == 0 and '| 1 ' in listed.stdout
    missing = _run(tmp_path, 'show', '7')
    assert missing.returncode == 1
    assert 'no consolidation round 7' in missing.stderr


def test_no_round_while_a_controller_holds_the_lease(tmp_path):
    import time

    from memmut.db import api as db_api
    url = 'sqlite:///%s' % (tmp_path / 'm.sqlite')
    migration.upgrade(url)
    db = db_api.Database(url)
    assert db.acquire_lease('consolidation', 'controller-1:42:ab', 900.0,
                            now=time.time())
    done = _run(tmp_path, 'run', '--dry-run')
    assert done.returncode == 1, done.stderr
    assert 'busy' in done.stdout and 'controller-1:42:ab' in done.stdout
    assert db.list_rounds() == []
    db.release_lease('consolidation', 'controller-1:42:ab')
    assert _run(tmp_path, 'run', '--dry-run').returncode == 0
    # ... and the command gave the lease back.
    assert db.acquire_lease('consolidation', 'controller-1:42:ab', 900.0)
    db.close()
