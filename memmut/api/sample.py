"""A small fixed data set and an in-process memmut-api over it, for the
API reference's examples (``tools/gen-api-ref.py``) and the unit tests.

Everything is deterministic: fixed timestamps, a round starter that
records a finished dry run, request ids replaced by a constant.
"""

import json
import os
import tempfile

import webob

from memmut.api import app as api_app
from memmut.db import api as db_api
from memmut.db import migration
from memmut import objects

T0 = 1795521600.0          # 2026-11-24T12:00:00Z
HOST = 'compute-1'
OTHER = 'compute-2'
VMS = [('0c5c8a1e-5f8e-4a4e-9d55-1b0f3c7a9e01', 'web-1'),
       ('0c5c8a1e-5f8e-4a4e-9d55-1b0f3c7a9e02', 'db-1')]
ALLOCATION = 'alloc-7d1e'


ROLLUP_INTERVAL = 300.0


def seed(db):
    # A day ago, ten polls a minute apart (now rolled up into two 5-minute
    # intervals), then the last two polls.
    day_ago = [T0 - 86400 + 60 * k for k in range(1, 11)]
    for seq, t in enumerate([T0 - 60, T0] + day_ago, 1):
        db.store_report(objects.HostReport(
            host=HOST, boot_id='a1b2', seq=seq, timestamp=t,
            hypervisor='libvirt', memory_total_kb=64 << 20,
            memory_free_kb=20 << 20, cpu_count=16, cpu_util=0.35,
            reservoir_kb=2 << 20, vms=[objects.VMReport(
                uuid=uuid, name=name, timestamp=t, state='running',
                booked_kb=8 << 20, balloon_kb=(6 + 2 * i) << 20,
                memory_stats={'swap_in': 0, 'swap_out': 512 * i},
                cpu_time_ns=int((t - T0 + 2 * 86400) * 1e9),
                nova_instance=True,
                wss_kb=(3 + 3 * i) << 20,
                wss_max_avg_kb=(3 + 3 * i) << 20 | 1 << 18,
                max_avg_window=5, max_avg_slice_s=3600.0,
                badis_mode=('V', 'VG')[i],
                pinned_kb=(96 << 10, 310 << 10)[i],
                pinned_note=('initial: guest kernel reservation',
                             'learned in VG: swapping at 6.00 GiB, '
                             'sampled 5.70 GiB')[i],
                pinned_at=(T0 - 7200, T0 - 900)[i],
                shrink_floor_kb=(0, 6 << 20)[i],
                shrink_floor_note=(None, 'shrink floor set at 6.00 GiB: '
                                         'swapped in at 6.00 GiB after a '
                                         'shrink, sampled 5.70 GiB')[i],
                shrink_floor_at=(None, T0 - 900)[i],
                wss_estimator='badis/page_idle+memstore',
                mut_role=('server', 'client')[i], mem_init_kb=8 << 20,
                lent_kb=(2 << 20, 0)[i], borrowed_kb=(0, 2 << 20)[i])
                for i, (uuid, name) in enumerate(VMS)]))
    db.rollup_samples(T0 - 43200, ROLLUP_INTERVAL)
    db.store_report(objects.HostReport(
        host=OTHER, boot_id='c3d4', seq=1, timestamp=T0,
        hypervisor='libvirt', memory_total_kb=64 << 20,
        memory_free_kb=60 << 20, cpu_count=16, cpu_util=0.02,
        reservoir_kb=8 << 20))
    db.create_remote_allocation(ALLOCATION, HOST, OTHER, VMS[1][0],
                                1 << 20, state='active',
                                uri='nbd+tcp://compute-2:10809/alloc-7d1e')


class FixedClockDB(db_api.Database):
    def __init__(self, url):
        super().__init__(url, clock=lambda: T0)


def round_starter(db):
    def start(dry_run):
        rnd = db.create_round(dry_run=bool(dry_run), started_at=T0,
                              parameters={'dry_run': bool(dry_run),
                                          'memory_basis': 'wss'})
        db.add_migration(rnd.id, VMS[0][0], HOST, OTHER, 'memory',
                         'overload')
        db.finish_round(rnd.id, 'completed', finished_at=T0 + 1.5,
                        reason='dry run: 1 migration(s) planned (1 caused '
                               'by memory), none executed',
                        summary={'hosts': 2, 'vms': 2, 'migrations': 1,
                                 'memory_caused': 1})
        return rnd.id
    return start


class SampleAPI:
    """The in-process API (noauth) over a fresh SQLite copy of the data."""

    def __init__(self, conf, start_round=None):
        self.dir = tempfile.mkdtemp(prefix='memmut-api-sample-')
        url = 'sqlite:///%s' % os.path.join(self.dir, 'memmut.db')
        migration.upgrade(url)
        self.db = FixedClockDB(url)
        seed(self.db)
        conf.set_override('auth_strategy', 'noauth', 'api')
        self.conf = conf
        self.app = api_app.build_app(conf, db=self.db,
                                     start_round=start_round or
                                     round_starter(self.db))

    def close(self):
        import shutil
        self.db.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def request(self, method, path, body=None, roles='admin,reader',
                headers=None):
        req = webob.Request.blank(path, method=method,
                                  base_url='http://memmut.example:8780')
        req.headers['X-Roles'] = roles
        req.headers['X-Project-Id'] = 'f3e2d1c0b9a8'
        req.headers['X-User-Id'] = 'a0b1c2d3e4f5'
        for k, v in (headers or {}).items():
            req.headers[k] = v
        if body is not None:
            req.body = json.dumps(body).encode()
            req.content_type = 'application/json'
        resp = req.get_response(self.app)
        doc = json.loads(resp.body) if resp.body else None
        for err in (doc or {}).get('errors', []) if isinstance(
                doc, dict) else []:
            err['request_id'] = 'req-0000'
        return resp, doc
