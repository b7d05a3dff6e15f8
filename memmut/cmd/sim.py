"""memmut-sim: trace-driven consolidation, booked memory vs WSS^max_avg.

Without ``--trace`` it replays a seeded synthetic trace (a few seconds);
with ``--trace bitbrains-rnd-2013-7.tar.gz`` the real Bitbrains month,
read in place. Both packing modes go through the same consolidation code
as the controller (``[consolidation]`` options); hosts and the power model
come from ``[simulator]``. Writes results.json, timeseries.csv and PNG
plots to the output directory and prints a summary.
"""

import dataclasses
import datetime
import os
import sys
import time

from oslo_config import cfg
from oslo_log import log as logging

from memmut.conf import simulator as sim_conf
from memmut.consolidation import loader
from memmut import service
from memmut.simulator import engine
from memmut.simulator import report
from memmut.simulator import synthetic
from memmut.simulator import trace as trace_mod

LOG = logging.getLogger(__name__)


class Progress:
    """One status line on stderr, redrawn at most every 0.5 s."""

    def __init__(self, enabled, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = hasattr(self.stream, 'isatty') and self.stream.isatty()
        self.last = 0.0
        self.last_pct = -1
        self.t0 = time.monotonic()

    def mode(self, label):
        self.label = label
        self.t0 = time.monotonic()
        self.last_pct = -1

    def __call__(self, done, total, snap):
        if not self.enabled:
            return
        now = time.monotonic()
        pct = int(100 * done / max(1, total))
        if self.tty:
            if now - self.last < 0.5 and done < total:
                return
        elif pct // 10 == self.last_pct // 10 and done < total:
            return
        self.last, self.last_pct = now, pct
        rate = done / max(1e-9, now - self.t0)
        eta = (total - done) / rate if rate else 0.0
        line = ('[%s] step %d/%d (%3d%%)  active hosts %d  migrations %d '
                '(memory %d)  eta %ds' % (self.label, done, total, pct,
                                          snap['active_hosts'],
                                          snap['migrations'],
                                          snap['memory_migrations'], eta))
        if self.tty:
            self.stream.write('\r' + line.ljust(100))
            if done >= total:
                self.stream.write('\n')
        else:
            self.stream.write(line + '\n')
        self.stream.flush()


def default_output_dir():
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime(
        '%Y%m%dT%H%M%SZ')
    return os.path.join('results', 'sim-' + stamp)


def load_trace(conf, progress):
    if conf.trace:
        if progress.enabled:
            sys.stderr.write('reading %s ...\n' % conf.trace)
        return trace_mod.load_bitbrains(conf.trace, part=conf.trace_part)
    s = conf.simulator
    return synthetic.generate(s.synthetic_vms, s.synthetic_days,
                              s.synthetic_seed,
                              profile=s.synthetic_profile)


def run(conf):
    """Run memmut-sim with parsed options; returns the results dict."""
    modes = [m.strip() for m in conf.mode if m.strip()]
    bad = [m for m in modes if m not in engine.MODES]
    if not modes or bad:
        raise ValueError('--mode takes booked and/or wss, not %s'
                         % ', '.join(bad or ['nothing']))
    progress = Progress(conf.progress)
    tr = load_trace(conf, progress)
    for opt, name, group in (('host_cpu_mhz', 'host_cpu_mhz', 'simulator'),
                             ('host_memory_mb', 'host_memory_mb',
                              'simulator'),
                             ('host_count', 'host_count', 'simulator'),
                             ('wss_error', 'wss_error', 'simulator'),
                             ('wss_lag', 'wss_lag', 'simulator'),
                             ('interval', 'interval', 'consolidation')):
        value = getattr(conf, opt)
        if value is not None:
            conf.set_override(name, value, group=group)
    settings = engine.settings_from_conf(conf, conf.duration, tr.step)
    if conf.burn_in:
        burn = int(round(conf.burn_in * 3600.0 / tr.step))
        if burn >= tr.n_steps - 2:
            raise ValueError('--burn-in %g h leaves nothing of the %g h '
                             'trace to account' % (
                                 conf.burn_in,
                                 tr.n_steps * tr.step / 3600.0))
        settings = dataclasses.replace(settings, start_steps=burn,
                                       burn_in_steps=burn)
    spec_effective = settings.spec.effective()
    out_dir = conf.output_dir or default_output_dir()
    os.makedirs(out_dir, exist_ok=True)
    metrics, series = {}, {}
    for mode in modes:
        progress.mode(mode)
        metrics[mode], series[mode] = engine.simulate(tr, mode, settings,
                                                      progress)
    results = {
        'trace': tr.summary(),
        'hosts': {
            'cpu_mhz': settings.hosts.cpu_mhz,
            'memory_mb': settings.hosts.memory_mb,
            'count': settings.hosts.count or tr.n_vms,
            'idle_watts': settings.hosts.idle_watts,
            'max_watts': settings.hosts.max_watts,
        },
        'algorithms': {k: {'name': n, 'parameters': p}
                       for k, (n, p) in spec_effective.items()},
        'plan': {
            'underload_combination': settings.plan.underload_combination,
            'max_overload_moves': settings.plan.max_overload_moves,
            'underload_grace_rounds': settings.plan.underload_grace_rounds,
        },
        'memory': {
            'wss_average_window': settings.wss_average_window,
            'wss_time_slice_s': settings.wss_time_slice,
            'headroom_mb': settings.headroom_mb,
            'headroom_fraction': settings.headroom_fraction,
            'missing_carry_seconds': settings.missing_carry_seconds,
            'wss_error': settings.wss_error.describe(),
        },
        'rounds': {
            'interval_s': settings.interval,
            'sampling_step_s': tr.step,
            'migration_bandwidth_mb_s': settings.bandwidth_mb_s,
            'migration_concurrency': settings.migration_concurrency,
            'migration_incoming_concurrency':
                settings.migration_incoming_concurrency,
            'migration_parallel': settings.migration_parallel,
            'round_pacing': settings.round_pacing,
            'migration_cpu_mhz': settings.migration_cpu_mhz,
            'burn_in_hours': settings.burn_in_steps * tr.step / 3600.0,
        },
        'modes': metrics,
        'comparison': engine.compare(metrics),
    }
    report.write_json(os.path.join(out_dir, 'results.json'), results)
    report.write_timeseries(os.path.join(out_dir, 'timeseries.csv'), series)
    files = report.plot(out_dir, series, metrics) if conf.plots else []
    results['files'] = ([os.path.join(out_dir, 'results.json'),
                         os.path.join(out_dir, 'timeseries.csv')] + files)
    return results


EXIT_BAD_INPUT = 2


def fail(message):
    """Bad input (trace, options): one line on stderr, exit code 2."""
    sys.stderr.write('memmut-sim: error: %s\n' % message)
    sys.exit(EXIT_BAD_INPUT)


def main(argv=None, conf=None):
    try:
        conf = service.prepare(sys.argv[1:] if argv is None else argv,
                               conf=conf,
                               cli_opts={None: sim_conf.cli_opts})
    except cfg.Error as e:
        fail(str(e).splitlines()[0] if str(e) else repr(e))
    except SystemExit as e:
        # argparse and oslo.config have printed why (bad option or value,
        # exit 1 or 2); --help exits 0. Bad input is always 2 here.
        if e.code not in (0, None):
            sys.exit(EXIT_BAD_INPUT)
        raise
    try:
        results = run(conf)
    except (trace_mod.TraceError, loader.AlgorithmError, ValueError,
            OSError) as e:
        fail(str(e).replace('\n', ' '))
    except KeyboardInterrupt:
        sys.stderr.write('\nmemmut-sim: interrupted\n')
        sys.exit(130)
    print('memmut-sim: %s' % results['trace']['source'])
    for line in report.summary_lines(results):
        print('  ' + line)
    print('results in %s' % os.path.dirname(results['files'][0]))
    if conf.plots and not any(f.endswith('.png') for f in results['files']):
        print('(no plots: matplotlib is not installed)')
    return 0


if __name__ == '__main__':
    main()
