from oslo_config import cfg

group = cfg.OptGroup('mutualization',
                     title='Local memory mutualization (seed 004 ch.3)')

opts = [
    cfg.BoolOpt('enabled',
                default=False,
                help='Run Algorithm 1 on this host: lend the memory idle '
                     'VMs do not use to VMs that need more than their '
                     'initial allocation, through the balloon, keeping the '
                     'rest in the host\'s free-memory reservoir. When '
                     'false the agent only measures and reports.'),
    cfg.StrOpt('policy',
               default='equal',
               help='How Algorithm 1 shares memory beyond the VMs\' initial '
                    'allocations when the pool cannot satisfy every VM: '
                    '"equal" (equal, max-min fair shares) or '
                    '"proportional" (in proportion to what each VM is '
                    'missing). Any policy registered under the '
                    'memmut.mutualization.policies entry point can be '
                    'named.'),
    cfg.IntOpt('host_reserve_kb',
               default=1048576,
               min=0,
               help='KiB of host memory kept for the host itself (OS, '
                    'hypervisor, QEMU overhead) and never counted in the '
                    'budget shared by VMs and the reservoir.'),
    cfg.IntOpt('min_change_kb',
               default=8192,
               min=0,
               help='A VM whose demand (WSS^max_avg plus headroom) differs '
                    'from its allocation by less than this many KiB is '
                    'left as it is, so estimation noise does not move '
                    'balloons every round.'),
    cfg.IntOpt('guaranteed_headroom_kb',
               default=8192,
               min=0,
               help='The part of each VM\'s headroom (see [badis] '
                    'headroom_kb) that Algorithm 1 serves together with '
                    'its working set, before any other VM\'s working set; '
                    'the rest of the headroom is shared only once every VM '
                    'has that. A guest starts to swap a few MiB above its '
                    'working set, at its free-page watermarks (4-8 MiB on '
                    'a 256 MiB guest): a VM held at its bare working set '
                    'swaps.'),
    cfg.StrOpt('init_source',
               default='booked',
               choices=[('booked', 'Mem_init is the VM\'s booked (maximum) '
                                   'memory, the flavor size for nova '
                                   'instances.'),
                        ('adopted', 'Mem_init is the balloon size the VM '
                                    'had when the agent first saw it '
                                    '(its current memory at creation).')],
               help='Where each VM\'s Mem_init, the allocation it is '
                    'guaranteed to get back when its working set grows, '
                    'comes from.'),
    cfg.IntOpt('budget_kb',
               default=0,
               min=0,
               help='KiB of host memory that VMs and the reservoir share. '
                    '0: all host memory minus host_reserve_kb. When set, '
                    'the larger reserve of the two applies (the budget is '
                    'never above host memory minus host_reserve_kb).'),
    cfg.FloatOpt('reclaim_wait',
                 default=5.0,
                 min=0.0,
                 help='Seconds a round waits for inflating balloons to '
                      'release the memory they reclaim before granting it '
                      'to other VMs. Memory a guest has not released yet '
                      'is not granted (the host never overcommits); it is '
                      'granted in a later round.'),
    cfg.FloatOpt('settle_timeout',
                 default=60.0,
                 min=1.0,
                 help='Seconds after which a balloon that has not reached '
                      'its target is taken at the size the hypervisor '
                      'reports (with a warning) instead of the target.'),
    cfg.IntOpt('remote_cap_kb',
               default=0, min=0,
               help='Most remote memory, in KiB, one VM may use (memory '
                    'other hosts lend through the controller, GMC_alloc; '
                    'issue 18). The agent asks for it only when local '
                    'mutualization cannot cover a VM\'s demand, and '
                    'releases it when the demand falls. Needs [memstore] '
                    'enabled. 0: never ask for remote memory.'),
    cfg.FloatOpt('reclaim_timeout',
                 default=30.0,
                 min=0.0,
                 help='Seconds a lender waits, after asking the controller '
                      'to take back memory it lends (GMC_reclaim, because '
                      'its own VMs need it), for the client to let go of '
                      'the slab. After that it deletes the slab itself: '
                      'the client loses no page (every page of a slab is '
                      'also in its backup file) and the controller closes '
                      'the allocation from the lender\'s next report.'),
]


def list_opts():
    return {group: opts}
