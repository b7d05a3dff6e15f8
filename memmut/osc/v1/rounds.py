"""openstack memmut round create / list / show"""

import sys
import time

from osc_lib.command import command
from osc_lib import exceptions

from memmut.osc.v1 import common

FIELDS = [('ID', 'id'), ('Status', 'status'), ('Dry run', 'dry_run'),
          ('Started', 'started_at'), ('Finished', 'finished_at'),
          ('Migrations', 'migration_count'), ('Reason', 'reason')]
FORMATTERS = {'migrations': common.LIST_OF_DICTS,
              'summary': common.JSONColumn,
              'parameters': common.JSONColumn}
RUNNING = 'running'


class CreateRound(command.ShowOne):
    """Start a consolidation round (admin): the controller plans from
    what the agents measured and, unless --dry-run, live-migrates."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        dry = parser.add_mutually_exclusive_group()
        dry.add_argument('--dry-run', dest='dry_run', action='store_true',
                         default=None,
                         help='Plan and record only; migrate nothing.')
        dry.add_argument('--no-dry-run', dest='dry_run',
                         action='store_false',
                         help='Execute the plan even if the controller\'s '
                              '[consolidation] dry_run is set.')
        parser.add_argument('--wait', action='store_true',
                            help='Wait until the round has finished, '
                                 'showing its progress on stderr.')
        parser.add_argument('--wait-timeout', metavar='<seconds>',
                            type=float, default=3600.0,
                            help='Give up waiting after this long (default '
                                 '3600).')
        parser.add_argument('--poll-interval', metavar='<seconds>',
                            type=float, default=2.0,
                            help=argparse_suppress())
        return parser

    def take_action(self, args):
        client = self.app.client_manager.memmut
        rnd = client.create_round(dry_run=args.dry_run)
        if args.wait:
            rnd = wait_for_round(client, rnd, args.wait_timeout,
                                 args.poll_interval, sys.stderr)
        return common.show(rnd, FORMATTERS)


def argparse_suppress():
    import argparse
    return argparse.SUPPRESS


def _progress(rnd):
    migrations = rnd.get('migrations') or []
    done = sum(1 for m in migrations
               if m.get('status') not in ('planned', 'running'))
    return '%d/%d migration(s) done' % (done, len(migrations))


def wait_for_round(client, rnd, timeout, interval, out, clock=time.monotonic,
                   sleep=time.sleep):
    """Poll round ``rnd`` until it is no longer running; progress to
    ``out`` whenever it changes."""
    start = clock()
    last = None
    while rnd['status'] == RUNNING:
        line = 'Round %s: %s, %s, %.0f s' % (rnd['id'], rnd['status'],
                                             _progress(rnd), clock() - start)
        if line.rsplit(',', 1)[0] != last:
            out.write(line + '\n')
            out.flush()
            last = line.rsplit(',', 1)[0]
        if clock() - start > timeout:
            raise exceptions.CommandError(
                'round %s still running after %.0f s' % (rnd['id'], timeout))
        sleep(interval)
        rnd = client.round(rnd['id'])
    out.write('Round %s: %s after %.0f s\n' % (rnd['id'], rnd['status'],
                                               clock() - start))
    out.flush()
    return rnd


class ListRound(command.Lister):
    """List consolidation rounds, newest first."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--status', metavar='<status>',
                            help='running, completed, partial or failed.')
        dry = parser.add_mutually_exclusive_group()
        dry.add_argument('--dry-run', dest='dry_run', action='store_true',
                         default=None, help='Only dry runs.')
        dry.add_argument('--no-dry-run', dest='dry_run',
                         action='store_false', help='Only real rounds.')
        common.add_pagination(parser, 'ID of the last round of the previous '
                                      'page.')
        return parser

    def take_action(self, args):
        rounds = self.app.client_manager.memmut.rounds(
            status=args.status, dry_run=args.dry_run, limit=args.limit,
            marker=args.marker)
        return common.listing(rounds, FIELDS)


class ShowRound(command.ShowOne):
    """Show a consolidation round: status, reason, figures and each
    migration with the resource and kind that caused it."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('round', metavar='<round-id>')
        return parser

    def take_action(self, args):
        rnd = self.app.client_manager.memmut.round(args.round)
        return common.show(rnd, FORMATTERS)
