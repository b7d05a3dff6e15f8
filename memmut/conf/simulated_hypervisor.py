from oslo_config import cfg

# Named in full: "sim" alone also named the trace simulator ([simulator]).
# The options are still read from the old [sim] group.
group = cfg.OptGroup('simulated_hypervisor',
                     title='Simulated hypervisor options (the embedded '
                           'default driver, "sim")')

opts = [
    cfg.ListOpt('vms',
                deprecated_group='sim',
                default=['vm-w1:1024:W1', 'vm-w2:1024:W2', 'vm-w3:1024:W3',
                         'vm-w4:1024:W4', 'vm-w5:1024:W5'],
                help='Simulated VMs, each NAME:BOOKED_MIB:SHAPE[:PEAK_MIB]. '
                     'SHAPE is one of the synthetic working-set shapes '
                     'W1-W5; PEAK_MIB (default 90%% of the booking) is the '
                     'largest working set it reaches.'),
    cfg.IntOpt('host_memory_mb',
               deprecated_group='sim',
               default=8192,
               min=64,
               help='Physical memory of the simulated host.'),
    cfg.IntOpt('host_cpus',
               deprecated_group='sim',
               default=8,
               min=1,
               help='CPU count of the simulated host.'),
    cfg.FloatOpt('step_seconds',
                 deprecated_group='sim',
                 default=60.0,
                 min=0.001,
                 help='Simulated seconds each step of a workload shape '
                      'lasts.'),
    cfg.FloatOpt('time_scale',
                 deprecated_group='sim',
                 default=1.0,
                 min=0.001,
                 help='Simulated seconds per wall-clock second; above 1 the '
                      'schedules play faster.'),
    cfg.IntOpt('seed',
               deprecated_group='sim',
               default=0,
               help='Random seed of the simulated noise, for repeatable '
                    'runs.'),
]


def list_opts():
    return {group: opts}
