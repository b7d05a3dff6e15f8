"""openstack memmut vm list / show"""

from osc_lib.command import command

from memmut.osc.v1 import common

FIELDS = [('UUID', 'uuid'), ('Name', 'name'), ('Host', 'host'),
          ('State', 'state'), ('Booked KiB', 'booked_kb'),
          ('Balloon KiB', 'balloon_kb'), ('WSS KiB', 'wss_kb'),
          ('WSS max avg KiB', 'wss_max_avg_kb'),
          ('Packed on KiB', 'packing_kb'), ('Badis mode', 'badis_mode'),
          ('Role', 'role')]
# A raw sample's keys, and (microversion 1.3) a rolled-up interval's: each
# entry shows those it has, ``kind`` first.
HISTORY_KEYS = ('kind', 'timestamp', 'balloon_kb', 'wss_kb', 'wss_max_avg_kb',
                'max_avg_window', 'max_avg_slice_s', 'badis_mode',
                'pinned_kb', 'shrink_floor_kb', 'packing_kb', 'role',
                'lent_kb', 'borrowed_kb', 'swap_in_kb', 'swap_out_kb',
                'interval_start', 'interval_end', 'samples', 'wss_max_kb',
                'cpu_mean_cores', 'cpu_peak_cores')


class ListVM(command.Lister):
    """List VMs with their booked memory, balloon, working set and role."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--host', metavar='<host>',
                            help='Only VMs last seen on this host.')
        parser.add_argument('--state', metavar='<state>',
                            help='Only VMs in this state (running...).')
        common.add_pagination(parser, 'UUID of the last VM of the previous '
                                      'page.')
        return parser

    def take_action(self, args):
        vms = self.app.client_manager.memmut.vms(
            host=args.host, state=args.state, limit=args.limit,
            marker=args.marker)
        return common.listing(vms, FIELDS)


class ShowVM(command.ShowOne):
    """Show one VM; --history adds its samples (balloon, WSS, WSS^max_avg,
    Badis mode, lent/borrowed memory, swap), oldest first, and beyond the
    raw sample retention its rolled-up intervals (kind "rollup": samples,
    largest WSS, WSS^max_avg, mean and peak CPU)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('vm', metavar='<uuid>', help='VM UUID.')
        parser.add_argument('--history', action='store_true',
                            help='Include the VM\'s sample history.')
        parser.add_argument('--history-limit', metavar='<n>', type=int,
                            default=20,
                            help='Newest <n> samples of the history '
                                 '(default 20).')
        parser.add_argument('--history-kind', choices=('sample', 'rollup'),
                            help='Only raw samples or only rolled-up '
                                 'intervals of the history.')
        return parser

    def take_action(self, args):
        client = self.app.client_manager.memmut
        vm = client.vm(args.vm)
        formatters = {}
        if args.history:
            history = client.vm_history(vm['uuid'], limit=args.history_limit,
                                        kind=args.history_kind)
            vm['history'] = [{k: s.get(k) for k in HISTORY_KEYS if k in s}
                             for s in history]
            formatters['history'] = common.LIST_OF_DICTS
        return common.show(vm, formatters)
