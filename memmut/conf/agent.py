from oslo_config import cfg

group = cfg.OptGroup('agent', title='Compute-node agent (LMC) options')

opts = [
    cfg.StrOpt('hypervisor_driver',
               default='sim',
               choices=[('sim', 'in-process simulated VMs (embedded '
                                'default, tests)'),
                        ('libvirt', 'real VMs through libvirt')],
               help='Hypervisor driver the agent uses to see and act on '
                    'VMs.'),
    cfg.FloatOpt('poll_interval',
                 default=5.0,
                 min=0.05,
                 help='Seconds between two polls of every VM on the host.'),
    cfg.IntOpt('stats_period',
               default=1,
               min=1,
               help='Balloon statistics period (seconds) the agent sets on '
                    'every VM it adopts, so that libvirt memoryStats() '
                    'returns fresh guest figures.'),
    cfg.IntOpt('sample_history',
               default=720,
               min=1,
               help='Samples kept in memory per VM for the local '
                    'estimators (720 at 5 s is one hour).'),
    cfg.IntOpt('report_backlog',
               default=1000,
               min=1,
               help='Reports kept while the controller is unreachable. '
                    'They are sent oldest first when it returns; beyond '
                    'this many the oldest are dropped with a warning.'),
    cfg.FloatOpt('report_timeout',
                 default=10.0,
                 min=0.1,
                 help='Seconds to wait for the controller to acknowledge '
                      'one report before keeping it for a later retry.'),
]


def list_opts():
    return {group: opts}
