"""openstack memmut host list / show"""

from osc_lib.command import command

from memmut.osc.v1 import common

FIELDS = [('Name', 'name'), ('Status', 'status'),
          ('Hypervisor', 'hypervisor'), ('VMs', 'vm_count'),
          ('Memory KiB', 'memory_total_kb'), ('Free KiB', 'memory_free_kb'),
          ('Reservoir KiB', 'reservoir_kb'), ('Lent KiB', 'lent_kb'),
          ('Borrowed KiB', 'borrowed_kb'),
          ('Sampling back-ends', 'sampling_backends')]
FORMATTERS = {'sampling_backends': common.LIST, 'vms': common.LIST_OF_DICTS}


class ListHost(command.Lister):
    """List compute hosts: memory, reservoir, lent and borrowed memory,
    VMs and working-set sampling back-ends."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--hypervisor', metavar='<driver>',
                            help='Only hosts of this hypervisor driver.')
        common.add_pagination(parser, 'Name of the last host of the '
                                      'previous page.')
        return parser

    def take_action(self, args):
        client = self.app.client_manager.memmut
        hosts = client.hosts(hypervisor=args.hypervisor, limit=args.limit,
                             marker=args.marker)
        return common.listing(hosts, FIELDS, FORMATTERS)


class ShowHost(command.ShowOne):
    """Show one compute host and its VMs."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('host', metavar='<host>', help='Host name.')
        return parser

    def take_action(self, args):
        host = self.app.client_manager.memmut.host(args.host)
        return common.show(host, FORMATTERS)
