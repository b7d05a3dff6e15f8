from oslo_config import cfg

group = cfg.OptGroup('consolidation',
                     title='Consolidation (OpenStack Neat\'s algorithms '
                           'with memory, seed 004 §2.6.2)')

_PARAMS = ('JSON object of parameters for %s; the keys given override '
           'the algorithm\'s defaults (Neat\'s), unknown keys are an '
           'error. Windows, periods and leads of memmut\'s algorithms are '
           'a number of samples (one per interval) or a duration such as '
           '"1d", "4h", "15min" or "90s", converted with the interval '
           '(a duration stays the same time when the interval changes; '
           'a number of samples does not). Defaults: %s.')

_OVERLOAD_DEFAULT = ('memmut\'s default reacts at 0.85 of the host\'s '
                     'CPU, earlier than the algorithm\'s own 0.9 (issue '
                     '19: a quarter to a third less CPU-overload time for '
                     'more overload moves; give the parameters of any '
                     'other algorithm you choose). ')

_OVERLOAD_HELP = _OVERLOAD_DEFAULT + _PARAMS % (
    'overload_detection',
    'threshold {"threshold": 0.9}; '
    'last_n_average_threshold {"threshold": '
    '0.95, "n": 2}; mad_threshold {"threshold": '
    '2.5, "limit": 10}; iqr_threshold '
    '{"threshold": 1.5, "limit": 10}; loess and '
    'loess_robust {"threshold": 1.0, "param": '
    '1.2, "length": 10}; otf {"otf": 0.1, '
    '"threshold": 1.0, "limit": 10}; mhod '
    '{"state_config": [0.8], "otf": 0.1, '
    '"window_sizes": [30, 40, 50, 60, 70, 80, '
    '90, 100], "bruteforce_step": 0.5, '
    '"learning_steps": 10}; forecast_threshold '
    '{"threshold": 0.9, "n": 1, "length": 12, '
    '"horizon": 0, "period": 0, "lead": "1h", "seasonal": "rise", '
    '"seasonal_threshold": null} '
    '(period > 0: also overloaded when the current load plus the host\'s '
    'rise within the lead after the same time one period ago, e.g. '
    '"1d": yesterday, exceeds seasonal_threshold, null meaning the '
    'threshold; "peak": when that window\'s level did)')

