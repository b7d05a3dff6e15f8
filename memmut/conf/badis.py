from oslo_config import cfg

group = cfg.OptGroup('badis',
                     title='Badis working-set estimation (seed 004 §2.6)')

opts = [
    cfg.FloatOpt('round_interval',
                 default=60.0,
                 min=1.0,
                 help='Seconds between two Badis rounds of a VM: the '
                      'sampling interval and Geiger timer (60 s in the '
                      'published prototype).'),
    cfg.FloatOpt('round_tolerance',
                 default=0.1,
                 min=0.0,
                 max=0.5,
                 advanced=True,
                 help='A VM\'s round is due at the first agent poll at '
                      'least (1 - round_tolerance) x round_interval after '
                      'its last round. Without it, polls a few ms early '
                      '(timing jitter) push a round to the next poll: at '
                      '1 s rounds and 0.5 s polls 30 % of the rounds came '
                      '1.5 s apart.'),
    cfg.BoolOpt('spread_rounds',
                default=True,
                advanced=True,
                help='Start each VM\'s sampling at the agent poll that '
                     'the fewest other VMs\' rounds fall on, so that a '
                     'host\'s rounds spread over the round interval '
                     'instead of all falling in one poll (the VMs an '
                     'agent adopts at once, at its start or after a '
                     'restart, would otherwise keep sharing a poll, which '
                     'then lasts as long as all their rounds: 20 guests '
                     'under TCG made every 11th poll take 4-7 s against a '
                     '5 s interval). A VM\'s first estimate comes at most '
                     'one round interval later; every sampling interval '
                     'keeps its length. Off: every VM starts at once.'),
    cfg.BoolOpt('react_to_swapping',
                default=True,
                advanced=True,
                help='Badis: read the swap monitor at every agent poll '
                     'between two rounds of a VM, and run the VM\'s round '
                     'at once when it swaps at a steady allocation '
                     '(Geiger\'s estimate goes into force at that poll '
                     'instead of at the next round). The sampling interval '
                     'is left running; such a round uses no sample.'),
    cfg.BoolOpt('end_round_on_thrashing',
                default=True,
                advanced=True,
                help='Badis: end a VM\'s round at the first agent poll at '
                     'which the guest has read back from swap, since the '
                     'balloon was made smaller in that round, more than '
                     'twice what the balloon took (and at least '
                     'swap_in_threshold_kb): a shrink or calibration probe '
                     'below its working set, which it would otherwise pay '
                     'for until the round is due (a minute at the default '
                     'round_interval). The round decides as it would have '
                     'at its time; swap-ins after a shrink that stay under '
                     'that (a first reclaim after a load) are left to it '
                     '(doc/source/badis.rst, "Stop 81: the bench\'s clock '
                     'and production\'s").'),
    cfg.IntOpt('sample_pages',
               default=400,
               min=1,
               help='Pages sampled per round by the page-sampling '
                    '("VMware") technique when it samples individual '
                    'pages (page_idle, kmod: KVM; the simulated '
                    'hypervisor). One round\'s working set is read '
                    'within S sqrt(p (1 - p) / n) (S: the guest\'s '
                    'memory, p: the part touched): 12.5 MiB of a 256 MiB '
                    'guest 60 % touched at n = 100, half that at 400. '
                    'n = 100 in the published prototype; 400 since stop '
                    '60: on the paged guest model the W1-W5 error fell '
                    'from 6.4 to 4.4 % of booked, 1.2 % of booked more '
                    'was saved, the guests ran as fast '
                    '(tests/benchmarks/results/badis50). The kernel '
                    'helper scans 1000 pages in 0.4 ms. Back-ends that '
                    'read every page (smaps) ignore it.'),
    cfg.StrOpt('calibration_sample_point',
               default='estimate',
               choices=[('estimate', 'the sample\'s own estimate: the '
                         'correction is right on average, off by one '
                         'reading\'s sampling error either way'),
                        ('upper', 'the upper end of the sample\'s 99.5 % '
                         'interval: the correction is at least what the '
                         'guest holds unseen, short by 2.6 standard '
                         'errors on average (the default until stop 60)')],
               advanced=True,
               help='With calibrate_pinned and a back-end that samples '
                    'pages (page_idle, kmod: KVM): which reading of the '
                    'first sample the pinned-page calibration counts as '
                    'seen (the correction is the guest\'s memory in use '
                    'less it). Taken at the upper end, the correction of '
                    'a 256 MiB guest sampled with 100 pages was about 30 '
                    'MiB short and the estimate under the need by as much, '
                    'so shrinks to it were read back: on the paged guest '
                    'model the guests ran 3 % slower with 40 % more '
                    'swap-ins than at the estimate (0.8 % slower at 512 '
                    'MiB and KVM costs), for 0.6-1.1 % of booked memory '
                    'saved more (tests/benchmarks/results/badis50). A '
                    'correction taken high is walked down by the '
                    'calibration probe only above '
                    'calibration_probe_min_fraction; below that it stays. '
                    'Back-ends that read every page (smaps) are exact '
                    'and not affected.'),
    cfg.BoolOpt('ws_curve',
                default=False,
                help='Estimate the sampled working set from Denning\'s '
                     'working-set function instead of one interval\'s '
                     'count (issue 13): the accessed state is cleared '
                     'once every ws_curve_rounds rounds and read without '
                     'clearing at every round and at the polls one, 2, '
                     '4, ... polls after the clear, giving W(w), the '
                     'memory touched within the last w seconds. The '
                     'estimate is '
                     'W(w*), w* the smallest window at which W grows by '
                     'at most swapin_bound_kb_s per second: an allocation '
                     'of W(w) makes the guest read back about dW/dw from '
                     'swap, whatever the order of its accesses (a slow '
                     'sweep gets its whole set, a skewed pattern its hot '
                     'part plus what the bound allows, cold data '
                     'nothing). Needs a back-end that can read an '
                     'interval without ending it (smaps, page_idle, '
                     'kmod); others keep the one-interval count. '
                     'doc/source/badis.rst has the statistics.'),
    cfg.IntOpt('swapin_bound_kb_s',
               default=1024,
               min=1,
               help='The swap-in rate (KiB per second) a working set is '
                    'allowed: the working set of a skewed pattern is '
                    'defined as the smallest allocation at which the guest '
                    'reads back at most this much from swap. Used by '
                    'ws_curve (the estimate) and by '
                    'calibration_probe_warm_slope (whether a probe would '
                    'evict memory in use). 1024 KiB/s is 256 pages a '
                    'second, 0.3-3 % of a vCPU at 10-100 us per swap-in.'),
    cfg.IntOpt('ws_curve_rounds',
               default=8,
               min=2,
               advanced=True,
               help='With ws_curve: rounds between two clears of the '
                    'accessed state; the longest window of the working-'
                    'set function. Longer sees slower sweeps and certifies '
                    'smaller slopes (the sampling back-ends need about '
                    '12 s per MiB/s at n = 100 pages of 448 MiB), but a '
                    'working set that shrank shows only half a cycle '
                    'after the next clear (from half a cycle on, the '
                    'running cycle alone decides when its own curve '
                    'meets the bound).'),
    cfg.FloatOpt('ws_curve_confidence',
                 default=0.95,
                 min=0.5,
                 max=0.999,
                 advanced=True,
                 help='With ws_curve and a back-end that samples n pages: '
                      'a window\'s slope counts as under the bound only '
                      'when the upper limit of this one-sided confidence '
                      'interval (Wilson, on the sampled pages first '
                      'touched in it) is.'),
    cfg.BoolOpt('ws_curve_fall_detect',
                default=False,
                advanced=True,
                help='With ws_curve: let the running cycle decide alone '
                     'before half a cycle when its working set at its '
                     'current age is significantly below the previous '
                     'cycle\'s at the same age (one-sided test at '
                     'ws_curve_confidence, and at least 10 % below), at '
                     'two consecutive rounds from the second on, and its '
                     'own curve has been flat for half its age: the '
                     'working set fell, and the previous cycle\'s longer '
                     'windows would hold the old size. A stationary or '
                     'staircase (moving hot set) curve has the same level '
                     'at the same age and does not trigger it. The reads '
                     'are cumulative since the clear, so a fall shows only '
                     'in the cycle after it (simulation, 8 rounds: a '
                     'falling sweep followed 7.4 s after the fall instead '
                     'of 8.4 s, a falling uniform set not earlier). Off by '
                     'default: not measured on a guest.'),
    cfg.IntOpt('ws_curve_short_rounds',
               default=0,
               min=0,
               advanced=True,
               help='With ws_curve: keep a second, short-cycle set of '
                    'ws_curve_short_pages random pages, cleared every '
                    'this many rounds (and at every clear of the curve) '
                    'and read at every round, to see a working set fall '
                    'before the curve\'s next clear. When every read of '
                    'its window from half the window on is below the '
                    'curve\'s level at the same age (one-sided Wilson '
                    'limits at ws_curve_confidence, and 10 % below) and '
                    'its own curve has stopped rising at the swap-in '
                    'bound, the estimate comes down to the short set\'s '
                    'upper limit and the curve starts a new cycle. Rises '
                    'are followed as without it. 0: off. Needs a '
                    'back-end that clears chosen pages (page_idle, '
                    'kmod); on smaps, which clears the whole process, '
                    'it has no effect (logged once per VM). '
                    'doc/source/badis.rst has the statistics.'),
    cfg.IntOpt('ws_curve_short_pages',
               default=400,
               min=10,
               advanced=True,
               help='With ws_curve_short_rounds: pages of the short-cycle '
                    'set, drawn outside the curve\'s own sample (and the '
                    '2 MiB regions of its pages on huge pages). Its level '
                    'has a standard error of at most S / (2 sqrt(n)) (S: '
                    'the guest memory; 11 MiB of 448 MiB at 400); a level '
                    'at half the memory is seen to fall once under 41 % '
                    'at 400 pages, 39 % at 200.'),
    cfg.IntOpt('referenced_offset_kb',
               default=0,
               min=0,
               help='KiB subtracted from the referenced size of the guest '
                    'RAM mapping, for back-ends that over-report it by a '
                    'constant (transparent huge pages on anonymous '
                    'backing add about 56 MiB).'),
    cfg.FloatOpt('vg_threshold',
                 default=0.95,
                 min=0.01,
                 max=1.0,
                 advanced=True,
                 help='V -> VG when the sampled WSS (with the pinned-page '
                      'correction) reaches this fraction of the current '
                      'allocation (0.95: within 5 %).'),
    cfg.FloatOpt('vg_headroom_fraction',
                 default=0.8,
                 min=0.0,
                 max=1.0,
                 advanced=True,
                 help='V -> VG also needs the allocation to hold less than '
                      'this fraction of the estimate\'s headroom '
                      '(headroom_kb, headroom_fraction) above the estimate '
                      '(0: vg_threshold alone). The balloon is sized to the '
                      'estimate plus that headroom, so with vg_threshold '
                      'alone a VM whose headroom is headroom_fraction of '
                      'its estimate sits within 95 % of its allocation at '
                      'its own target (every VM above 640 MiB with the '
                      'defaults), stays in VG, and its pinned-page '
                      'correction is never probed. A working set that '
                      'grows eats into the headroom first.'),
    cfg.IntOpt('vg_to_g_rounds',
               default=2,
               min=1,
               advanced=True,
               help='VG -> G after swap activity in this many consecutive '
                    'rounds (2 in the seed).'),
    cfg.IntOpt('g_to_v_rounds',
               default=2,
               min=1,
               advanced=True,
               help='G -> V after this many consecutive rounds without '
                    'swap activity (2 in the seed).'),
    cfg.IntOpt('vg_to_v_rounds',
               default=2,
               min=1,
               advanced=True,
               help='VG -> V after this many consecutive rounds without '
                    'swap activity in which the sampled WSS is below '
                    'vg_threshold again (the seed defines no exit from VG '
                    'other than G; this one is memmut\'s).'),
    cfg.IntOpt('initial_pinned_kb',
               default=0,
               min=0,
               advanced=True,
               help='Pinned-page correction (KiB) added to sampled '
                    'estimates until Badis learns one in the VG state. '
                    'The published prototype used a fixed margin of '
                    '190 MB instead of learning it.'),
    cfg.BoolOpt('calibrate_pinned',
                default=True,
                advanced=True,
                help='At a VM\'s first Badis round, raise the initial '
                     'pinned-page correction to the memory the guest '
                     'reports in use in its balloon statistics (actual - '
                     'usable, i.e. booked - MemAvailable) that the first '
                     'sample did not see (with a back-end that samples '
                     'pages, such as page_idle or kmod on KVM, what it saw '
                     'counts at the upper end of its 99.5 % interval, so '
                     'the sampling error does not raise the correction): '
                     'kernel slab, page '
                     'tables, an in-memory root file system, free-page '
                     'reserves. It '
                     'also counts inactive anonymous memory of a guest '
                     'that ran long before the agent saw it (memory '
                     'wasted, not a swapping VM) and is replaced by the '
                     'correction learned in VG at the first swapping '
                     'round.'),
    cfg.IntOpt('calibrate_rounds',
               default=1,
               min=1,
               advanced=True,
               help='With calibrate_pinned: calibrate over the first this '
                    'many sampled rounds and use the median of what they '
                    'did not see, which can fall as well as rise (until '
                    'a correction is learned in VG). 1: the first '
                    'sample alone, raised only. One sample taken while '
                    'the guest loads or stalls gave corrections of 50 '
                    'and 72 MiB for the same workload (issue 13). The '
                    'balloon is not shrunk while calibrating. With '
                    'ws_curve the unseen memory is counted against the '
                    'longest window read so far.'),
    cfg.IntOpt('calibration_defer_rounds',
               default=3,
               min=0,
               advanced=True,
               help='With calibrate_pinned: rounds the first calibration '
                    'waits at most while the guest\'s memory in use moves '
                    'during the sampled interval (it is loading its data: '
                    'what it reports and what sampling saw describe '
                    'different moments). The balloon is not shrunk while '
                    'it waits. Once this many rounds have passed the '
                    'calibration is taken anyway; taken while a load goes '
                    'on, it counts too little as unseen and the next '
                    'rounds shrink the VM under the memory it is taking '
                    '(Zipf from boot at 512 MiB on TCG: the load of 320 '
                    'MiB outlasted 3 one-second rounds, the balloon went '
                    'to 309 MiB under a guest taking 406 MiB). Statistics '
                    'older than the sample (in use below what sampling '
                    'saw) wait at most 3 rounds whatever this says.'),
    cfg.IntOpt('calibrate_window_rounds',
               default=1,
               min=1,
               max=16,
               advanced=True,
               help='With calibrate_pinned and a sampling back-end that '
                    'can read an interval without ending it (smaps, '
                    'page_idle, kmod): the first calibration reads what '
                    'the guest touched over this many rounds (the '
                    'accessed state is not cleared between them; the '
                    'balloon is held meanwhile), so that a working set '
                    'reused more slowly than one round is seen whole and '
                    'not counted as pinned. 1: one round\'s sample (the '
                    'paged guest model at 512 MiB counted 193 MiB of a '
                    '320 MiB sweep as pinned, issue 13). Ignored with '
                    'ws_curve, whose reads already span rounds: the '
                    'calibration counts against the longest window the '
                    'curve has read (calibrate_rounds spreads it over '
                    'more of them).'),
    cfg.BoolOpt('calibration_rebase',
                default=False,
                advanced=True,
                help='When the pinned-page calibration (calibrate_pinned) '
                     'raises the correction, raise the estimates already '
                     'in the moving average and its max-average window by '
                     'the same amount: they were sampled with the lower '
                     'correction. Without it the first rounds after the '
                     'calibration average those estimates with the new '
                     'one and may shrink the balloon below what the '
                     'calibration just showed the guest uses (issue 13: '
                     'Zipf from boot, 256 -> 224 MiB and 35 MiB read '
                     'back).'),
    cfg.BoolOpt('pinned_drop_rebase',
                default=True,
                advanced=True,
                help='When the pinned-page correction falls on evidence '
                     '(a balloon probe the guest lived through without '
                     'reading back, or the cap by the guest\'s own '
                     'statistics, pinned_used_bound), lower the estimates '
                     'already in the moving average and its max-average '
                     'window by the same amount, and keep that round\'s '
                     'demand from growing the balloon on the old ones. '
                     'Without it the balloon goes back up by the drop '
                     'after each probe and the next probe waits for the '
                     'max-average to come down (issue 13: load-then-idle '
                     'at 512 MiB gave 250 MiB of cold data back over 100 '
                     's). A drop by decay (pinned_relearn) is a guess and '
                     'does not rebase.'),
    cfg.BoolOpt('probe_chain',
                default=True,
                advanced=True,
                help='With pinned_drop_rebase: after a balloon probe that '
                     'lowered the pinned-page correction (the guest lived '
                     'through it for shrink_swapin_window without reading '
                     'back), start the next probe one '
                     'shrink_swapin_window later instead of time_slice + '
                     'shrink_swapin_window. The time slice is there for '
                     'the max-average to forget the estimates made with '
                     'the old correction, which the rebase already '
                     'lowered. Swap activity restarts the wait, and a '
                     'probe answered by swap-ins ends the run as before. '
                     'Cold data comes back in minutes instead of one '
                     'probe an hour (issue 13).'),
    cfg.BoolOpt('calibration_probe_early',
                default=True,
                advanced=True,
                help='Start the first balloon probe of the first-sample '
                     'pinned-page calibration (calibration_probe) '
                     'shrink_swapin_window after the calibration, or after '
                     'the last swap activity if later, instead of '
                     'time_slice + shrink_swapin_window. The time slice is '
                     'there for the max-average to forget estimates made '
                     'with an older correction; before the first probe '
                     'every estimate was made with this one. The '
                     'calibration counts data the guest loaded and left '
                     'cold as pinned, and without this it stays counted '
                     'for the whole first time slice (an hour by default). '
                     'A first probe answered by swap-ins doubles the next '
                     'wait as before. On by default since stop 82 (issue '
                     '13, tests/benchmarks/results/badis82_early: the paged '
                     'guest model at production\'s clock, load-then-idle '
                     'saved 26 -> 48 % of the booking).'),
    cfg.BoolOpt('probe_answer_rate',
                default=True,
                advanced=True,
                help='End a balloon probe of a pinned-page correction as '
                     'answered by swap-ins (the correction kept) only when '
                     'the guest read back faster than swapin_bound_kb_s '
                     'since the probe began. A guest that reads back more '
                     'slowly than that at the probe\'s balloon holds its '
                     'working set by the definition Badis uses: it has '
                     'lived through the probe. A hot set that moves slowly '
                     'reads back, at its next move, pages a probe made it '
                     'evict, well under the bound; without this those '
                     'read-backs answer the probe and keep a correction '
                     'that holds loaded data as pinned (issue 13). On by '
                     'default since stop 83 '
                     '(tests/benchmarks/results/badis83_rate).'),
    cfg.BoolOpt('probe_over_demand',
                default=True,
                advanced=True,
                help='Let a balloon probe of a pinned-page correction start '
                     'while the max-average holds the demand more than '
                     'pinned_probe_step_kb above the round\'s estimate, '
                     'at one step below that demand (not below the '
                     'estimate: a shrink faster than the max-average '
                     'allows). Without it no probe starts until the '
                     'max-average has come down to the estimate, which a '
                     'working set with recurring peaks (a hot set that '
                     'moves: each move is sampled twice) keeps from '
                     'happening for a time slice. A demand a slow start '
                     'paces or a hold keeps is not probed under (issue '
                     '13). On by default since stop 83 '
                     '(tests/benchmarks/results/badis83_rate).'),
    cfg.BoolOpt('probe_evicts_one_step',
                default=True,
                advanced=True,
                help='When the guest uses more than the estimate (memory '
                     'the pinned-page calibration stopped following, page '
                     'cache), size a balloon probe so that the guest gives '
                     'up one probe step of what it uses, at most the '
                     'allocation the lower correction would be given '
                     '(estimate and headroom), instead of one step under '
                     'the estimate: that made the guest give up the '
                     'excess too (sqlite3 on TCG: 13-17 MiB written to '
                     'swap for a 4 MiB step) and its read-back answered '
                     'the probe (issue 13, stop 90, '
                     'tests/benchmarks/results/badis90_probe).'),
    cfg.BoolOpt('probe_owns_readback',
                default=True,
                advanced=True,
                help='Count what a balloon probe made the guest write to '
                     'swap as the probe\'s: after the probe, while the '
                     'guest reads back only pages the probe made it evict '
                     '(memstore\'s reuse distance of each within what the '
                     'probe left in swap) and writes nothing, its rounds '
                     'are read as the probe\'s read-back, not as a '
                     'shortage. A page evicted at the probe\'s balloon '
                     'and read back at a larger one says nothing of the '
                     'larger one; read as a shortage it took the balloon '
                     'to the booking for 30-40 s (sqlite3 on TCG). '
                     'Without reuse distances only the read-back window '
                     'of a probe answered by swap-ins applies (issue 13, '
                     'stop 90, tests/benchmarks/results/badis90_probe).'),
    cfg.BoolOpt('probe_lowers_to_reached',
                default=True,
                advanced=True,
                help='A balloon probe whose balloon stopped short of the '
                     'size it asked (the guest could not give more within '
                     'its window) lowers the pinned-page correction by '
                     'that shortfall less than the step it tested: the '
                     'guest lived at the balloon it got to, nothing is '
                     'known of the one asked. Without it a probe asked '
                     '69 MiB of a guest whose balloon stopped at 96 MiB '
                     '(its base and hot '
                     'set) and left the estimate 23 MiB under them (TCG, '
                     'issue 13, stop 91).'),
    cfg.BoolOpt('probe_in_use_evidence',
                default=True,
                advanced=True,
                help='A balloon probe counts the guest\'s memory in use '
                     '(balloon statistics actual - usable, MemAvailable) '
                     'falling below what it was when the probe began as '
                     'evictions, as it counts swap-outs. A guest gives up '
                     'clean copies of what swap already holds (the swap '
                     'cache) without writing them: after a probe answered '
                     'by swap-ins it may hold tens of MiB of them, and the '
                     'next probes, counting swap-outs only, read "no '
                     'evictions" and keep the correction. The page cache '
                     'is not in use by this measure, so dropping it is no '
                     'such evidence (issue 13).'),
    cfg.BoolOpt('pinned_relearn',
                default=False,
                advanced=True,
                help='Re-estimate the pinned-page correction in quiet '
                     'rounds so that it can fall (pinned_decay, the '
                     'm_cur - sampled bound) and restore it after a shrink '
                     'followed by swap-ins (issue 13). False: the '
                     'correction only rises or is relearned in VG. Off by '
                     'default: on the W1-W5 benchmark it raised the mean '
                     'error (doc/source/badis.rst, issue 13).'),
    cfg.BoolOpt('shrink_guard',
                default=False,
                advanced=True,
                help='Never lower a sampled estimate (nor the demand) '
                     'below the allocation a VM swapped in at, in the '
                     'swapping round and shrink_hold_rounds rounds after '
                     '(issue 13). False: shrinks followed by swap-ins are '
                     'still counted (bad_shrinks), nothing is held. Off by '
                     'default: on the W1-W5 benchmark it raised the mean '
                     'error (doc/source/badis.rst, issue 13).'),
    cfg.FloatOpt('pinned_decay',
                 default=0.25,
                 min=0.0,
                 max=1.0,
                 advanced=True,
                 help='Fraction of the pinned-page correction above its '
                      'floor (the guest kernel\'s reservation, or '
                      'initial_pinned_kb) given back per decay step: with '
                      'pinned_decay_evidence one step per probe (see '
                      'there), else in every round without '
                      'swap activity whose sample was taken at a steady '
                      'allocation, outside the shrink guard. The '
                      'correction also never stays above m_cur - sampled '
                      'in such a round. A correction learned from data the '
                      'guest loaded and left cold, or from a sample taken '
                      'while it stalled on swap, is thus unlearned; a '
                      'right one is learned again in VG when the smaller '
                      'allocation swaps. 0: only the m_cur - sampled '
                      'bound.'),
    cfg.BoolOpt('pinned_decay_evidence',
                default=True,
                advanced=True,
                help='Pace the decay of the pinned-page correction by '
                     'evidence: take the next pinned_decay step only when '
                     'neither the correction nor swap activity changed '
                     'for time_slice + shrink_swapin_window seconds (the '
                     'lower estimate had time to shrink the balloon and '
                     'the shrink to show swap-ins), and only after the '
                     'previous step made the guest evict, without '
                     'swap-ins, below what the old correction asked for '
                     '(the pages it counted were cold data, not pinned); '
                     'a step without such evictions is taken back and the '
                     'wait doubles (up to 16 times); a shrink followed by '
                     'swap-ins restores the value before the last step '
                     'and keeps it as the correction\'s floor. False: '
                     'decay by pinned_decay in every quiet round (branch '
                     'patterns).'),
    cfg.BoolOpt('shrink_noise_filter',
                default=True,
                advanced=True,
                help='Swap-ins in the first round after a shrink while the '
                     'corrected sample is below vg_threshold of the '
                     'allocation neither arm the shrink guard nor count as '
                     'a bad shrink: a guest reclaiming what the balloon '
                     'took reads a few hot pages back (measured: 0.1-10 MiB '
                     'after 12-32 MiB shrinks of a 256 MiB guest 35 MiB '
                     'above its working set). A shortage keeps swapping '
                     'the next round and arms the guard then.'),
    cfg.BoolOpt('pinned_probe',
                default=False,
                advanced=True,
                help='Test whether the pinned-page correction is too high '
                     'with the balloon instead of lowering the estimate: '
                     'in a quiet V round (the correction, swap activity '
                     'and the last probe at least time_slice + '
                     'shrink_swapin_window old, times a wait that doubles '
                     'after each probe that did not lower it, up to 16), '
                     'the balloon is set, without headroom, to the '
                     'estimate with a correction one step lower (the '
                     'larger of pinned_probe_step_kb and pinned_decay of '
                     'what is above its floor) for shrink_swapin_window '
                     'seconds, while the estimate, max-average and demand '
                     'stay unchanged; the lower correction is kept only if '
                     'the guest evicted below the old estimate and read '
                     'nothing back from swap. A correction that is right '
                     'thus costs no estimate error, only the swap-ins of '
                     'one probe per period. Replaces the decay of '
                     'pinned_relearn when both are on. Only with on-demand '
                     'allocation (local mutualization does not probe). Off '
                     'by default: every probe of the right correction of '
                     'the W1-W5 guest cost swap-ins (vm_over median 1.043 '
                     'against 1.022), and the pattern suite did not '
                     'improve (doc/source/badis.rst, '
                     'tests/benchmarks/results/badis13-s3).'),
    cfg.FloatOpt('calibration_probe_min_fraction',
                 default=0.15,
                 min=0.0,
                 max=1.0,
                 advanced=True,
                 help='With calibration_probe: probe the calibration only '
                      'while the correction is at least this fraction of '
                      'the booking above its floor (the guest kernel\'s '
                      'reservation; 0: always). All a series of probes '
                      'could give back is that gap; a small one is not '
                      'worth the swap-ins of a probe of a right correction '
                      '(issue 13; on phases its one 4 MiB probe of a 21 MiB '
                      'gap cost 14-21 MiB of swap-ins). 0.15 by default '
                      'since stop 50, with no_shrink_below_estimate and '
                      'hindsight_rounds (tests/benchmarks/results/badis37 '
                      'and badis38: the three together, paired vm_over '
                      '-0.032 +- 0.013 over 30 runs of the pattern suite '
                      'on TCG, memory saved unchanged, W1-W5 error 2.2 '
                      'points lower).'),
    cfg.FloatOpt('calibration_probe_max_gap_fraction',
                 default=1.0,
                 min=0.05,
                 max=1.0,
                 advanced=True,
                 help='With calibration_probe: a probe\'s step (which '
                      'doubles after each probe that lowered the '
                      'correction) is at most this fraction of the '
                      'correction\'s gap above its floor, and at least '
                      'pinned_probe_step_kb (1: no cap). Below 1 the last '
                      'steps bisect what is left instead of overshooting '
                      'the guest\'s need by up to a whole doubled step, '
                      'which the guest then reads back (issue 13).'),
    cfg.BoolOpt('calibration_reprobe',
                default=True,
                advanced=True,
                help='With calibration_probe: go on probing the '
                     'pinned-page correction after a probe was answered '
                     'by swap-ins or a VG round learned it, each answered '
                     'probe doubling the wait before the next (up to 16 '
                     'times time_slice + shrink_swapin_window) and '
                     'starting again from the smallest step. A probe '
                     'answered while the guest was still settling (its '
                     'data just loaded) otherwise keeps cold data '
                     'counted as pinned for good (issue 13: no '
                     'learned-forever corrections). On by default since '
                     'stop 51: at 512 MiB on TCG the first probe came '
                     'while a 320 MiB load settled in every run (16 % of '
                     'the booking saved); with it 27-35 % '
                     '(tests/benchmarks/results/badis40).'),
    cfg.IntOpt('calibration_reprobe_answers',
               default=2,
               min=0,
               advanced=True,
               help='With calibration_reprobe: after this many probes in '
                    'a row answered by swap-ins at the same pinned-page '
                    'correction, probe it again only once the sampled '
                    'part of the estimate (the estimate less the '
                    'correction) has fallen at least pinned_probe_step_kb '
                    'below what it was when the last of them began, or '
                    'the correction changed otherwise (0: no limit). The '
                    'same probe under the same conditions gets the same '
                    'answer, and each costs the guest the read-back of '
                    'what it evicted (issue 13: a skewed guest\'s '
                    'rarely touched tail, 14 MiB per probe on the paged '
                    'guest model, at every doubling wait for the '
                    'guest\'s life; TCG, Zipf 0.8 for 300 s: vm_over '
                    '1.016 and 1.013 with 0, 1.008 and 1.009 with 2, '
                    'tests/benchmarks/results/badis45).'),
    cfg.IntOpt('calibration_probe_warm_rounds',
               default=4,
               min=0,
               help='With calibration_probe or pinned_probe and a sampling '
                    'back-end that can read an interval without ending it '
                    '(smaps, page_idle, kmod): before each balloon probe of '
                    'the pinned-page correction, read what the guest '
                    'touches over this many rounds (the accessed state not '
                    'cleared between them; no sample for Badis in the '
                    'rounds after the first). What it touched beyond the '
                    'first round is memory the correction counts that is '
                    'in use, only touched less often than once a round (a '
                    'skewed pattern\'s tail, a moving hot set): the probe '
                    'does not test below it, and when what is left above '
                    'is under calibration_probe_min_fraction of the '
                    'booking there is no probe (the wait doubles as after '
                    'a probe answered by swap-ins, unless the sampled part '
                    'of the estimate falls by pinned_probe_step_kb: then '
                    'the next read comes at once). Data loaded and left '
                    'cold is touched in no round and is probed as before. '
                    '0: off; otherwise at least 2. 4 by default since stop '
                    '61 (issue 13, tests/benchmarks/results/badis51: Zipf '
                    '0.8 at 256 MiB on TCG 1.044-1.048 -> 1.003-1.008 '
                    'vm_over; the paged guest model\'s pattern suite, 10 '
                    'seeds, paired -0.005 +- 0.003 over every case, 0.2 '
                    'points of the booking saved less, W1-W5 unchanged; '
                    'the first probe of a series waits for the read).'),
    cfg.IntOpt('calibration_follow_rounds',
               default=5,
               min=0,
               help='With calibrate_pinned: after the first-sample '
                    'calibration, whenever the guest reports more memory '
                    'in use (balloon actual - usable) than when the '
                    'correction was last calibrated, by more than the '
                    'statistics\' noise, in a round with no swap activity '
                    'and no probe running, calibrate again: the '
                    'correction rises to what the guest uses and the '
                    'round\'s sample did not see (never falls here), and '
                    'the moving average is raised with it; the balloon '
                    'is held (no shrink) in such a round and the next. '
                    'Once the memory in use has not risen for this many '
                    'rounds the '
                    'load is over and the calibration stops following '
                    'it. For guests that go on loading data after the '
                    'agent first read them (a database or key-value store '
                    'filled from boot); the calibration probe then tests '
                    'the new data like the old. 0: off. 5 by default '
                    'since stop 62 (issue 13, tests/benchmarks/results/'
                    'badis52: the paged guest model\'s kv pattern, 90 MiB '
                    'read at random as slowly as redis on TCG, from boot '
                    '1.047 -> 1.000 vm_over, 21 -> 26 % saved; W1-W5 '
                    'unchanged at 256 and 512 MiB).'),
    cfg.BoolOpt('calibration_probe_warm_slope',
                default=True,
                help='With calibration_probe_warm_rounds: no balloon probe '
                     'either when, at the end of the read over rounds, the '
                     'guest was still touching memory it had not touched '
                     'before in the read faster than swapin_bound_kb_s. '
                     'Shrunk to what it touched within the read, the guest '
                     'would read back about that much a second (Denning\'s '
                     'working-set function: the slope at a window is the '
                     'fault rate of that allocation), so the correction is '
                     'in use by the definition of a working set under that '
                     'bound: a key-value store read at random, a hot set '
                     'that moves. For back-ends that sample pages the '
                     'lower end of the slope\'s interval at '
                     'ws_curve_confidence is taken: only what the sample '
                     'shows holds a probe back. On by default since stop '
                     '62 (tests/benchmarks/results/badis52: redis on TCG, '
                     'probes answered by 7-30 MiB of read-back skipped).'),
    cfg.BoolOpt('calibration_probe_warm_budget',
                default=False,
                help='With calibration_probe_warm_rounds, in place of '
                     'calibration_probe_warm_slope when the read\'s slope '
                     'is known: the series of balloon probes after a read '
                     'over rounds lowers the pinned-page correction by at '
                     'most untouched x swapin_bound_kb_s / slope, where '
                     'untouched is the part of the correction the read '
                     'did not see touched and slope the rate at which the '
                     'guest touched memory the read had not seen at its '
                     'end: each KiB of the untouched memory is touched at '
                     'slope / untouched a second on average, so giving up '
                     'that much is read back at about the bound. No probe '
                     'when less than calibration_probe_min_fraction of the '
                     'booking is left of it. The slope test refuses a '
                     'probe of a large, slowly read table (a database '
                     'serving part of its capacity) whose coldest rows '
                     'could go; this lets it give them up and still keeps '
                     'a table read at random (a key-value store) whole. '
                     'Off by default: the pages it gives up are read back '
                     'at up to the bound, which costs what a swap-in '
                     'costs; on the TCG bed (a swap-in of a few '
                     'milliseconds) a paced sqlite3 served its lookups '
                     '23-38 % slower for under a point of memory in 120 s, '
                     'and on the paged guest model at production\'s clock '
                     'it changed nothing (four 60 s rounds should see '
                     'most of a slowly read table touched). Turn it on where '
                     'swapin_bound_kb_s is what the guests can bear '
                     '(issue 13, stop 90, '
                     'tests/benchmarks/results/badis90_probe).'),
    cfg.BoolOpt('calibration_probe',
                default=True,
                advanced=True,
                help='Test the pinned-page correction set by the first-sample '
                     'calibration (calibrate_pinned) with the balloon, as '
                     'pinned_probe does, but only while nothing has shown '
                     'it is needed: probing stops for good once a probe is '
                     'answered by swap-ins or a VG round learns the '
                     'correction (unless calibration_reprobe). The '
                     'calibration reads the guest\'s '
                     'balloon statistics, which count data the guest '
                     'loaded and then left cold as in use exactly like '
                     'pinned pages; only shrinking the balloon tells them '
                     'apart (the guest evicts cold data without reading it '
                     'back; swap-ins end a probe, swap growth alone does '
                     'not). Its first step is pinned_probe_step_kb, doubled '
                     'after each probe that lowered the correction (a right '
                     'calibration costs the read-back of the smallest '
                     'step). Once a probe has lowered it, the calibration no '
                     'longer floors the cap of pinned_used_bound. Costs at '
                     'most one probe\'s swap-ins per VM whose calibration '
                     'was right. Only with on-demand allocation. On by '
                     'default since stop 36: where the calibration of the '
                     'pattern suite\'s load-then-idle guest counted 140 '
                     'MiB of cold data as pinned, it saved 16-46 % of its '
                     'booking instead of 1-3 % (the oracle 48 %); paired '
                     'vm_over over the suite -0.007 to +0.020 (five '
                     'versions, two slots), W1-W5 no worse '
                     '(tests/benchmarks/results/badis23, badis24).'),
    cfg.IntOpt('pinned_probe_step_kb',
               default=16 * 1024,
               min=1,
               advanced=True,
               help='Smallest step (KiB) by which a balloon probe '
                    '(pinned_probe) lowers the pinned-page correction under '
                    'test; the default is the smallest balloon change '
                    '(min_change_kb). When the guest\'s balloon statistics '
                    'say it uses less than the estimate, the probe asks '
                    'for one step below what it uses instead (a balloon '
                    'above that evicts nothing) and tests a correction '
                    'lowered by as much.'),
    cfg.FloatOpt('probe_readback_fraction',
                 default=0.0,
                 min=0.0,
                 max=1.0,
                 advanced=True,
                 help='A balloon probe of the pinned-page correction '
                      '(pinned_probe, calibration_probe) counts as '
                      'answered by swap-ins, and the correction as needed, '
                      'only once the guest has read back at least this '
                      'fraction of what it evicted since the probe began; '
                      'below it the probe runs to the end of its '
                      'shrink_swapin_window and, if the guest evicted, '
                      'lowers the correction. A right correction leaves '
                      'the guest only pages in use to evict, and it reads '
                      'them back at once; cold data counted as pinned is '
                      'evicted and stays out, and a first page read back '
                      'should not keep it counted for good. 0: any swap '
                      'activity answers the probe.'),
    cfg.FloatOpt('probe_burst_s',
                 default=3.0,
                 min=0.0,
                 advanced=True,
                 help='For a balloon probe of the pinned-page correction '
                      'that is the guest\'s first reclaim (it has evicted '
                      'nothing since the agent first saw it), swap activity '
                      'within this many seconds of the probe\'s first does '
                      'not answer it: the probe holds the balloon and goes '
                      'on; swap-ins after that, or in its last round, '
                      'answer it as needed. 0: the first swap-in answers '
                      'every probe. That first reclaim is blind (loading '
                      'its data touched every page, so the kernel cannot '
                      'tell the hot ones from the cold and evicts in load '
                      'order): the guest reads back what it needs in one '
                      'burst and then evicts cold pages; later reclaims '
                      'see the accessed bits. Costs up to this long of '
                      'swap-ins once per VM where the correction was '
                      'right. The default, the shrink_swapin_window\'s, '
                      'judges that probe by its last round.'),
    cfg.BoolOpt('probe_rise_written',
                default=True,
                advanced=True,
                help='While a balloon probe runs, a swap-in whose reuse '
                     'distance is within what the guest wrote to swap '
                     'since the probe began is the probe\'s doing, not a '
                     'rise of the working set: the round stays quiet for '
                     'the other rules (shrink guard, floors, hindsight, '
                     'modes) and only the probe sees it. Off: only '
                     'distances within the probe\'s step below the '
                     'estimate are, though the balloon starts above the '
                     'estimate (headroom) and the guest\'s reclaim frees '
                     'more than asked.'),
    cfg.BoolOpt('stall_filter',
                default=False,
                advanced=True,
                help='Learn or raise no pinned-page correction in a '
                     'swapping VG round whose access sample was taken '
                     'while the guest stalled on swap: its swap-in rate '
                     'was at least stall_swapin_rate_kb, or its sample '
                     'fell below the last sampled round\'s while the '
                     'swap-in rate rose. Such a sample reads low (the '
                     'guest touches fewer pages per second while it waits '
                     'for swap), so m_cur - sampled reads high: on the '
                     'W3,s benchmark guest a correction of 89 MiB was '
                     'learned this way for a true 72 MiB. The round is '
                     'logged ("kept: sample taken while the guest '
                     'stalled on swap"). Off by default: on the W1-W5 '
                     'benchmark it never had a learning to block, and on '
                     'the pattern suite it did not improve the memory '
                     'saved nor the S_more error (doc/source/badis.rst, '
                     'tests/benchmarks/results/badis13-s3).'),
    cfg.IntOpt('stall_swapin_rate_kb',
               default=4096,
               min=0,
               advanced=True,
               help='Swap-in rate (KiB/s over the round) at or above which '
                    'a round\'s sample is taken as stalled (see '
                    'stall_filter): at 50-100 us per 4 KiB page read '
                    'back, 4 MiB/s keeps a vCPU waiting 5-10 % of the '
                    'time, about as much as its sample then under-reads. '
                    '0: only the falling-sample sign.'),
    cfg.FloatOpt('shortage_grow_fraction',
                 default=0.0,
                 min=0.0,
                 max=1.0,
                 advanced=True,
                 help='In a round the state machine counts as short (swap-'
                      'ins or swap growth, VG/G), the demand goes at least '
                      'this fraction of the way from the allocation to the '
                      'booking: the size of a rise is not known from '
                      'outside until the guest has evicted for it, and '
                      'growing by what it evicted per round keeps it '
                      'swapping for rise/evicted rounds. Only the short '
                      'rounds\' demand: the estimate and the max-average '
                      'are unchanged, so the first quiet round gives the '
                      'excess back. 0: grow by the shortage estimate '
                      'only.'),
    cfg.FloatOpt('shortage_grow_out_ratio',
                 default=0.0,
                 min=0.0,
                 advanced=True,
                 help='With shortage_grow_fraction: the jump towards the '
                      'booking only in a short round whose swap-outs are '
                      'at least this many times its swap-ins, i.e. new '
                      'data pushing old data out (a rise of the working '
                      'set). A shortage at a size the balloon was shrunk '
                      'to, or a hot set moving onto data it left, reads '
                      'back about as much as it evicts; a jump there is '
                      'given back at the next quiet round and the guest '
                      'evicts again. 0: every short round.'),
    cfg.BoolOpt('shortage_ramp',
                default=True,
                advanced=True,
                help='In a short round (swap-ins or swap growth, VG/G) '
                     'that follows a short round, the demand is at least '
                     'the allocation (the balloon then grows by its '
                     'headroom), and the estimate plus what it asks above '
                     'the allocation once more when it asks more: a '
                     'rising working set is estimated from what the guest '
                     'read back in a round, so it grows by one round of '
                     'swap-ins per round; this asks for the next round\'s '
                     'growth ahead. Only the demand: the first quiet '
                     'rounds give the excess back.'),
    cfg.BoolOpt('rise_hold_no_grow',
                default=True,
                advanced=True,
                help='For one time slice after a rise rule asked ahead '
                     '(the ramp or the shortage jump) the demand stays at '
                     'least each round\'s estimate. With this, a round '
                     'without swap activity asks no more than keeps the '
                     'balloon where it is: in G such a round estimates '
                     'the allocation itself, and asking it grows the '
                     'balloon by its headroom with nothing swapped. '
                     'False: such a round asks its estimate, as before '
                     'stop 87.'),
    cfg.BoolOpt('vg_entry_grow',
                default=False,
                advanced=True,
                help='In the round whose sampled working set reached the '
                     'allocation (V -> VG) before any swap activity, the '
                     'demand is at least the estimate plus its rise since '
                     'the last round: a working set rising by new data '
                     'fills the balloon\'s headroom, which sampling sees, '
                     'a round or two before the guest swaps, while the '
                     'demand (a maximum of moving averages) still carries '
                     'the rounds before the rise. Only that round\'s '
                     'demand: the next quiet rounds give the excess back '
                     '(issue 13).'),
    cfg.FloatOpt('warmup_slices',
                 default=0.0,
                 min=0.0,
                 advanced=True,
                 help='A VM is not shrunk until the agent has seen it for '
                      'this many time slices (time_slice): the demand is '
                      'the maximum of the moving average over one slice, '
                      'and before a slice of rounds is seen it is the '
                      'maximum over whatever moment the VM or the agent '
                      'started in (a guest loading its data, its first '
                      'second). Growing is not held. 0: shrink from the '
                      'first round.'),
    cfg.BoolOpt('vg_no_shrink',
                default=False,
                advanced=True,
                help='A round that ends in VG (the sampled working set '
                     'reached vg_threshold of the allocation, or the guest '
                     'swaps) never shrinks the VM: its demand is a '
                     'maximum of the moving average, which still carries '
                     'the lower samples of the rounds before a rise, so '
                     'without this a round that sees the rise in its '
                     'sample before any swap activity can shrink the '
                     'balloon into it. Shrinking resumes once VG hands '
                     'over to V. Off: the demand alone decides.'),
    cfg.BoolOpt('no_shrink_while_allocating',
                default=False,
                advanced=True,
                help='A round during whose sampled interval the guest\'s '
                     'memory not free (balloon statistics actual - '
                     'unused) rose by more than 4 MiB or 2 % of the '
                     'allocation never shrinks the VM: the guest is '
                     'allocating (loading its data, a working set '
                     'rising), and the sample and the moving average '
                     'describe the memory it had, not the memory it is '
                     'taking. Needs the guest\'s balloon statistics; '
                     'growing is not held. Off: the demand alone decides.'),
    cfg.BoolOpt('no_shrink_below_estimate',
                default=True,
                advanced=True,
                help='A round never shrinks the VM below its own '
                     'working-set estimate (plus the headroom): the '
                     'max-average the balloon follows lags a rise of the '
                     'estimate by average_window rounds, and a shrink on '
                     'it evicts what the guest uses now. It never grows '
                     'the balloon: one high estimate is not a shortage. '
                     'Off: the max-average alone decides. On by default '
                     'since stop 50 (Zipf 1.2 on TCG 1.090 -> 1.041; see '
                     'calibration_probe_min_fraction for the three '
                     'changes measured together).'),
    cfg.BoolOpt('pinned_used_bound',
                default=True,
                advanced=True,
                help='Cap the pinned-page correction, in a quiet round '
                     'at a steady allocation, at what the guest reports '
                     'not free (balloon statistics actual - unused) less '
                     'what sampling saw at least, when those statistics '
                     'did not move during the interval: pinned pages are '
                     'in use and were not referenced, so they fit there. '
                     'Never below the first-sample calibration '
                     '(calibrate_pinned) nor the correction\'s floor. A '
                     'correction learned in VG from a sample that '
                     'under-read (the guest stalled on swap) is otherwise '
                     'kept for good unless pinned_relearn is on. Needs '
                     'the guest\'s balloon statistics. With a back-end '
                     'that reads every page (smaps, TCG only) the cap acts '
                     'at once; with one that samples sample_pages pages '
                     '(page_idle, kmod: KVM) "at least" is the sample\'s '
                     '99.5 % lower end and the cap acts after three such '
                     'rounds in a row, at the largest of their bounds, so '
                     'it removes only a correction that far too high '
                     '(56 MiB of a 448 MiB guest at 100 pages half used; '
                     'more pages narrow it).'),
    cfg.BoolOpt('shrink_floor',
                default=True,
                advanced=True,
                help='Do not shrink a VM again into an allocation it was '
                     'shown to swap at (issue 13): after a shrink followed '
                     'by swap-ins, the demand stays at least the '
                     'allocation the guest swapped at (the balloon adds '
                     'its headroom above it) until a quiet round\'s '
                     'sample falls shrink_floor_fall below the sample of '
                     'the round that set it, or a quiet round\'s balloon '
                     'statistics show the guest left that fraction of the '
                     'floor free, or shrink_floor_rounds rounds pass '
                     'without swap activity. Also: swap '
                     'activity in two consecutive rounds is a shortage '
                     '(V -> VG) even while the balloon moves; without '
                     'this, a balloon that shrinks every round has all its '
                     'swap-ins taken for reclaim noise. On by default since '
                     'the pattern suite at 120 s (doc/source/badis.rst): '
                     'no memory lost, load-then-idle\'s shrink-and-swap '
                     'cycle gone, W1-W5 unchanged.'),
    cfg.FloatOpt('shrink_floor_fall',
                 default=0.15,
                 min=0.01,
                 max=0.99,
                 advanced=True,
                 help='Fraction by which a quiet round\'s corrected sample '
                      'must be below the sample at the bad shrink to '
                      'release the shrink floor (a working set that fell), '
                      'and fraction of the floor the guest must leave free '
                      '(balloon statistics: MemFree) to release it. '
                      'The sample of a skewed pattern or a moving hot set '
                      'varies by up to a third from round to round at a '
                      'steady working set.'),
    cfg.BoolOpt('shrink_floor_estimate',
                default=False,
                advanced=True,
                help='Make the shrink floor a lower bound of the '
                     'working-set estimate and of WSS^max_avg (which the '
                     'controller packs on), not only of the balloon\'s '
                     'demand: a guest that swapped at an allocation has a '
                     'working set of at least that. Off by default: on the '
                     'pattern suite it brought the estimate of a guest '
                     'whose sample under-reads to within 4 % of booked (9 '
                     '% before), but W1-W5\'s estimate error rose where the '
                     'floor outlives a step down (doc/source/badis.rst, '
                     'stop 34).'),
    cfg.BoolOpt('shrink_floor_estimate_confirmed',
                default=True,
                advanced=True,
                help='Make the shrink floor a lower bound of the '
                     'working-set estimate and of WSS^max_avg once a '
                     'shortage confirmed it: the guest swapped again while '
                     'the floor held its balloon (a step down that swapped, '
                     'a shortage at the floor). A floor learned from one '
                     'bad shrink bounds only the balloon\'s demand (a '
                     'W1-W5 sweep\'s: counted, it held the estimate '
                     'above a working set that had stepped down). On the '
                     'pattern suite it lowered the error of guests whose '
                     'sample under-reads at the same throughput; '
                     'shrink_floor_estimate counts every floor '
                     '(doc/source/badis.rst, stop 39).'),
    cfg.BoolOpt('shrink_floor_estimate_raise',
                default=False,
                advanced=True,
                help='A shrink floor counted in the working-set estimate '
                     '(shrink_floor_estimate_confirmed) counts with its '
                     'raise (shrink_floor_raise_kb) above the allocation '
                     'the guest swapped at, as before stop 73. False (the '
                     'default): the estimate and WSS^max_avg count only '
                     'that allocation, what the guest showed it needs '
                     'more than; the raise is a margin for the balloon, '
                     'whose demand and the controller\'s packing '
                     '([consolidation] pack_on_shrink_floor) keep the '
                     'whole floor. On W1-W5 on TCG the raise held the '
                     'estimate 50-60 MiB above a working set that had '
                     'stepped up (mean error 4.36 -> 3.86 % of booked '
                     'without it, three repeats each; doc/source/'
                     'badis.rst, stop 73).'),
    cfg.BoolOpt('shrink_floor_hold_at_demand',
                default=False,
                advanced=True,
                help='A shrink floor counted in the working-set estimate '
                     '(shrink_floor_estimate_confirmed) holds the '
                     'balloon, and so steps down and can be raised, only '
                     'while the demand sits at it, not while the '
                     'max-average above it still carries the rounds '
                     'before a shortage (the balloon is then where the '
                     'demand put it and a step of the floor tests '
                     'nothing). On the pattern suite it kept a moving hot '
                     'set from stepping its floor away under a high '
                     'balloon; on W1-W5 the steps, waiting for the '
                     'max-average, held a stepped-down sweep up '
                     '(doc/source/badis.rst, stop 40).'),
    cfg.BoolOpt('shrink_floor_hold_in_use',
                default=False,
                advanced=True,
                help='With shrink_floor: a floor one of whose steps down '
                     '(shrink_floor_step_kb) was answered by swap-ins '
                     'neither steps down again nor lapses '
                     '(shrink_floor_rounds) in a round in which the guest '
                     'reports more than 1 - shrink_floor_fall of it in use '
                     '(balloon actual - usable: page cache not counted). '
                     'A floor the steps have found is then not tested '
                     'again by swap-in bursts while the guest\'s own '
                     'figures support it; steps and lapse resume once '
                     'they do not (issue 13).'),
    cfg.BoolOpt('shrink_floor_held_shortage',
                default=False,
                advanced=True,
                help='With shrink_floor: swap-ins at an allocation that '
                     'did not shrink since the last round, while the floor '
                     'held the demand (after the shortage that set it '
                     'ended) and the guest\'s last sample asked for less '
                     'than the floor are a shortage of the floor, which is '
                     'raised '
                     '(shrink_floor_raise_kb), whether or not the guest\'s '
                     'balloon statistics showed memory free, also in a '
                     'round run on swap activity between two sampled ones '
                     'and when Geiger reads the swap-ins as a rise of the '
                     'working set. Without it such a round '
                     'leaves the floor where it is, and a moving hot set '
                     'whose sample reads a fraction of its need goes '
                     'through one more shrink-and-swap cycle per missed '
                     'round (issue 13). A sample at or above the floor is '
                     'a rise, which the shortage rules grow for.'),
    cfg.BoolOpt('shrink_floor_step_moved',
                default=False,
                advanced=True,
                help='With shrink_floor_step_kb: a step down of a shrink '
                     'floor is twice the last one only when the balloon '
                     'went down since the last one was taken; otherwise '
                     'it is the same size. A floor whose headroom keeps '
                     'the balloon at the booking, or one under the '
                     'guard\'s hold, holds the demand while the balloon '
                     'does not move, and its doubling steps, testing '
                     'nothing, took a floor at the booking down by 124 '
                     'MiB in five steps before the balloon fell 100 MiB '
                     'at once (issue 13).'),
    cfg.IntOpt('shrink_floor_rounds',
               default=60,
               min=0,
               advanced=True,
               help='Rounds without swap activity after which the shrink '
                    'floor lapses (0: only a fall releases it): nothing '
                    'learned from one shortage stays forever.'),
    cfg.IntOpt('shrink_floor_step_kb',
               default=16 * 1024,
               min=0,
               advanced=True,
               help='KiB by which a shrink floor is first lowered after '
                    'shrink_floor_step_rounds rounds without swap '
                    'activity in which it held the balloon; each later '
                    'step is twice the last, and a '
                    'step followed by swap-ins raises the floor back and '
                    'doubles the rounds before the next (0: no steps; the '
                    'floor holds until a fall, the guest\'s free memory or '
                    'shrink_floor_rounds release it). Releases a floor set '
                    'while a guest loaded its data in a few steps instead '
                    'of shrink_floor_rounds (doc/source/badis.rst, stop '
                    '37).'),
    cfg.IntOpt('shrink_floor_step_rounds',
               default=4,
               min=1,
               advanced=True,
               help='Rounds without swap activity, in which the floor '
                    'held the balloon, before each step down of a shrink '
                    'floor (shrink_floor_step_kb); doubled '
                    'after a step that was followed by swap-ins, up to '
                    'shrink_floor_rounds.'),
    cfg.IntOpt('shrink_floor_raise_kb',
               default=65536,
               min=0,
               advanced=True,
               help='KiB above the allocation that swapped by which a '
                    'shortage raises a shrink floor that held the '
                    'balloon (the floor itself too low); each later such '
                    'raise is twice the last while the floor lasts (0: '
                    'the floor goes only to where '
                    'the guest swapped, one balloon headroom a shortage, '
                    'the behaviour before stop 41). Never above the '
                    'booking. 64 MiB: on the pattern suite the guests ran '
                    '4-6 % faster than with 0, for as much memory saved, '
                    'W1-W5 not worse (doc/source/badis.rst, "Raises by '
                    'default").'),
    cfg.BoolOpt('shrink_floor_low_reference',
                default=False,
                advanced=True,
                help='A shortage of a live shrink floor keeps the lower of '
                     'the floor\'s reference sample and the shortage '
                     'round\'s sample (which counts the pages the guest '
                     'swapped back in), so that the next quiet round\'s '
                     'sample does not read as a fallen working set and '
                     'release the floor. Without it only a shortage that '
                     'raised the floor above the allocation that swapped '
                     '(shrink_floor_raise_kb) keeps the lower one.'),
    cfg.BoolOpt('shrink_floor_step_back',
                default=False,
                advanced=True,
                help='Swap activity after a step down of a shrink floor '
                     'that held the demand takes the step back, restarts '
                     'the steps at shrink_floor_step_kb and doubles the '
                     'wait before the next one, whether or not the guest '
                     'has memory free in that round. Without it only a '
                     'shrink followed by swap-ins, or swap-ins with no '
                     'memory free, move the floor, and a moving hot set '
                     'that reads back, after the balloon grew again, the '
                     'pages evicted at a step lets the steps go on '
                     'doubling.'),
    cfg.IntOpt('shrink_slow_start_kb',
               default=4096,
               min=0,
               advanced=True,
               help='Slow start for shrinks (KiB; 0: off): a descent of the '
                    'balloon begins with a step of this size below where '
                    'the balloon is (never less than the balloon '
                    'controller\'s min_change_kb, [badis] on demand or '
                    '[mutualization] with local mutualization, which would '
                    'not make a smaller move) and doubles it each round it '
                    'goes on without swap activity; any swap activity holds '
                    'that round\'s shrink to the first step and starts the '
                    'next descent from it, as does a round whose demand '
                    'does not fall. An estimate that under-reads then meets '
                    'its first swap-ins a few MiB down instead of a '
                    'quarter of the booking down. Growth is not limited. '
                    'A descent by D takes about log2(D / step) rounds.'),
    cfg.IntOpt('hindsight_rounds',
               default=30,
               min=0,
               advanced=True,
               help='Shrinks judged in hindsight (rounds; 0: off): after '
                    'a shrink (a descent in steps is one), what the guest '
                    'writes to swap and reads back is counted for this '
                    'many rounds; once it has read back '
                    'hindsight_fraction of what it wrote (at least '
                    'hindsight_min_kb written), the memory taken was in '
                    'use, and until the horizon the shrink floor '
                    '(shrink_floor) is raised to the lowest allocation '
                    'since the shrink plus what the guest has read back '
                    '(never above the allocation before the shrink); a '
                    'floor so set is not passed by the calibration probe, '
                    'and its steps down test it as any floor\'s. Catches '
                    'what the '
                    'guard\'s shrink_swapin_window misses: the tail of a '
                    'skewed pattern read back over minutes, a moving hot '
                    'set coming back to what was taken (issue 13). A '
                    'shrink below the demand Badis asked for (the host '
                    'reclaiming the VM under a shortage) is not judged. '
                    'A floor so set is released when what the guest uses '
                    'plus what it has in swap falls below 1 - 2 x '
                    'shrink_floor_fall of it (a guest that freed its '
                    'data). 30 by default since stop 50 (the hot set '
                    'from boot on TCG 1.127 -> 1.047; see '
                    'calibration_probe_min_fraction for the three '
                    'changes measured together).'),
    cfg.FloatOpt('hindsight_fraction',
                 default=0.25,
                 min=0.01,
                 max=1.0,
                 advanced=True,
                 help='With hindsight_rounds: the share of what the guest '
                      'wrote to swap after a shrink that, read back, makes '
                      'the shrink bad.'),
    cfg.IntOpt('hindsight_min_kb',
               default=16 * 1024,
               min=0,
               advanced=True,
               help='With hindsight_rounds: a shrink is judged only once '
                    'the guest wrote at least this much (KiB) to swap '
                    'after it.'),
    cfg.BoolOpt('hindsight_recent_only',
                default=False,
                advanced=True,
                help='With hindsight_rounds: count only what the guest '
                     'reads back of the pages evicted since the shrink '
                     '(memstore\'s reuse distances tell them apart), not '
                     'pages that went to swap before it (a hot set moving '
                     'to data evicted while the guest loaded it). Without '
                     'memstore\'s distances every swap-in counts.'),
    cfg.IntOpt('swapin_budget_kb_s',
               default=0,
               min=0,
               advanced=True,
               help='Swap-in budget (KiB/s; 0: off): while a VM\'s swap-in '
                    'rate, averaged over swapin_budget_rounds rounds, is '
                    'above this, Badis does not shrink its balloon (growth '
                    'on shortage goes on); shrinks resume when the average '
                    'falls under half of it. Swap-ins of a working set that '
                    'rose above the size before the last shrink do not '
                    'count. The working set of a skewed or moving pattern '
                    'is the smallest allocation at which the guest swaps in '
                    'less than a bound (swapin_bound_kb_s is the same idea '
                    'for ws_curve): this stops the shrink-swap-grow cycles '
                    'of such patterns once they have cost that much '
                    '(doc/source/badis.rst, "The swap-in budget").'),
    cfg.FloatOpt('swapin_budget_rounds',
                 default=30.0,
                 min=0.001,
                 advanced=True,
                 help='Time constant of the swap-in budget\'s average, in '
                      'rounds of round_interval (30: half an hour at 60 s '
                      'rounds).'),
    cfg.FloatOpt('reentry_horizon_rounds',
                 default=0.0,
                 min=0.0,
                 advanced=True,
                 help='Re-entries (with memstore\'s reuse distances only; '
                      '0: off): a swap-in of a page the guest evicted more '
                      'than this many rounds ago is not a shortage while '
                      'the pace of such swap-ins stays under '
                      'swapin_bound_kb_s (between episodes from the second '
                      'on, and within one; see reentry_window_rounds), '
                      'unless the round\'s access sample fills the '
                      'allocation. A hot set that moves onto data left '
                      'long ago reads it back whatever the allocation, and '
                      'growing for it buys nothing; a guest that lacks '
                      'memory reads back pages it evicted recently, which '
                      'count as before. The first move of a hot set moving '
                      'faster than the bound is left out too; measured in '
                      'doc/source/badis.rst, "Re-entries" (stop 71): a '
                      'trade-off, hence off.'),
    cfg.FloatOpt('reentry_window_rounds',
                 default=60.0,
                 min=0.001,
                 advanced=True,
                 help='Re-entries: how far back, in rounds of '
                      'round_interval, the episodes before this one count '
                      'towards their pace; an episode alone counts once it '
                      'read back more than swapin_bound_kb_s x (its length '
                      '+ this window); once counted, re-entries count until '
                      'their mean rate (this time constant) is under half '
                      'the bound.'),
    cfg.BoolOpt('shrink_floor_steady',
                default=True,
                advanced=True,
                help='Swap-ins at an allocation that did not move over the '
                     'round, below the booking, with no memory free, set or '
                     'raise the shrink floor too, not only swap-ins within '
                     'shrink_swapin_window of a shrink: the shrinks that '
                     'reached that allocation earlier went too far '
                     '(doc/source/badis.rst, stop 37).'),
    cfg.BoolOpt('shrink_rise_from_descent',
                default=True,
                advanced=True,
                help='Swap-ins after a shrink count as a rise of the working '
                     'set (not a bad shrink) only when Geiger puts the '
                     'working set above the allocation before the first '
                     'step of the descent that led there (steps less than '
                     'shrink_swapin_window apart), not merely above the '
                     'last step\'s start. False: the last step\'s start '
                     '(before stop 43), under which a guest that swapped '
                     'three steps down often counted no bad shrink and got '
                     'no shrink floor.'),
    cfg.FloatOpt('shrink_swapin_window',
                 default=180.0,
                 min=0.0,
                 advanced=True,
                 help='Seconds after a shrink of the balloon during which '
                      'swap-ins count against it: the shrink is counted '
                      '(Estimate.bad_shrinks, logged) and holds the '
                      'estimate for the next shrink hold.'),
    cfg.IntOpt('shrink_hold_rounds',
               default=2,
               min=0,
               advanced=True,
               help='Rounds after a round with swap-ins during which a '
                    'sampled estimate may not fall below the allocation the '
                    'guest swapped at (no shrink on sampled evidence: a '
                    'guest stalled on swap touches fewer pages per second). '
                    'Also the hold after a first shrink followed by '
                    'swap-ins; each further one doubles it.'),
    cfg.IntOpt('shrink_hold_max_rounds',
               default=4,
               min=0,
               advanced=True,
               help='Longest hold after shrinks followed by swap-ins '
                    '(rounds); a shrink with no swap-ins within '
                    'shrink_swapin_window resets the hold to '
                    'shrink_hold_rounds.'),
    cfg.FloatOpt('pinned_max_free_fraction',
                 default=0.03,
                 min=0.0,
                 max=1.0,
                 advanced=True,
                 help='A swapping VG round teaches the pinned-page '
                      'correction only when the guest\'s free memory '
                      '(balloon statistics "unused") is at most this '
                      'fraction of its allocation. A guest short of memory '
                      'keeps only its free-page watermarks free (3-5 MiB '
                      'on a 256 MiB guest); one that reads back pages '
                      'evicted during an earlier shortage while it has '
                      'free memory is not using all of its allocation, and '
                      'm_cur - sampled would count its idle memory as '
                      'pinned.'),
    # Never read: Geiger's percentile and bucket width are memstore's
    # ([memstore] ghost_percentile, histogram_bucket_pages).
    cfg.FloatOpt('geiger_percentile',
                 default=95.0,
                 min=1.0,
                 max=100.0,
                 deprecated_for_removal=True,
                 deprecated_since='0.2',
                 deprecated_reason='Never used: Geiger\'s percentile is '
                                   '[memstore] ghost_percentile.',
                 advanced=True,
                 help='Unused; see [memstore] ghost_percentile.'),
    cfg.IntOpt('geiger_bucket_kb',
               default=4096,
               min=4,
               deprecated_for_removal=True,
               deprecated_since='0.2',
               deprecated_reason='Never used: the reuse-distance histogram '
                                 'bucket is [memstore] '
                                 'histogram_bucket_pages.',
               advanced=True,
               help='Unused; see [memstore] histogram_bucket_pages.'),
    cfg.IntOpt('swap_in_threshold_kb',
               default=4096,
               min=1,
               advanced=True,
               help='A VM without a swap monitor counts as swapping in a '
                    'round when its balloon statistics show at least this '
                    'many KiB read back from swap since the previous '
                    'round. Also the swap traffic that makes a VM whose '
                    'allocation grew since the previous round count as '
                    'full at its new size: when it wrote at least this '
                    'many KiB to swap over the round, Geiger\'s estimate '
                    'starts from the new allocation instead of the one the '
                    'pages read back were evicted at.'),
    cfg.IntOpt('swap_growth_rate_kb',
               default=2048,
               min=0,
               advanced=True,
               help='A VM counts as short of memory in a round when what '
                    'it keeps in swap (written out and not read back) grew '
                    'at least this many KiB per second since the previous '
                    'round, at an allocation that did not shrink: it is '
                    'evicting to make room for memory it touches, the '
                    'first sign of a rising working set, seen before '
                    'Geiger\'s swap-ins. It is then estimated at least at '
                    'its allocation plus that growth. A rate, so that a '
                    'guest that slowly trades cold anonymous pages for page '
                    'cache does not count. 0 disables it.'),
    cfg.IntOpt('major_fault_threshold',
               default=0,
               min=0,
               advanced=True,
               help='Also count a round as swapping when the guest\'s '
                    'major faults grew by at least this many; 0 disables '
                    'it (major faults include page-cache misses).'),
    cfg.IntOpt('fallback_min_grow_kb',
               default=4096,
               min=0,
               advanced=True,
               help='Without reuse distances, a swapping VM is estimated '
                    'at its allocation plus the KiB swapped in during the '
                    'round, and at least this much.'),
    cfg.IntOpt('fallback_probe_kb',
               default=32768,
               min=0,
               advanced=True,
               help='Without reuse distances, a swapping VM asks for this '
                    'much more than its allocation at first, then twice '
                    'the step each round it was granted and still swaps '
                    '(never more than the swap-in estimate): the swap-in '
                    'count includes every re-read of the same pages, and '
                    'taken whole it sends a VM that lacks a little to its '
                    'booked size, at its neighbours\' expense. 0 disables '
                    'it.'),
    cfg.IntOpt('average_window',
               default=5,
               min=1,
               help='Number n of last estimates in the moving average '
                    '(n = 5 in the seed).'),
    cfg.FloatOpt('time_slice',
                 default=3600.0,
                 min=1.0,
                 help='Seconds s of the sliding time slice over which the '
                      'maximum of the moving average, WSS^max_avg, is '
                      'taken (1 hour in the seed).'),
    cfg.FloatOpt('time_slice_max_slices',
                 default=15.0,
                 min=0.0,
                 help='Longest time slice a VM\'s own may grow to while '
                      'its shortages recur, in time slices (time_slice; '
                      '0 or at most 1: off; time_slice_max, when set, '
                      'gives it in seconds instead). When a VM starts '
                      'swapping again more than one slice after its last '
                      'shortage, the balloon shrunk by at least 10 % '
                      'between, its time slice becomes time_slice_factor '
                      'times the interval between the two, so that the '
                      'peak is held across the next recurrence (a moving '
                      'hot set, a periodic job); it halves back after '
                      'twice its length without a shortage. Changes when '
                      'memory is given back, not what is estimated. A '
                      'shortage while the balloon is below what Badis '
                      'asked for (Algorithm 1 lending the VM\'s memory '
                      'to another) is the host\'s and does not count. '
                      'At 15 (15 h at the 1 h time_slice) the test '
                      'bed\'s W1-W5 and pattern suite lost less '
                      'throughput, for 1-3 points of booked memory '
                      '(doc/source/badis.rst, "A VM\'s own time slice in '
                      'slices"). Recurrences '
                      'further apart than twice the longest slice do not '
                      'count: for a daily job, set it to at least 36 '
                      'slices (1.5 days).'),
    cfg.FloatOpt('time_slice_max',
                 default=0.0,
                 min=0.0,
                 help='Seconds: the longest a VM\'s own time slice may '
                      'grow to (see time_slice_max_slices, which it '
                      'replaces when set; at most time_slice: off). 0: '
                      'time_slice_max_slices times time_slice.'),
    cfg.FloatOpt('time_slice_factor',
                 default=1.5,
                 min=1.0,
                 advanced=True,
                 help='Multiple of the interval between two recurring '
                      'shortages that a VM\'s time slice grows to (see '
                      'time_slice_max_slices).'),
    cfg.BoolOpt('time_slice_from_first',
                default=False,
                advanced=True,
                help='With time_slice_max_slices: the round the agent '
                     'first saw a VM counts as a shortage before its '
                     'first one, so the first shortage after the balloon '
                     'shrunk by 10 % from what the VM had then already '
                     'lengthens its time slice (to time_slice_factor '
                     'times the time since that round): a periodic job '
                     'keeps its peak from its first recurrence instead '
                     'of its second. False: the slice lengthens only '
                     'when a second shortage follows one.'),
    cfg.BoolOpt('time_slice_reuse',
                default=True,
                advanced=True,
                help='With time_slice_max_slices: while a VM\'s time '
                     'slice is longer than time_slice, a round without '
                     'swap activity whose moving average is back at the '
                     'highest since the last shortage, after falling 10 '
                     '% below it, counts as a recurrence: the slice held '
                     'the working set through its fall, so it is kept '
                     'instead of halving back twice its length after the '
                     'last shortage (which lets the next recurrence find '
                     'the balloon shrunk). False: only shortages keep '
                     'the slice long, as before stop 77.'),
    cfg.IntOpt('headroom_kb',
               default=32768,
               min=0,
               deprecated_opts=[cfg.DeprecatedOpt('headroom_kb',
                                                  group='consolidation')],
               help='KiB added to a VM\'s WSS^max_avg when sizing it, at '
                    'least (see headroom_fraction; the larger applies): by '
                    'the agent for its balloon target and by the '
                    'controller when packing it, so that a VM is packed on '
                    'the memory its balloon gives it. The sum never '
                    'exceeds the VM\'s booked memory. Replaces '
                    '[consolidation] headroom_kb.'),
    cfg.FloatOpt('headroom_fraction',
                 default=0.05,
                 min=0.0,
                 max=10.0,
                 deprecated_opts=[cfg.DeprecatedOpt('headroom_fraction',
                                                    group='consolidation')],
                 help='Fraction of a VM\'s WSS^max_avg added to it when '
                      'sizing it, when larger than headroom_kb. Replaces '
                      '[consolidation] headroom_fraction.'),
    cfg.FloatOpt('max_step_fraction',
                 default=0.25,
                 min=0.01,
                 max=1.0,
                 help='Largest balloon change of one round for on-demand '
                      'allocation, as a fraction of the booked memory.'),
    cfg.FloatOpt('max_grow_fraction',
                 min=0.01,
                 max=1.0,
                 help='Largest balloon growth of one round for on-demand '
                      'allocation, as a fraction of the booked memory. A '
                      'VM that grows is short of memory now and swaps '
                      'until it has it, so growth may be allowed larger '
                      'steps than shrinking. Unset: max_step_fraction.'),
    cfg.IntOpt('min_change_kb',
               default=16384,
               min=0,
               help='Balloon changes smaller than this many KiB are not '
                    'made.'),
    cfg.IntOpt('floor_kb',
               default=131072,
               min=0,
               help='No VM is ballooned below this many KiB (or its booked '
                    'memory, if smaller).'),
    cfg.FloatOpt('zballoond_decrease_fraction',
                 default=0.05,
                 min=0.001,
                 max=0.5,
                 advanced=True,
                 help='Zballoond baseline: each round the VM is shrunk by '
                      'this fraction of Committed_AS (5 % in the seed).'),
    cfg.FloatOpt('zballoond_change_fraction',
                 default=0.05,
                 min=0.0,
                 max=1.0,
                 advanced=True,
                 help='Zballoond baseline: a relative change of '
                      'Committed_AS larger than this restarts the descent '
                      'from Committed_AS.'),
    cfg.IntOpt('selfballoon_reserve_kb',
               default=0,
               min=0,
               advanced=True,
               help='Self-ballooning baseline: KiB added to Committed_AS '
                    'to form the goal size.'),
    cfg.IntOpt('selfballoon_down_hysteresis',
               default=8,
               min=1,
               advanced=True,
               help='Self-ballooning baseline: a shrinking VM moves by '
                    '1/N of its excess per round (8 in Xen\'s driver).'),
]


def list_opts():
    return {group: opts}
