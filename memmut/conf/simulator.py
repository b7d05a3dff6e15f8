from oslo_config import cfg

group = cfg.OptGroup('simulator',
                     title='Consolidation simulator (memmut-sim) options')

opts = [
    cfg.FloatOpt('host_cpu_mhz',
                 default=83200.0,
                 min=1.0,
                 help='CPU capacity of each simulated host in MHz. The '
                      'default is a 2013 dual-socket server like those '
                      'hosting the Bitbrains VMs: 2 x 8-core Xeon E5-2670 '
                      'with Hyper-Threading, 32 threads at 2600 MHz (the '
                      'clock of most Bitbrains vCPUs).'),
    cfg.FloatOpt('host_memory_mb',
                 default=262144.0,
                 min=1.0,
                 help='Memory of each simulated host in MiB (default '
                      '256 GiB, that server\'s usual configuration).'),
    cfg.IntOpt('host_count',
               default=0,
               min=0,
               help='Number of simulated hosts; 0 gives one per VM, '
                    'enough for any packing.'),
    cfg.FloatOpt('host_idle_watts',
                 default=175.0,
                 min=0.0,
                 help='Power of an active host at 0 %% CPU in the linear '
                      'power model P(u) = idle + (max - idle) u (Neat\'s '
                      'and CloudSim\'s linear model: 250 W at full load, '
                      '70 %% of it idle).'),
    cfg.FloatOpt('host_max_watts',
                 default=250.0,
                 min=0.0,
                 help='Power of an active host at 100 %% CPU. Suspended '
                      'hosts draw nothing.'),
    cfg.StrOpt('host_power_model',
               default='linear',
               choices=[('linear', 'P(u) = idle + (max - idle) u'),
                        ('specpower', 'the shape of a measured '
                         'SPECpower_ssj2008 curve (HP ProLiant ML110 G5, '
                         'the one Beloglazov & Buyya used) between idle '
                         'and max: rises faster at low load')],
               help='How an active host\'s power depends on its CPU '
                    'utilization, for the energy and ESV figures.'),
    cfg.IntOpt('wss_average_window',
               default=5,
               min=1,
               help='Samples n in the moving average of WSS^max_avg (5 in '
                    'seed 004 §2.6.2).'),
    cfg.FloatOpt('wss_time_slice',
                 default=3600.0,
                 min=1.0,
                 help='Seconds s of the time slice over which WSS^max_avg '
                      'takes the maximum of the moving average (1 hour in '
                      'the seed).'),
    cfg.IntOpt('migration_concurrency',
               default=1,
               min=1,
               help='Live migrations a simulated host sends at a time '
                    '(nova\'s max_concurrent_live_migrations, default 1: '
                    'nova-compute limits the migrations leaving it, not '
                    'those arriving). A migration takes its VM\'s packed '
                    'memory over [consolidation] '
                    'network_migration_bandwidth; the others wait, and '
                    'may spill into later rounds.'),
    cfg.IntOpt('migration_incoming_concurrency',
               default=0,
               min=0,
               help='Live migrations a simulated host receives at a time; '
                    '0: no limit, as nova. Set it to model a destination '
                    'link that this many migrations at '
                    'network_migration_bandwidth fill.'),
    cfg.IntOpt('migration_parallel',
               default=0,
               min=0,
               help='Live migrations copying at once in the whole '
                    'simulated cloud; 0: no limit (every planned move '
                    'handed to nova at once, limited only per host). '
                    'memmut\'s controller hands a round\'s moves to nova '
                    '[nova] max_parallel at a time: set this to that '
                    'value to simulate the controller as configured.'),
    cfg.StrOpt('round_pacing',
               default='clock',
               choices=[('clock', 'a round every [consolidation] interval '
                         'seconds, planning around the moves still in '
                         'flight (their VMs are not planned again, their '
                         'memory and CPU are reserved on the destination)'),
                        ('after_execution', 'a round executes its moves to '
                         'the end, and the next one starts [consolidation] '
                         'interval seconds after the last of them ended')],
               help='When the simulated consolidation rounds run.'),
    cfg.StrOpt('history_resolution',
               default='interval',
               choices=[('interval', 'one sample per [consolidation] '
                                     'interval, as the controller bins '
                                     'its reports: CPU averaged over the '
                                     'interval, WSS^max_avg at its end'),
                        ('trace', 'every sample of the trace, whatever '
                                  'the interval (finer than the '
                                  'controller has when the interval is '
                                  'longer than the trace step; the '
                                  'behaviour before 2026-11-30)')],
               help='The histories the simulated planner reads. The same '
                    'when the interval is the trace step (300 s for '
                    'Bitbrains and the synthetic traces).'),
    cfg.FloatOpt('migration_cpu_mhz',
                 default=1300.0,
                 min=0.0,
                 help='CPU in MHz a live migration costs on each of its two '
                      'hosts while it copies (default half a 2.6 GHz '
                      'core: the sending and the receiving QEMU '
                      'threads). Counted in CPU load, CPU overload and '
                      'energy.'),
    cfg.FloatOpt('missing_carry_seconds',
                 default=3600.0,
                 min=0.0,
                 help='A Memory usage reading of 0 (or no reading) while a '
                      'VM exists is missing data: the last real reading is '
                      'carried forward for at most this many seconds, '
                      'then the VM\'s largest real reading so far is '
                      'used. Both are counted in the results.'),
    cfg.StrOpt('wss_error',
               default='',
               help='Estimator error injected into the working-set series '
                    'of the wss packing: a number (standard deviation of '
                    'a normal relative error, e.g. 0.1) or the path of '
                    'bench_badis\'s results (badis.json, with the '
                    'per-poll records badis.jsonl beside it), whose '
                    'measured relative errors and lag are used. Empty: '
                    'the trace\'s working sets as they are.'),
    cfg.IntOpt('wss_lag',
               min=0,
               help='Samples by which the injected working-set estimate '
                    'lags the truth (default: the lag measured in the '
                    'wss_error file, else 0).'),
    cfg.IntOpt('wss_error_seed',
               default=0,
               help='Random seed of the injected estimator error.'),
    cfg.IntOpt('synthetic_vms',
               default=300,
               min=1,
               help='VMs of the built-in synthetic trace, used when no '
                    'trace is given.'),
    cfg.FloatOpt('synthetic_days',
                 default=2.0,
                 min=0.01,
                 help='Days covered by the synthetic trace (300 s '
                      'samples).'),
    cfg.IntOpt('synthetic_seed',
               default=0,
               help='Random seed of the synthetic trace.'),
    cfg.StrOpt('synthetic_profile',
               default='default',
               choices=[
                   ('default', 'the base trace: W1-W5 working-set shapes, '
                    'light CPU with occasional bursts'),
                   ('bursty', 'five times the CPU bursts, heavier noise'),
                   ('memory_spikes', 'groups of VMs whose working sets '
                    'jump together once or twice a day'),
                   ('dense', 'small flavours, three to four times as '
                    'many VMs per host'),
                   ('diurnal', 'a shared day: CPU and working sets rise '
                    'together in the afternoon'),
                   ('churn', 'held out: short-lived VMs (2-48 h), each '
                    'slot taken again as its VM leaves'),
                   ('heavy_tail', 'held out: one VM in ten carries most '
                    'of the CPU, as on Bitbrains'),
                   ('memory_growth', 'held out: working sets that creep '
                    '(caches warming, leaks reset by restarts)')],
               help='Character of the synthetic trace (issue 19). The '
                    'planner\'s defaults were chosen on the first five; '
                    'the held-out ones check that they carry over. See '
                    'doc/source/simulator.rst.'),
]

