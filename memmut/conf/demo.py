from oslo_config import cfg

group = cfg.OptGroup('demo', title='Embedded demo (memmut-demo) options')

opts = [
    cfg.FloatOpt('duration',
                 default=60.0,
                 min=0.1,
                 help='Wall-clock seconds the demo runs before it stops and '
                      'prints its summary.'),
    cfg.FloatOpt('refresh',
                 default=2.0,
                 min=0.05,
                 help='Seconds between two refreshes of the live table.'),
]


def list_opts():
    return {group: opts}
