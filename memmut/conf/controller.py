from oslo_config import cfg

group = cfg.OptGroup('controller', title='Global controller (GMC) options')

opts = [
    cfg.IntOpt('host_down_after',
               default=60,
               min=1,
               help='Seconds without a report after which the controller '
                    'considers a host\'s agent down.'),
    cfg.IntOpt('sample_retention',
               default=7 * 24 * 3600,
               min=60,
               help='Seconds of per-VM and per-host samples the controller '
                    'keeps in the database; older ones are purged.'),
]


def list_opts():
    return {group: opts}
