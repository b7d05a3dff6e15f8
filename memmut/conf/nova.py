"""``[nova]``: how the controller reaches nova to live-migrate VMs.

The group holds keystoneauth's session, auth and adapter options (as
nova's own ``[neutron]``/``[placement]`` groups do) plus the executor's
own options. memmut registers every option from ``list_opts`` (see
:mod:`memmut.conf`), so the keystoneauth options are taken from its
loading helpers' lists rather than registered by their ``register_*``
twins. The auth *plugin's* options (``auth_url``, ``username``,
``password``... for ``auth_type = password``) depend on ``auth_type``:
keystoneauth registers them when the executor loads the plugin, exactly
as ``ks_loading.load_auth_from_conf_options`` does for nova, so they are
documented in the guide rather than in the sample file.

openstacksdk reads the adapter options (``endpoint_override``,
``region_name``, ``valid_interfaces``...) of the compute service from this
group: its oslo.config support looks a service up by its project's name,
which for ``compute`` is ``nova``.
"""

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

GROUP = 'nova'
SERVICE_TYPE = 'compute'

group = cfg.OptGroup(
    GROUP, title='Nova API access for consolidation rounds',
    help='Credentials, endpoint and live-migration settings the '
         'controller uses to execute consolidation plans through the '
         'nova API.')

executor_opts = [
    cfg.IntOpt('max_parallel',
               default=4,
               min=1,
               help='Live migrations in flight at once in the whole '
                    'cloud, across every round still executing (at most '
                    'max_per_source of them leaving one host). 1 migrates '
                    'one VM at '
                    'a time, in the plan\'s order: simulated on the '
                    'benchmark\'s traces (doc/source/simulator.rst), '
                    'that left hosts waiting for their relief and nearly '
                    'doubled the CPU-overload time (Bitbrains 0.18 -> '
                    '0.32 %, bursty 0.26 -> 0.47 %), where 4 gave the '
                    'same figures as no limit at all for clouds of 300 '
                    'to 500 VMs. Raise it with the cloud\'s size and '
                    'network.'),
    cfg.IntOpt('max_per_source',
               default=1,
               min=0,
               help='Live migrations the controller hands to nova at once '
                    'leaving one host: set it to the compute nodes\' '
                    'max_concurrent_live_migrations (nova\'s default 1). '
                    'A migration nova would queue behind another leaving '
                    'its host waits in the controller instead, without '
                    'taking one of max_parallel, so that migrations from '
                    'other hosts go first (as the simulator models it). '
                    '0: no limit per host.'),
    cfg.IntOpt('migration_timeout',
               default=900,
               min=1,
               help='Seconds to wait for one live migration attempt to '
                    'finish (the server back to ACTIVE or PAUSED with no '
                    'task) before giving up on it.'),
    cfg.BoolOpt('abort_on_timeout',
                default=True,
                help='Ask nova to abort a live migration that passed '
                     'migration_timeout (os-migrations abort, compute API '
                     'microversion 2.24 or later).'),
    cfg.FloatOpt('poll_interval',
                 default=5.0,
                 min=0.01,
                 help='Seconds between two polls of a migrating server\'s '
                      'status.'),
    cfg.IntOpt('migration_retries',
               default=2,
               min=0,
               help='Further attempts after a live migration failed (not '
                    'after a timeout, nor when nova rejects the request as '
                    'invalid); the migration row records every attempt.'),
    cfg.FloatOpt('retry_interval',
                 default=30.0,
                 min=0.0,
                 help='Seconds to wait before retrying a failed live '
                      'migration.'),
    cfg.StrOpt('block_migration',
               default='auto',
               choices=[('auto', 'let nova decide from the storage '
                                 '(microversion 2.25 or later)'),
                        ('true', 'always copy the local disks'),
                        ('false', 'never copy disks (shared storage or '
                                  'volume-backed servers)')],
               help='Block migration mode of the live migrations.'),
]


def _adapter_opts():
    opts = ks_loading.get_adapter_conf_options(include_deprecated=False)
    # The controller usually runs on the control plane: prefer the internal
    # endpoint of the catalog, as nova does for the services it calls.
    cfg.set_defaults(opts, valid_interfaces=['internal', 'public'],
                     service_type=SERVICE_TYPE)
    return opts


def list_opts():
    return {group: (executor_opts +
                    ks_loading.get_session_conf_options() +
                    ks_loading.get_auth_common_conf_options() +
                    _adapter_opts())}
