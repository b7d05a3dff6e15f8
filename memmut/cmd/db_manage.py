"""memmut-db-manage: create, upgrade and inspect the controller database.

    memmut-db-manage [--config-file memmut.conf] upgrade [REVISION]
    memmut-db-manage downgrade REVISION
    memmut-db-manage current
    memmut-db-manage history
"""

import sys

from oslo_config import cfg

from memmut import conf as memmut_conf
from memmut.db import api as db_api
from memmut.db import migration
from memmut import service


def do_upgrade(conf):
    url = conf.database.connection
    before = migration.current(url)
    migration.upgrade(url, conf.command.revision)
    print('database %s: %s -> %s' % (db_api.masked(url), before or 'empty',
                                     migration.current(url)))


def do_downgrade(conf):
    url = conf.database.connection
    before = migration.current(url)
    migration.downgrade(url, conf.command.revision)
    print('database %s: %s -> %s' % (db_api.masked(url), before or 'empty',
                                     migration.current(url) or 'empty'))


def do_current(conf):
    url = conf.database.connection
    current = migration.current(url)
    head = migration.head()
    print('database %s is at %s (this memmut needs %s)%s' % (
        db_api.masked(url), current or 'empty (no schema)', head,
        '' if current == head else ': run "memmut-db-manage upgrade"'))


def do_history(conf):
    for revision, down, message in migration.history():
        print('%s <- %s  %s' % (revision, down or 'base',
                                (message or '').splitlines()[0]))


def add_parsers(subparsers):
    p = subparsers.add_parser('upgrade', help='Upgrade the schema (to the '
                              'newest revision unless one is given).')
    p.add_argument('revision', nargs='?', default='head')
    p.set_defaults(func=do_upgrade)
    p = subparsers.add_parser('downgrade', help='Downgrade the schema to '
                              'REVISION ("base" drops every table).')
    p.add_argument('revision')
    p.set_defaults(func=do_downgrade)
    p = subparsers.add_parser('current', help='Show the schema revision.')
    p.set_defaults(func=do_current)
    p = subparsers.add_parser('history', help='List the migrations.')
    p.set_defaults(func=do_history)


COMMAND = cfg.SubCommandOpt('command', title='Commands',
                            help='What to do with the database.',
                            handler=add_parsers)


def main(argv=None):
    conf = memmut_conf.CONF
    conf.register_cli_opt(COMMAND)
    conf = service.prepare(sys.argv[1:] if argv is None else argv, conf=conf)
    try:
        conf.command.func(conf)
    except db_api.DBError as e:
        service.fail(str(e))
    except Exception as e:     # e.g. an unknown revision named by the user
        service.fail('%s: %s' % (conf.command.name, e))


if __name__ == '__main__':
    main()
