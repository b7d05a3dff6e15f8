from oslo_config import cfg

group = cfg.OptGroup('mutualization',
                     title='Local memory mutualization (seed 004 ch.3)')

opts = [
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
]


def list_opts():
    return {group: opts}