opts = [
    cfg.StrOpt('underload_detection',
               default='forecast_threshold',
               help='Underload detection algorithm applied to each host\'s '
                    'CPU utilization history: Neat\'s "threshold" or '
                    '"last_n_average_threshold", memmut\'s '
                    '"forecast_threshold" (also the largest value of the '
                    'last hours must be low: emptying a host that was '
                    'busy lately would be undone), or any algorithm '
                    'registered under the memmut.consolidation.underload '
                    'entry point.'),
    cfg.StrOpt('underload_detection_parameters',
               default='{}',
               help=_PARAMS % ('underload_detection',
                               'threshold {"threshold": 0.3}; '
                               'last_n_average_threshold {"threshold": '
                               '0.5, "n": 2}; forecast_threshold '
                               '{"threshold": 0.5, "n": 2, "window": '
                               '"1d", "peak_threshold": 0.5}')),
    cfg.StrOpt('overload_detection',
               default='threshold',
               help='Overload detection algorithm applied to each host\'s '
                    'CPU utilization history: "threshold", '
                    '"last_n_average_threshold", "mad_threshold", '
                    '"iqr_threshold", "loess", "loess_robust", "otf", '
                    '"mhod" or "no_migrations", memmut\'s '
                    '"forecast_threshold" (the last values or a local '
                    'regression some steps ahead above the threshold), or '
                    'any algorithm registered under the '
                    'memmut.consolidation.overload entry point.'),
    cfg.StrOpt('overload_detection_parameters',
               default='{"threshold": 0.85}',
               help=_OVERLOAD_HELP),
    cfg.StrOpt('memory_underload_detection',
               default='forecast_threshold',
               help='Underload detection algorithm applied to each host\'s '
                    'memory load: the sum of its VMs\' working sets '
                    '(WSS^max_avg) over its memory, or of their booked '
                    'memory when packing on booked memory.'),
    cfg.StrOpt('memory_underload_detection_parameters',
               default='{}',
               help=_PARAMS % ('memory_underload_detection',
                               'as for underload_detection')),
    cfg.StrOpt('memory_overload_detection',
               default='forecast_threshold',
               help='Overload detection algorithm applied to each host\'s '
                    'memory load (see memory_underload_detection). The '
                    'default, forecast_threshold with a period of a day '
                    '("1d"), also counts a host '
                    'overloaded when its VMs grew together within the hour '
                    'after this time yesterday and would fill it again: '
                    'recurring memory spikes (backups, batch jobs) are '
                    'relieved before they come back, not after (issue 19; '
                    'doc/source/simulator.rst, "Warm starts of the '
                    'synthetic profiles"). It needs a history_length of '
                    'at least the period in samples (288 at the default '
                    'interval; the services warn at start when it is '
                    'shorter). "threshold" {"threshold": 0.95}: the '
                    'behaviour before.'),
    cfg.StrOpt('memory_overload_detection_parameters',
               default='{"threshold": 0.95, "period": "1d", "lead": '
                       '"1h", "seasonal": "rise", "seasonal_threshold": '
                       '1.0}',
               help=_PARAMS % ('memory_overload_detection',
                               'as for overload_detection; memmut sets '
                               'the threshold to 0.95 of the host\'s '
                               'memory, and compares the seasonal '
                               'forecast with the whole host (1.0): the '
                               'load it forecasts is a sum of '
                               'WSS^max_avg, already above what the '
                               'VMs use, and at 0.95 the forecast moved '
                               'VMs from hosts whose memory never came '
                               'within 7 % of full (issue 19, stop 79)')),
    cfg.StrOpt('underload_combination',
               default='all',
               choices=[('all', 'a host is underloaded when both its CPU '
                                'and its memory are'),
                        ('any', 'a host is underloaded when its CPU or '
                                'its memory is')],
               help='How the CPU and memory underload decisions combine. '
                    'An overload on either resource always counts.'),
    cfg.StrOpt('vm_selection',
               default='longest_relief',
               help='VM selection algorithm for overloaded hosts: Neat\'s '
                    '"random", "minimum_utilization", '
                    '"minimum_migration_time" or '
                    '"minimum_migration_time_max_cpu", memmut\'s '
                    '"minimum_migration_time_per_cpu" (the VM freeing the '
                    'most CPU per MiB to migrate: packed on working sets, '
                    'the smallest VMs are mostly idle and Neat\'s choice '
                    'sheds dozens of them per overload) or '
                    '"longest_relief" (the VMs whose departure keeps the '
                    'host under its CPU and memory targets over the most '
                    'of its recent history, the least memory first), or '
                    'any algorithm registered under the '
                    'memmut.consolidation.vm_selection entry point.'),
    cfg.StrOpt('vm_selection_parameters',
               default='{}',
               help=_PARAMS % ('vm_selection',
                               'minimum_migration_time_max_cpu and '
                               'minimum_migration_time_per_cpu '
                               '{"last_n": 2}; random {"seed": null}; '
                               'longest_relief {"window": "1h", '
                               '"cpu_target": 0.8, "ram_target": 0.9, '
                               '"last_n": 2}')),
    cfg.StrOpt('vm_placement',
               default='peak_best_fit_decreasing',
               help='VM placement algorithm: Neat\'s '
                    '"best_fit_decreasing", memmut\'s '
                    '"peak_best_fit_decreasing" (the same on the VMs\' and '
                    'hosts\' recent CPU peaks, with a lower CPU threshold '
                    'on hosts whose memory is nearly full, and with '
                    'memory_window > 0 room kept for the memory peaks of '
                    'that window (the default: a day), and with '
                    'overload_fit '
                    '"worst" the VMs taken off an overloaded host sent to '
                    'the active host with the most CPU left instead of '
                    'the best fit, with underload_fit "worst" the same '
                    'for the VMs of a host emptied for underload, and '
                    'with overload_window > 0 packed on '
                    'their CPU peak over that window), or any '
                    'algorithm registered under the '
                    'memmut.consolidation.placement entry point.'),
    cfg.StrOpt('vm_placement_parameters',
               default='{"memory_window": "1d"}',
               help=_PARAMS % ('vm_placement',
                               'best_fit_decreasing {"cpu_threshold": 0.8, '
                               '"ram_threshold": 0.95, "last_n_vm_cpu": '
                               '2}; peak_best_fit_decreasing '
                               '{"cpu_threshold": 0.8, "ram_threshold": '
                               '0.95, "window": "4h", '
                               '"dense_ram_fraction": '
                               '0.8, "dense_cpu_margin": 0.1, '
                               '"memory_window": 0, "overload_fit": '
                               '"best", "overload_window": 0, '
                               '"underload_fit": "best"}')),
    cfg.IntOpt('max_overload_moves',
               default=0,
               min=0,
               help='Most VMs selected from one overloaded host in a '
                    'round; 0 selects until the detectors no longer fire '
                    'on what remains.'),
    cfg.IntOpt('underload_grace_rounds',
               default=12,
               min=0,
               advanced=True,
               help='Rounds after a host last received VMs during which it '
                    'is not emptied for underload, so a host switched on '
                    'for an overload is not switched off again at once '
                    '(memmut\'s addition to Neat; 0 disables it).'),
    cfg.StrOpt('prewarm_history',
               default='first_estimate',
               choices=[('booked', 'a VM not yet seen for a whole '
                         '[badis] time_slice counts at its booking in '
                         'the history the planner forecasts from'),
                        ('first_estimate', 'once the VM has a '
                         'WSS^max_avg, its earlier samples hold that '
                         'first estimate instead')],
               advanced=True,
               help='What the memory-load history the planner forecasts '
                    'from holds for the samples of a VM\'s first time '
                    'slice (memory_basis = wss). The booking there is a '
                    'placeholder, not a use: a VM that grows after it '
                    'looks like one whose load fell and rose again. The '
                    'packing and the current load of a VM still in its '
                    'first slice are unchanged. Swept on every input in '
                    'doc/source/simulator.rst (issue 19): fewer '
                    'migrations on memory_spikes, bursty and dense, the '
                    'rest unchanged; hence the default. booked: the '
                    'behaviour before.'),
    cfg.BoolOpt('pack_on_shrink_floor',
                default=True,
                advanced=True,
                help='Pack a VM (memory_basis = wss) on the larger of its '
                     'WSS^max_avg and the shrink floor its agent holds '
                     '([badis] shrink_floor): the allocation the guest '
                     'read back from swap after a shrink below, which the '
                     'agent keeps the balloon at whatever the access '
                     'sample says. The VM takes that much of its host '
                     'and takes it along when it moves. False: '
                     'WSS^max_avg alone, the behaviour before (issue 13, '
                     'doc/source/badis.rst "What the controller packs '
                     'on").'),
    cfg.StrOpt('move_order',
               default='plan',
               choices=[('plan', 'the plan\'s order'),
                        ('priority', 'overload moves first, the most '
                         'overloaded source host first; an underload '
                         'move sharing a host with an overload move not '
                         'finished waits for it'),
                        ('priority_drop', 'as priority, but a host\'s '
                         'underload evacuation that would wait is left '
                         'out of the round (its moves recorded as '
                         'skipped) and planned again next round')],
               help='The order a round\'s live migrations are handed to '
                    'nova, which runs one per host at a time by default '
                    '(max_concurrent_live_migrations): whether the relief '
                    'of an overloaded host queues behind evacuations that '
                    'only save energy. The simulator queues its '
                    'migrations the same way '
                    '(memmut.consolidation.move_order).'),
    cfg.IntOpt('min_dwell_rounds',
               default=0,
               min=0,
               help='Rounds a VM stays on the host a live migration put it '
                    'on before it is moved again: its host is not emptied '
                    'for underload meanwhile, and an overload selects it '
                    'only when no other VM is left to select (memmut\'s, '
                    'issue 19; 0 disables it).'),
    cfg.FloatOpt('migration_budget',
                 default=0.1,
                 min=0.0,
                 help='Live migrations per VM per day (plus '
                      'migration_budget_burst) that the rounds of '
                      'the last migration_budget_window seconds may plan '
                      'before an underloaded host is emptied: a host is '
                      'emptied only if its VMs fit in what is left '
                      '(memmut.consolidation.budget). Overload moves are '
                      'never held back but use the budget up. 0 disables '
                      'it (memmut\'s, issue 19).'),
    cfg.IntOpt('migration_budget_window',
               default=86400,
               min=1,
               help='Seconds over which migration_budget is counted.'),
    cfg.FloatOpt('migration_budget_burst',
                 default=10.0,
                 min=0.0,
                 help='Migrations the window may hold on top of '
                      'migration_budget per VM (a token bucket\'s burst: '
                      'in a small cloud a host\'s VMs may outnumber the '
                      'allowance per VM).'),
    cfg.StrOpt('underload_order',
               default='cpu',
               choices=['cpu', 'fewest_vms'],
               help='Which underloaded hosts are emptied first: "cpu" the '
                    'lightest CPU use (Neat), "fewest_vms" the fewest VMs '
                    '(fewest migrations per host switched off), then the '
                    'lightest CPU use.'),
    cfg.FloatOpt('remote_memory_fraction',
                 default=0.0, min=0.0, max=1.0,
                 help='How much of a host\'s memory remote memory (global '
                      'mutualization: [mutualization] remote_cap_kb on the '
                      'agents, [memstore] remote_listen on the lenders) '
                      'may stand in for before a memory overload moves VMs. '
                      'A host overloaded on memory alone, and not '
                      'overloaded by the same detector with this fraction '
                      'of memory added, is left in place while the other '
                      'hosts\' reported reservoirs cover the least extra '
                      'memory that would stop the detector; its agent '
                      'serves the excess from remote memory. The least '
                      'loaded such hosts go first. 0: every memory '
                      'overload moves VMs (the '
                      'behaviour before). Set it only where remote memory '
                      'is deployed (doc/source/consolidation.rst, "Remote '
                      'memory instead of migrations").'),
    cfg.StrOpt('young_vm_policy',
               default='time_slice',
               choices=['time_slice', 'booked', 'prior', 'spike_prior'],
               help='What a VM with little history is packed on '
                    '(memmut.consolidation.young; its memory load in '
                    'detection stays its WSS^max_avg): "time_slice" its '
                    'booking during its first Badis time slice, then '
                    'WSS^max_avg plus headroom; "booked" its booking '
                    'until it is min_age seconds old; "prior" until then '
                    'the larger of its own figure and a population prior '
                    '(the quantile, over the VMs at least min_age old, '
                    'of their peak WSS^max_avg over that time as a '
                    'fraction of their booking) times its booking; '
                    '"spike_prior" until then its own WSS^max_avg plus '
                    'the quantile, over the VMs past their first time '
                    'slice, of how far theirs rose within min_age as a '
                    'fraction of their booking, times its booking.'),
    cfg.StrOpt('young_vm_policy_parameters',
               default='{}',
               help=_PARAMS % ('young_vm_policy',
                               'time_slice {}; booked {"min_age": '
                               '86400}; prior and spike_prior '
                               '{"min_age": 86400, "quantile": 0.9}')),
    cfg.IntOpt('interval',
               default=300,
               min=1,
               help='Seconds between two consolidation rounds, and between '
                    'two samples of the histories the algorithms read '
                    '(Neat\'s local_manager_interval and '
                    'data_collector_interval).'),
    cfg.StrOpt('cpu_interval_statistic',
               default='mean',
               choices=[('mean', 'the CPU a VM used over the interval '
                                 'divided by its length (Neat\'s)'),
                        ('peak', 'the highest CPU rate between two of '
                                 'its agent\'s reports within the '
                                 'interval')],
               help='How a VM\'s CPU over one interval becomes the one '
                    'value the algorithms read. The mean of a long '
                    'interval hides the peaks within it: simulated on '
                    'the Bitbrains windows, rounds every 1800 s on means '
                    'overloaded the hosts\' CPU 7.5 times as long as '
                    'rounds every 300 s (doc/source/simulator.rst, '
                    '"Rounds every 30 minutes"). At the default interval '
                    'the two differ only by what happens between two '
                    'reports.'),
    cfg.IntOpt('history_length',
               default=288,
               min=1,
               help='Number of latest samples per VM passed to the '
                    'algorithms (Neat\'s data_collector_data_length; '
                    'Neat used 100). 288: a day of 300 s samples, which '
                    'the underload forecast (forecast_threshold\'s '
                    'window) needs to see a daily peak; a window longer '
                    'than the history is the history. With another '
                    'interval, keep it a day (86400 / interval): the '
                    'services warn at start when a forecast\'s period is '
                    'longer than the history.'),
    cfg.FloatOpt('network_migration_bandwidth',
                 default=10.0,
                 min=0.001,
                 help='MB/s available to a live migration; the migration '
                      'time the algorithms use is the mean VM memory over '
                      'it (Neat\'s estimate).'),
    cfg.StrOpt('memory_basis',
               default='wss',
               choices=[('wss', 'pack VMs on WSS^max_avg plus headroom'),
                        ('booked', 'pack VMs on their booked memory '
                                   '(Neat\'s behaviour, the baseline)')],
               help='What memory a VM is packed on and counted for in '
                    'memory detection.'),
    cfg.BoolOpt('scheduled_rounds',
                default=False,
                help='Run a consolidation round in memmut-controller every '
                     'interval seconds: plan from the database, store the '
                     'plan, then execute it through nova (unless dry_run). '
                     'Off by default: rounds then only run on demand '
                     '(ControllerService.run_round).'),
    cfg.StrOpt('round_pacing',
               default='clock',
               choices=[('clock', 'a scheduled round every interval '
                         'seconds, even while the migrations of earlier '
                         'rounds still run: it plans around them (their '
                         'VMs are not planned again, their memory and CPU '
                         'are reserved on their destination hosts)'),
                        ('after_execution', 'a round runs its migrations '
                         'to the end, and the next scheduled round starts '
                         'interval seconds after that (the behaviour '
                         'before 2026-11-29)')],
               help='When scheduled consolidation rounds run. Rounds plan '
                    'one at a time in either case, and [nova] '
                    'max_parallel bounds the migrations running at once '
                    'across all rounds. Simulated on the Bitbrains windows '
                    'and the synthetic profiles, after_execution left '
                    'overloads waiting behind evacuations that take tens '
                    'of minutes (doc/source/simulator.rst, "Round '
                    'pacing").'),
    cfg.BoolOpt('dry_run',
                default=False,
                help='Plan and store consolidation rounds but execute no '
                     'migration and power off no host; the migrations stay '
                     '"planned". Applies to scheduled rounds and to '
                     'on-demand rounds that do not say otherwise.'),
    cfg.FloatOpt('cpu_core_mhz',
                 default=2600.0,
                 min=1.0,
                 help='MHz of one host CPU (as reported by the agent\'s '
                      'cpu_count) in the controller\'s rounds: a host\'s '
                      'CPU capacity is cpu_count times this, a VM\'s CPU use '
                      'its CPU time per second times this. With alike '
                      'hosts only ratios matter, so the value is a unit.'),
    cfg.StrOpt('power_off_command',
               default='',
               help='Command the controller runs for each host a round '
                    'emptied (every migration away from it completed and '
                    'no VM left on it), e.g. "ssh {host} systemctl '
                    'suspend". It is split like a shell line but runs '
                    'without a shell, "{host}" in any argument replaced by '
                    'the host name; to use a shell, pass the name as an '
                    'argument: "sh -c \'...\"$1\"...\' sh {host}". Empty (the '
                    'default): emptied hosts are left on.'),
    cfg.IntOpt('power_off_timeout',
               default=120,
               min=1,
               help='Seconds power_off_command may run before it is killed '
                    'and the power-off counted as failed.'),
    cfg.StrOpt('power_on_command',
               default='',
               help='Command the controller runs for each host memmut '
                    'powered off that a round needs back (it places VMs '
                    'on it), e.g. "ipmitool -H {host}-bmc chassis power '
                    'on". Split and "{host}" replaced as for '
                    'power_off_command. The round then waits for the '
                    'host\'s nova-compute service to be up and enabled '
                    '(power_on_wait) before migrating onto it. Empty (the '
                    'default): hosts memmut powered off are not planned '
                    'on again.'),
    cfg.IntOpt('power_on_timeout',
               default=120,
               min=1,
               help='Seconds power_on_command may run before it is killed '
                    'and the power-on counted as failed.'),
    cfg.IntOpt('power_on_wait',
               default=600,
               min=1,
               help='Seconds a round waits, after power_on_command '
                    'succeeded, for the host\'s nova-compute service to be '
                    'up; past them the migrations onto it are cancelled.'),
]


def list_opts():
    return {group: opts}
