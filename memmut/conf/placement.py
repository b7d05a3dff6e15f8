"""``[placement]``: feeding placement's MEMORY_MB allocation ratio from
the working sets memmut measured (off by default).

Like ``[nova]``, the group holds keystoneauth's session, auth and adapter
options (the controller's credentials for placement; its user needs
placement's admin rights to update inventories).
"""

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

GROUP = 'placement'

group = cfg.OptGroup(
    GROUP, title='Placement MEMORY_MB allocation ratios',
    help='memmut-controller can set each compute node\'s MEMORY_MB '
         'allocation_ratio in placement from what its VMs really use, so '
         'that nova\'s scheduler packs by working sets too. nova-compute '
         'must then leave the ratio to placement: unset its '
         '[DEFAULT] ram_allocation_ratio.')

opts = [
    cfg.BoolOpt('update_allocation_ratio',
                default=False,
                help='Set each up host\'s MEMORY_MB allocation_ratio in '
                     'placement every update_interval seconds: its VMs\' '
                     'booked memory over their demand (WSS^max_avg plus '
                     '[badis] headroom, capped at the booking; a VM '
                     'without a working set yet counts at its booking), '
                     'clamped to [min_allocation_ratio, '
                     'max_allocation_ratio]. Only allocation_ratio is '
                     'written (reserved and the rest as placement has '
                     'them), with the provider generation; a conflict is '
                     'retried.'),
    cfg.IntOpt('update_interval',
               default=600,
               min=10,
               help='Seconds between two updates of the ratios.'),
    cfg.FloatOpt('min_allocation_ratio',
                 default=1.0,
                 min=0.1,
                 help='Lowest ratio memmut sets.'),
    cfg.FloatOpt('max_allocation_ratio',
                 default=1.5,
                 min=0.1,
                 help='Highest ratio memmut sets, however small the '
                      'working sets.'),
    cfg.FloatOpt('min_change',
                 default=0.02,
                 min=0.0,
                 help='Ratios closer than this to placement\'s are left '
                      'alone (fewer writes, fewer generation bumps).'),
]


def _adapter_opts():
    adapter = ks_loading.get_adapter_conf_options(include_deprecated=False)
    cfg.set_defaults(adapter, valid_interfaces=['internal', 'public'],
                     service_type='placement')
    return adapter


def list_opts():
    return {group: (opts + ks_loading.get_session_conf_options() +
                    ks_loading.get_auth_common_conf_options() +
                    _adapter_opts())}
