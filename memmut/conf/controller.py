from oslo_config import cfg

group = cfg.OptGroup('controller', title='Global controller (GMC) options')

opts = [
    cfg.IntOpt('host_down_after',
               default=60,
               min=1,
               help='Seconds without a report after which the controller '
                    'considers a host\'s agent down.'),
    cfg.FloatOpt('max_clock_skew',
                 default=30.0,
                 min=0.0,
                 help='Seconds an agent\'s clock may be ahead of the '
                      'controller\'s. Reports and GMC_inform messages '
                      'dated further in the future are refused (logged): '
                      'they would otherwise win every "newest wins" '
                      'comparison until the controller\'s clock caught '
                      'up. Late messages are always accepted. Liveness '
                      'never uses agent times: it is judged on when the '
                      'controller received a host\'s messages.'),
    cfg.IntOpt('allocation_grace',
               default=120,
               min=1,
               help='Seconds a remote allocation may wait for what should '
                    'follow: the lender\'s answer to LMC_alloc, or the '
                    'client listing the allocation in its reports. After '
                    'that, reconciliation fails a request that never got '
                    'an answer and releases an allocation nobody uses. '
                    'Keep it above rpc_response_timeout and a few agent '
                    'poll intervals.'),
    cfg.IntOpt('reconcile_interval',
               default=30,
               min=1,
               help='Seconds between two reconciliations of the remote '
                    'allocations with the agents\' reports (one also runs '
                    'when the controller starts). A lender that is down '
                    'has its allocations closed as failed within '
                    'host_down_after + reconcile_interval seconds.'),
    cfg.IntOpt('report_batch_size',
               default=64,
               min=1,
               help='Most agents\' reports the controller stores in one '
                    'database transaction. Reports are written by one '
                    'thread, which takes every report received while it '
                    'wrote the last batch: under light load each is '
                    'stored alone as soon as it arrives, under load '
                    'several share a transaction, which costs the '
                    'controller and the database a fraction of what one '
                    'transaction per report does. An agent is answered '
                    'once its report is committed either way. 1: each '
                    'report is stored in its own transaction by the RPC '
                    'thread that received it. Above [DEFAULT] '
                    'executor_thread_pool_size (the RPC threads that '
                    'wait for the writer) changes nothing.'),
    cfg.IntOpt('report_writers',
               default=2,
               min=1,
               help='Threads storing the batches of reports (see '
                    'report_batch_size), each in its own transaction on '
                    'its own database connection: while one builds its '
                    'batch another\'s is executed by the database. One '
                    'writer stored about 170 reports/s at 10 000 hosts '
                    'with the machine not busy (a serial path). Each '
                    'writer holds one of the connection pool\'s 5 '
                    'standing connections (SQLAlchemy\'s default, plus 10 '
                    'on demand) while it writes; keep it well below that. '
                    'SQLite (one write transaction at a time) always '
                    'gets one. Unused when report_batch_size is 1.'),
    cfg.IntOpt('sample_retention',
               default=7 * 24 * 3600,
               min=60,
               help='Seconds of per-host samples (reports) the controller '
                    'keeps in the database, and of per-VM samples when '
                    'raw_sample_retention is 0; older ones are purged.'),
    cfg.IntOpt('raw_sample_retention',
               default=12 * 3600,
               min=0,
               help='Seconds of raw per-poll VM samples the controller '
                    'keeps; older ones are rolled up into one row per VM '
                    'and [consolidation] interval (CPU seconds used and '
                    'their time span, peak CPU, the newest WSS^max_avg '
                    'and largest WSS, the newest sample\'s time, host '
                    'and CPU counter), kept for rollup_retention. '
                    'Consolidation rounds read both: when rounds read no '
                    'further back than this (history_length times '
                    'interval, plus [badis] time_slice: 25 h with the '
                    'defaults, which therefore read rollups too) their '
                    'input is exactly what the raw samples give; older '
                    'rolled-up intervals are placed '
                    'by their newest sample (within one interval). 0: no '
                    'rollups, raw samples are kept for sample_retention. '
                    'With several controllers, one at a time rolls up '
                    '(the "rollup" lease).'),
    cfg.IntOpt('rollup_retention',
               default=30 * 24 * 3600,
               min=60,
               help='Seconds of rolled-up VM samples (see '
                    'raw_sample_retention) the controller keeps; older '
                    'ones are purged.'),
    cfg.IntOpt('leader_lease',
               default=900,
               min=10,
               help='Seconds a controller holds the right to run '
                    'consolidation rounds (the "consolidation" row of the '
                    'leases table) without renewing it. With several '
                    'controllers on one database, only the holder runs '
                    'rounds, scheduled or asked for; it renews the lease '
                    'at each round start and every third of this time '
                    'while a round runs, and stops executing (no new '
                    'migration, no power-off) when a renewal fails. Keep '
                    'it above [consolidation] interval so that the leader '
                    'keeps it between rounds; after the leader dies, '
                    'another controller takes over within this time, at '
                    'once if it runs on the same host, boot and PID '
                    'namespace and sees the leader\'s process gone (a '
                    'restarted controller). '
                    'Expiry is judged on each controller\'s clock: keep '
                    'the clocks synchronized well within this time.'),
]


def list_opts():
    return {group: opts}
