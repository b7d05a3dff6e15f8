"""Results of a simulator run: JSON, CSV time series and PNG plots.

Only aggregate figures are written (per mode and per step over all hosts),
never per-VM data from the trace.
"""

import csv
import json
import logging
import os

import numpy as np

LOG = logging.getLogger(__name__)

SERIES = ('active_hosts', 'lower_bound', 'migrations', 'memory_migrations',
          'in_flight', 'memory_violations', 'cpu_overloads', 'power_w',
          'used_memory_mb', 'allocated_memory_mb', 'shortfall_mb',
          'short_vms')


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, float):
        # six decimals for the figures of everyday size; six significant
        # digits below 1, where Neat's SLAV (~1e-7) and ESV live and six
        # decimals would write 0
        if obj != 0.0 and abs(obj) < 1.0:
            return float('%.6g' % obj)
        return round(obj, 6)
    return obj


def write_json(path, data):
    with open(path, 'w') as f:
        json.dump(_jsonable(data), f, indent=2, sort_keys=True)
        f.write('\n')


def write_timeseries(path, series_by_mode):
    """One row per step: time and, per mode, the aggregate series."""
    modes = sorted(series_by_mode)
    if not modes:
        return
    n = min(len(series_by_mode[m]['time_h']) for m in modes)
    with open(path, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['time_h'] + ['%s_%s' % (m, k) for m in modes
                                 for k in SERIES])
        t = series_by_mode[modes[0]]['time_h']
        for i in range(n):
            row = ['%.4f' % t[i]]
            for m in modes:
                for k in SERIES:
                    row.append('%.6g' % series_by_mode[m][k][i])
            w.writerow(row)


def plot(out_dir, series_by_mode, metrics_by_mode, prefix=''):
    """PNG plots; returns the files written ([] without matplotlib).

    ``prefix`` goes before each file name (``active_hosts.png``,
    ``migrations.png``, ``memory.png``).
    """
    try:
        import matplotlib
        matplotlib.use('Agg')
        from matplotlib import pyplot as plt
    except ImportError:
        LOG.warning('matplotlib is not installed: no plots written')
        return []
    files = []
    modes = sorted(series_by_mode)
    colors = {'booked': 'tab:red', 'wss': 'tab:blue'}

    def save(fig, name):
        path = os.path.join(out_dir, prefix + name)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        files.append(path)

    fig, ax = plt.subplots(figsize=(9, 4))
    for m in modes:
        s = series_by_mode[m]
        ax.plot(s['time_h'], s['active_hosts'], lw=0.8, color=colors.get(m),
                label='%s (mean %.2f)' % (
                    m, metrics_by_mode[m]['avg_active_hosts']))
        if 'lower_bound' in s:
            ax.plot(s['time_h'], s['lower_bound'], lw=0.6, ls=':',
                    color=colors.get(m), label='%s lower bound (mean %.2f)'
                    % (m, metrics_by_mode[m].get('lower_bound_hosts', 0)))
    ax.set_xlabel('hours')
    ax.set_ylabel('active hosts')
    ax.set_title('Active hosts: packing on booked memory vs WSS^max_avg')
    ax.legend()
    save(fig, 'active_hosts.png')

    fig, ax = plt.subplots(figsize=(9, 4))
    for m in modes:
        s = series_by_mode[m]
        ax.plot(s['time_h'], np.cumsum(s['migrations']), lw=1.0,
                color=colors.get(m), label='%s: all' % m)
        ax.plot(s['time_h'], np.cumsum(s['memory_migrations']), lw=1.0,
                ls='--', color=colors.get(m), label='%s: caused by memory'
                % m)
    ax.set_xlabel('hours')
    ax.set_ylabel('migrations (cumulative)')
    ax.set_yscale('symlog')
    ax.set_title('Migrations and those caused by memory')
    ax.legend(loc='upper left', bbox_to_anchor=(1.01, 1.0), fontsize='small')
    save(fig, 'migrations.png')

    fig, ax = plt.subplots(figsize=(9, 4))
    for m in modes:
        s = series_by_mode[m]
        ax.plot(s['time_h'], s['allocated_memory_mb'] / 1024.0, lw=0.8,
                color=colors.get(m), label='%s: packed memory' % m)
    m0 = modes[0]
    ax.plot(series_by_mode[m0]['time_h'],
            series_by_mode[m0]['used_memory_mb'] / 1024.0, lw=0.8,
            color='black', label='used memory (trace)')
    ax.set_xlabel('hours')
    ax.set_ylabel('GiB')
    ax.set_yscale('log')
    ax.set_title('Memory VMs are packed on vs memory they use')
    ax.legend()
    save(fig, 'memory.png')
    return files


def summary_lines(results):
    """Human-readable lines for the end of a run."""
    lines = []
    for mode, m in sorted(results['modes'].items()):
        lines.append(
            '%-6s active hosts %.2f (lower bound %.2f) | migrations %d '
            '(caused by memory %d, %.2f %%; mean %.0f s, %d spilled) | '
            'memory overload %.4f %% of host time | CPU overload %.2f %% '
            '| energy %.1f kWh'
            % (mode, m['avg_active_hosts'], m.get('lower_bound_hosts', 0),
               m['migrations'], m['memory_caused_migrations'],
               100 * m['memory_caused_share'],
               m.get('mean_migration_s', 0), m.get('migrations_spilled', 0),
               100 * m['memory_overload_host_time_fraction'],
               100 * m['cpu_overload_host_time_fraction'],
               m['energy_kwh']))
        if 'slav' in m:
            lines.append(
                '       %.3f migrations per VM-day | Neat\'s OTF %.3f %%, '
                'PDM %.4f %%, SLAV %.3g, ESV %.3g kWh (%s power)'
                % (m['migrations_per_vm_day'], 100 * m['otf'],
                   100 * m['pdm'], m['slav'], m['esv'],
                   m.get('power_model', 'linear')))
        if 'shortfall_vm_interval_fraction' in m:
            lines.append(
                '       shortfall in %.2f %% of VM-intervals (mean %.0f '
                'MiB, p99 %.0f MiB, %.1f GiB-h) | rejected VMs %d | '
                'missing readings %d (carried %d)'
                % (100 * m['shortfall_vm_interval_fraction'],
                   m['shortfall_mean_mib'], m['shortfall_p99_mib'],
                   m['shortfall_gib_hours'], m['rejected_vm_count'],
                   m['readings']['missing_readings'],
                   m['readings']['carried_forward']))
        if m.get('remote_memory_fraction'):
            lines.append(
                '       remote memory (up to %.0f %% of a host): %d host '
                'round(s) left to it, served %.3f %% of host time (%.1f '
                'GiB-h, peak %.1f GiB), memory overload not served %.4f %% '
                'of host time'
                % (100 * m['remote_memory_fraction'],
                   m['absorbed_host_rounds'],
                   100 * m['remote_memory_host_time_fraction'],
                   m['remote_memory_gib_hours'],
                   m['remote_memory_peak_gib'],
                   100 * m['memory_unserved_host_time_fraction']))
    comp = results.get('comparison', {})
    ratio = comp.get('active_host_ratio_booked_over_wss')
    if ratio:
        lines.append('active-host ratio booked / wss: %.2fx (lower bounds: '
                     '%.2fx)' % (ratio, comp.get(
                         'lower_bound_ratio_booked_over_wss', 0.0)))
    return lines
