"""memmut-consolidate: run and inspect consolidation rounds by hand.

    memmut-consolidate [--config-file memmut.conf] run [--dry-run]
    memmut-consolidate list [--limit N]
    memmut-consolidate show ROUND_ID

``run`` plans from the controller's database exactly as a scheduled round
does (memmut.globals.rounds) and, unless ``--dry-run`` or ``[consolidation]
dry_run``, live-migrates through nova. Run it where the controller's
configuration is. It takes the consolidation lease as a controller does
(memmut.globals.leader) and gives it back at the end: while a controller
holds it (it runs scheduled rounds, or did within ``[controller]
leader_lease`` seconds) the round is not started (``busy``, exit 1).
"""

import sys
import time

from oslo_config import cfg
import prettytable

from memmut.cmd import controller as controller_cmd
from memmut import conf as memmut_conf
from memmut.db import api as db_api
from memmut.globals import leader
from memmut.globals import rounds
from memmut import service


def _when(t):
    return time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(t)) if t else '-'


def _print_migrations(db, round_id):
    rows = db.list_migrations(round_id=round_id)
    if not rows:
        print('no migration')
        return
    table = prettytable.PrettyTable(
        ['id', 'VM', 'from', 'to', 'reason', 'status', 'attempts', 'error'])
    table.align = 'l'
    for m in rows:
        table.add_row([m.id, m.vm_uuid, m.source_host, m.dest_host,
                       '%s %s' % (m.resource, m.kind), m.status, m.attempts,
                       (m.error or '')[:60]])
    print(table)


def do_run(conf, db):
    dry_run = True if conf.command.dry_run else None
    lease = leader.Leadership(db, leader.holder_id(conf.host, tag='cli'),
                              conf.controller.leader_lease)
    runner = rounds.RoundRunner(conf, db, leader=lease)
    try:
        result = runner.run(dry_run=dry_run)
    finally:
        runner.release()
    print('round %s: %s%s%s' % (
        result.round_id, result.status, ' (dry run)' if result.dry_run
        else '', ': %s' % result.reason if result.reason else ''))
    if result.round_id is not None:
        _print_migrations(db, result.round_id)
    return 0 if result.status not in (rounds.FAILED, rounds.BUSY) else 1


def do_list(conf, db):
    table = prettytable.PrettyTable(
        ['id', 'started', 'dry run', 'status', 'migrations', 'reason'])
    table.align = 'l'
    for r in db.list_rounds(limit=conf.command.limit):
        table.add_row([r.id, _when(r.started_at), r.dry_run, r.status,
                       len(db.list_migrations(round_id=r.id)),
                       (r.reason or '')[:60]])
    print(table)
    return 0


def do_show(conf, db):
    r = db.get_round(conf.command.round_id)
    print('round %d: %s%s, started %s, finished %s' % (
        r.id, r.status, ' (dry run)' if r.dry_run else '',
        _when(r.started_at), _when(r.finished_at)))
    if r.reason:
        print('reason: %s' % r.reason)
    _print_migrations(db, r.id)
    return 0


def add_parsers(subparsers):
    p = subparsers.add_parser('run', help='Run one consolidation round now.')
    p.add_argument('--dry-run', action='store_true',
                   help='Plan and record, do not migrate.')
    p.set_defaults(func=do_run)
    p = subparsers.add_parser('list', help='List the latest rounds.')
    p.add_argument('--limit', type=int, default=20)
    p.set_defaults(func=do_list)
    p = subparsers.add_parser('show', help='One round and its migrations.')
    p.add_argument('round_id', type=int)
    p.set_defaults(func=do_show)


COMMAND = cfg.SubCommandOpt('command', title='Commands',
                            help='What to do.', handler=add_parsers)


def main(argv=None):
    conf = memmut_conf.CONF
    conf.register_cli_opt(COMMAND)
    conf = service.prepare(sys.argv[1:] if argv is None else argv, conf=conf)
    db = controller_cmd.open_database(conf)
    try:
        code = conf.command.func(conf, db)
    except db_api.RecordNotFound as e:
        service.fail(str(e))
    except db_api.DBError as e:
        service.fail(str(e))
    sys.exit(code)


if __name__ == '__main__':
    main()
