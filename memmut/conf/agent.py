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
    cfg.IntOpt('balloon_floor_kb',
               default=64 * 1024,
               min=16 * 1024,
               help='Hard balloon floor (KiB) for every VM: the driver '
                    'raises any balloon target below it, whatever planner '
                    'asked. A VM\'s own floor (flavor extra spec '
                    'memmut:balloon_floor_mb) and the guest\'s measured '
                    'minimum (see guest_reserve_kb) can only raise it; it '
                    'is capped at the VM\'s booked memory. The planners '
                    'aim no lower than [badis] floor_kb.'),
    cfg.IntOpt('guest_reserve_kb',
               default=32 * 1024,
               min=0,
               help='Memory (KiB) a guest needs beyond what its kernel '
                    'reserved at boot (balloon "actual" minus the guest\'s '
                    'MemTotal): unreclaimable slab, page tables and the '
                    'free-page reserve, which the balloon statistics do not '
                    'show. Their sum is the guest\'s own minimum, part of '
                    'the hard floor.'),
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
    cfg.StrOpt('wss_estimator',
               default='badis',
               choices=[('badis', 'Badis: access sampling + swap monitor '
                                  'state machine (seed 004 section 2.6)'),
                        ('balloon_stats', 'baseline: the guest\'s used '
                                          'memory (available - unused) '
                                          'from the balloon statistics'),
                        ('balloon_stats_nocache', 'baseline: the same '
                                                  'minus the disk caches'),
                        ('zballoond', 'baseline: Zballoond shrink-until-'
                                      'swap loop driven from the host '
                                      '(active: it moves the balloon)'),
                        ('selfballoon', 'baseline: self-ballooning on '
                                        'Committed_AS; needs a guest that '
                                        'reports it (evaluation only)'),
                        ('none', 'no estimation and no balloon moves')],
               help='Working-set estimator the agent runs for every VM. '
                    'The estimate is reported to the controller with the '
                    'name of its source and, with balloon_actuation, sizes '
                    'the VM.'),
    cfg.StrOpt('sampling_backend',
               default='auto',
               choices=[('auto', 'the first back-end that can see the VM\'s '
                                 'guest accesses: smaps under TCG, then '
                                 'kmod, then page_idle (sim for the '
                                 'simulated hypervisor)'),
                        ('none', 'no access sampling: Badis reads the '
                                 'guest\'s used memory from the balloon '
                                 'statistics instead, as for a VM no '
                                 'back-end can see'),
                        ('smaps', '/proc/PID/clear_refs + the Referenced '
                                  'size of the guest RAM mapping; blind to '
                                  'guest accesses under KVM'),
                        ('kmod', 'memmut\'s kernel helper '
                                 '(/dev/memmut_wss, doc kmod): n randomly '
                                 'sampled guest pages, host page tables '
                                 'and KVM\'s through the MMU notifier'),
                        ('page_idle', 'idle page tracking of n randomly '
                                      'sampled guest pages '
                                      '(/sys/kernel/mm/page_idle/bitmap + '
                                      '/proc/PID/pagemap)'),
                        ('sim', 'the simulated hypervisor\'s sampler '
                                '(hypervisor_driver = sim only)')],
               help='Access-sampling back-end of the "VMware" technique. A '
                    'back-end that cannot see a VM\'s guest accesses is '
                    'refused for that VM with an error in the log; Badis '
                    'then uses the balloon statistics instead and says so '
                    'in the estimate\'s source.'),
    cfg.BoolOpt('balloon_actuation',
                default=True,
                help='Move balloons: give each VM its estimated demand plus '
                     'headroom (single-VM on-demand allocation, or local '
                     'mutualization when [mutualization] enabled). Off, '
                     'the agent only estimates and reports.'),
]


def list_opts():
    return {group: opts}
