"""openstack memmut allocation list / show"""

from osc_lib.command import command

from memmut.osc.v1 import common

FIELDS = [('Allocation ID', 'allocation_id'), ('State', 'state'),
          ('Client host', 'client_host'), ('Server host', 'server_host'),
          ('VM', 'vm_uuid'), ('Size KiB', 'size_kb')]


class ListAllocation(command.Lister):
    """List remote-memory allocations (memory a host lends to a VM of
    another host as swap)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--host', metavar='<host>',
                            help='Only allocations where this host is the '
                                 'client or the server.')
        parser.add_argument('--state', metavar='<state>',
                            help='requested, granted, active, releasing, '
                                 'reclaiming, released, refused or failed.')
        common.add_pagination(parser, 'Allocation ID of the last allocation '
                                      'of the previous page.')
        return parser

    def take_action(self, args):
        allocs = self.app.client_manager.memmut.allocations(
            host=args.host, state=args.state, limit=args.limit,
            marker=args.marker)
        return common.listing(allocs, FIELDS)


class ShowAllocation(command.ShowOne):
    """Show one remote-memory allocation."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('allocation', metavar='<allocation-id>')
        return parser

    def take_action(self, args):
        return common.show(
            self.app.client_manager.memmut.allocation(args.allocation))
