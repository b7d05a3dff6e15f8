"""A controller process holding a lease, to be killed by a test.

``python -m tests.harness.lease_holder URL HOST NOW DURATION [NAME]`` takes
lease NAME (``consolidation``) in the database at URL as a controller of
HOST would (:func:`memmut.globals.leader.holder_id`), at the time NOW
(the test's clock), prints its holder on one line (or ``BUSY``) and
sleeps until it is killed. :func:`start` runs it and reads the holder.
"""

import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def start(url, host, now, duration=900.0, name='consolidation'):
    """The running process and the holder it took the lease as."""
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(
        [str(ROOT)] + [p for p in [env.get('PYTHONPATH')] if p])
    proc = subprocess.Popen(
        [sys.executable, '-m', 'tests.harness.lease_holder', url, host,
         repr(float(now)), repr(float(duration)), name],
        stdout=subprocess.PIPE, text=True, env=env, cwd=str(ROOT))
    line = proc.stdout.readline().strip()
    if not line or line == 'BUSY':
        proc.kill()
        proc.wait()
        raise RuntimeError('the lease holder process did not take the '
                           'lease: %r' % line)
    return proc, line


def main(argv):
    from memmut.db import api as db_api
    from memmut.globals import leader

    url, host, now, duration = argv[:4]
    name = argv[4] if len(argv) > 4 else leader.CONSOLIDATION
    db = db_api.Database(url)
    lease = leader.Leadership(db, leader.holder_id(host), float(duration),
                              name=name, clock=lambda: float(now))
    print(lease.holder if lease.acquire() else 'BUSY', flush=True)
    while True:
        time.sleep(3600)


if __name__ == '__main__':
    main(sys.argv[1:])