# Per-run choices, on the command line of memmut-sim only.
cli_opts = [
    cfg.StrOpt('trace',
               help='Bitbrains trace to replay: a tar archive (e.g. '
                    'bitbrains-rnd-2013-7.tar.gz, read in place), the '
                    'data set\'s .zip, or a directory of its CSV files. '
                    'Without it a seeded synthetic trace is generated.'),
    cfg.StrOpt('trace-part',
               help='The directory of the trace to replay when its CSV '
                    'files sit in several (the data set\'s rnd.zip holds '
                    'rnd/2013-7, rnd/2013-8 and rnd/2013-9: different '
                    'VMs at different times): its path inside the '
                    'trace, or its last part when that is unambiguous '
                    '(2013-8). A trace with one directory needs none.'),
    cfg.StrOpt('output-dir',
               help='Directory for results.json, timeseries.csv and the '
                    'plots (default: ./results/sim-<UTC timestamp>).'),
    cfg.ListOpt('mode',
                default=['booked', 'wss'],
                help='Packing modes to run: booked (VMs packed on their '
                     'booked memory, the baseline) and/or wss (on '
                     'WSS^max_avg plus headroom).'),
    cfg.FloatOpt('duration',
                 default=0.0,
                 min=0.0,
                 help='Simulate at most this many hours of the trace; 0 '
                      'replays all of it.'),
    cfg.FloatOpt('burn-in',
                 default=0.0,
                 min=0.0,
                 help='Hours at the start of the trace that are simulated '
                      'but not accounted (warm-up deletion): the figures '
                      'are then those of a planner that has been running, '
                      'not of its first packing of every VM at once. '
                      '--duration counts the hours after it.'),
    cfg.FloatOpt('host-cpu-mhz',
                 min=1.0,
                 help='CPU capacity of each host in MHz for this run '
                      '(default: [simulator] host_cpu_mhz).'),
    cfg.FloatOpt('host-memory-mb',
                 min=1.0,
                 help='Memory of each host in MiB for this run (default: '
                      '[simulator] host_memory_mb).'),
    cfg.IntOpt('host-count',
               min=0,
               help='Number of hosts for this run (default: [simulator] '
                    'host_count).'),
    cfg.IntOpt('interval',
               min=1,
               help='Seconds between two consolidation rounds for this run '
                    '(default: [consolidation] interval). The trace step '
                    'stays the sampling step.'),
    cfg.StrOpt('wss-error',
               help='Estimator error for this run (default: [simulator] '
                    'wss_error): a relative standard deviation such as '
                    '0.1, or the path of tests/benchmarks/results/'
                    'badis.json.'),
    cfg.IntOpt('wss-lag',
               min=0,
               help='Lag of the injected estimate in samples for this run '
                    '(default: [simulator] wss_lag).'),
    cfg.BoolOpt('plots',
                default=True,
                help='Write PNG plots (needs matplotlib); --noplots skips '
                     'them.'),
    cfg.BoolOpt('progress',
                default=True,
                help='Show a progress line on stderr while running.'),
]


def list_opts():
    return {group: opts}
