from oslo_config import cfg

group = cfg.OptGroup('sim', title='Simulated hypervisor options')

opts = [
    cfg.ListOpt('vms',
                default=['vm-w1:1024:W1', 'vm-w2:1024:W2', 'vm-w3:1024:W3',
                         'vm-w4:1024:W4', 'vm-w5:1024:W5'],
                help='Simulated VMs, each NAME:BOOKED_MIB:SHAPE[:PEAK_MIB]. '
                     'SHAPE is one of the synthetic working-set shapes '
                     'W1-W5; PEAK_MIB (default 90%% of the booking) is the '
                     'largest working set it reaches.'),
    cfg.IntOpt('host_memory_mb',
               default=8192,
               min=64,
               help='Physical memory of the simulated host.'),
    cfg.IntOpt('host_cpus',
               default=8,
               min=1,
               help='CPU count of the simulated host.'),
    cfg.FloatOpt('step_seconds',
                 default=60.0,
                 min=0.001,
                 help='Simulated seconds each step of a workload shape '
                      'lasts.'),
    cfg.FloatOpt('time_scale',
                 default=1.0,
                 min=0.001,
                 help='Simulated seconds per wall-clock second; above 1 the '
                      'schedules play faster.'),
    cfg.IntOpt('seed',
               default=0,
               help='Random seed of the simulated noise, for repeatable '
                    'runs.'),
]


def list_opts():
    return {group: opts}
