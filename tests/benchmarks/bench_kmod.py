"""Benchmark: memmut-wss (the DKMS kernel helper), accuracy and cost.

One TCG guest (Debian's 6.1 kernel, 512 MiB, 1 vCPU) with the DKMS-built
memmut_wss.ko and wss-probe in its initramfs (tests/harness/kmod.py):

* cost: ``wss-probe cost P R 64`` for P = 100, 1 000, 10 000 sampled
  pages: CPU time (CLOCK_THREAD_CPUTIME_ID, median of R rounds) of the
  random call that picks and clears P pages and of the call that tests
  them again, on a 64 MiB mapping whose pages were all touched in between;
* accuracy: memwork runs W1, W2, W3, W4 and W5 back to back
  (``memmut.evaluation.workloads.shape_schedule``, peak ``--peak-mib``,
  mapped once at the peak, alloc=s) while ``wss-probe watch`` samples it every
  ``--interval-ms`` through /dev/memmut_wss (``--pages`` random pages, 100
  = ``[badis] sample_pages``'s default) and, in the same interval and the
  same guest, the smaps back-end's way: clear_refs at the start,
  Referenced of the mapping at the end. Each interval is compared with the
  true working set (intervals that lie inside one step; those that span a
  step change are reported apart, against the larger of the two steps).

The guest is booted with QEMU directly (no libvirt needed; the guest is
the same as the functional tests'). Writes tests/benchmarks/results/
kmod.json, kmod.md and kmod.png. About 5 minutes per repeat
(``--repeats``, default 3: one guest boot each, each holding the TCG lock
by itself, so run it without ``flock``); the headline figures get a 95 %
interval over the repeats (tests/benchmarks/discipline.py)::

    tools/build-kmod.sh
    .tox/functional/bin/python -m tests.benchmarks.bench_kmod --repeats 3

Under TCG every guest instruction is emulated, so the measured cost per
page is that of an emulated kernel: an overestimate of the cost on real
hardware, used as such for the extrapolation to 10 VMs of 16 GiB.
Not part of CI.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import tempfile
import time

from memmut.evaluation import workloads
from tests.benchmarks import discipline
from tests.harness import guest as guestmod
from tests.harness import kmod

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, 'results')
SHAPES = ('W1', 'W2', 'W3', 'W4', 'W5')
COST_PAGES = (100, 1000, 10000)


def boot(img, cmdline, log, timeout):
    args = ['qemu-system-x86_64', '-accel', 'tcg', '-m', '512', '-smp', '1',
            '-nographic', '-no-reboot', '-kernel', img.kernel,
            '-initrd', img.initrd, '-append',
            'console=ttyS0 quiet panic=-1 ' + cmdline]
    with open(log, 'wb') as out:
        subprocess.run(args, stdout=out, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL, timeout=timeout, check=True)
    with open(log, errors='replace') as f:
        return f.read()


def accuracy(text, schedule, shape_of_step, map_kb):
    rows = []
    for w, true_kb, step, clean in kmod.intervals(text, map_kb, 0.5):
        rows.append({
            't0': w['t0'], 't1': w['t1'], 'shape': shape_of_step[step],
            'clean': clean, 'true_kb': true_kb, 'kmod_kb': w['est_kb'],
            'smaps_kb': w['smaps_kb'], 'sampled': w['sampled'],
            'accessed': w['accessed'], 'notifiers': w['notifiers'],
            'clear_ns': w['clear_ns'], 'test_ns': w['test_ns'],
            'kmod_err': abs(w['est_kb'] - true_kb) / map_kb,
            'smaps_err': abs(w['smaps_kb'] - true_kb) / map_kb})
    return rows, pooled_accuracy(rows)


def cost(text, round_s, vms):
    out = {}
    for d in guestmod.parse_lines(text, 'KMOD-COST'):
        if d['event'] != 'pass':
            continue
        per_round_ns = d['random_call_ns'] + d['call_ns']
        out[d['pages']] = {
            'test_call_ns': d['call_ns'],
            'test_ns_per_page': d['ns_per_page'],
            'random_call_ns': d['random_call_ns'],
            'random_ns_per_page': d['random_ns_per_page'],
            'round_ns': per_round_ns,
            'round_ns_per_page': per_round_ns / d['pages'],
            # a Badis round = one random (clearing) call + one test call
            'cpu_pct_per_vm': 100 * per_round_ns / 1e9 / round_s,
            'cpu_pct_%d_vms' % vms: 100 * vms * per_round_ns / 1e9 / round_s,
        }
    return out


def pooled_accuracy(rows):
    """accuracy()'s summary over the intervals of every repeat."""
    summary = {}
    for shape in SHAPES + ('all',):
        sel = [r for r in rows if r['clean'] and
               (shape == 'all' or r['shape'] == shape)]
        mixed = [r for r in rows if not r['clean'] and
                 (shape == 'all' or r['shape'] == shape)]
        if not sel:
            continue
        summary[shape] = {
            'intervals': len(sel),
            'kmod_mean_err_pct': 100 * statistics.mean(
                r['kmod_err'] for r in sel),
            'kmod_max_err_pct': 100 * max(r['kmod_err'] for r in sel),
            'smaps_mean_err_pct': 100 * statistics.mean(
                r['smaps_err'] for r in sel),
            'smaps_max_err_pct': 100 * max(r['smaps_err'] for r in sel),
            'mixed_intervals': len(mixed),
            'mixed_kmod_mean_err_pct': 100 * statistics.mean(
                r['kmod_err'] for r in mixed) if mixed else None,
            'mixed_smaps_mean_err_pct': 100 * statistics.mean(
                r['smaps_err'] for r in mixed) if mixed else None,
        }
    return summary


def mean_cost(per_rep, vms):
    """cost()'s figures averaged over the repeats (per sampled-pages
    count)."""
    out = {}
    pages = sorted({p for r in per_rep for p in r['cost']})
    for p in pages:
        ds = [r['cost'][p] for r in per_rep if p in r['cost']]
        out[p] = {k: statistics.mean(d[k] for d in ds) for k in ds[0]}
    return out


def repeat_intervals(per_rep, vms):
    """The headline figures, one value per repeat, with their 95 %
    intervals: the mean error over all clean intervals (kmod and smaps)
    and the CPU share of ``vms`` VMs per sampled-pages count."""
    key = 'cpu_pct_%d_vms' % vms
    out = {}
    for est in ('kmod', 'smaps'):
        vals = [r['accuracy']['all']['%s_mean_err_pct' % est]
                for r in per_rep if 'all' in r['accuracy']]
        if vals:
            out['%s_mean_err_pct' % est] = discipline.summarize(vals)
    for p in sorted({p for r in per_rep for p in r['cost']}):
        vals = [r['cost'][p][key] for r in per_rep if p in r['cost']]
        out['%s_at_%d_pages' % (key, p)] = discipline.summarize(vals)
    return out


def write_md(path, res):
    acc, c = res['accuracy'], res['cost']
    lines = [
        '# memmut-wss: in-guest accuracy and cost', '',
        'Command: `%s`' % res['command'], '',
        'Guest: Debian %s kernel under TCG (QEMU %s), 512 MiB, 1 vCPU; '
        'memwork W1-W5 back to back, peak %d MiB mapped once (alloc=s), '
        'steps of %g s; sampling every %d ms, %d random pages per interval '
        '(kmod) vs clear_refs + Referenced of the same mapping in the same '
        'interval (smaps). Error = |estimate - true WSS| / mapping size.' % (
            res['kernel'], res['qemu'], res['peak_mib'], res['step_s'],
            res['interval_ms'], res['pages']), '',
        '| shape | intervals | kmod mean err % | kmod max err % | '
        'smaps mean err % | smaps max err % | spanning intervals: kmod / '
        'smaps mean err % |',
        '|---|---|---|---|---|---|---|']
    for shape, s in acc.items():
        lines.append('| %s | %d | %.2f | %.2f | %.2f | %.2f | %s |' % (
            shape, s['intervals'], s['kmod_mean_err_pct'],
            s['kmod_max_err_pct'], s['smaps_mean_err_pct'],
            s['smaps_max_err_pct'],
            '%d: %.2f / %.2f' % (s['mixed_intervals'],
                                 s['mixed_kmod_mean_err_pct'],
                                 s['mixed_smaps_mean_err_pct'])
            if s['mixed_intervals'] else '-'))
    ri = res.get('repeat_intervals') or {}
    disc = res.get('discipline')
    if disc:
        lines += ['', '%d repeat(s) (one guest boot each, each one hold of '
                  'the TCG lock); the table pools the intervals of every '
                  'repeat; load average %s before, %s after; versions: '
                  '%s.' % (disc['repeats'], disc['load_before'],
                           disc['load_after'], ', '.join(
                               '%s %s' % (k, v[:12] if isinstance(v, str)
                                          else v)
                               for k, v in disc['versions'].items()))]
    err = ri.get('kmod_mean_err_pct')
    if err:
        lines += ['', 'Mean error over all clean intervals, per repeat '
                  '(mean ± 95 %% half-width): kmod %s, smaps %s. Goal mean '
                  'error <= 5 %% of the mapping: **%s** (met only if the '
                  'whole interval is below 5 %%).' % (
                      discipline.fmt(err, '.2f', unit=' %'),
                      discipline.fmt(ri['smaps_mean_err_pct'], '.2f',
                                     unit=' %'),
                      discipline.verdict(err, high=5.0)), '']
    else:
        goal = acc.get('all', {}).get('kmod_mean_err_pct')
        lines += ['', 'Goal mean error <= 5 %% of the mapping: %s (%.2f %%, '
                  'one run: no interval).'
                  % ('met' if goal is not None and goal <= 5 else 'NOT met',
                     goal or float('nan')), '']
    lines += [
              '## Cost (CPU time of the calls, median; TCG-emulated kernel)',
              '',
              '| sampled pages | random+clear call | ns/page | test call | '
              'ns/page | CPU per VM per %g s round | %d VMs |' % (
                  res['round_s'], res['vms']),
              '|---|---|---|---|---|---|---|']
    for pages, d in sorted(c.items()):
        lines.append('| %d | %.0f us | %.0f | %.0f us | %.0f | %.5f %% | '
                     '%.4f %% |' % (
                         pages, d['random_call_ns'] / 1e3,
                         d['random_ns_per_page'], d['test_call_ns'] / 1e3,
                         d['test_ns_per_page'], d['cpu_pct_per_vm'],
                         d['cpu_pct_%d_vms' % res['vms']]))
    rows = res.get('intervals') or []
    if rows:
        clear = statistics.median(r['clear_ns'] for r in rows)
        test = statistics.median(r['test_ns'] for r in rows)
        lines += ['', 'In the accuracy run (the probe sampling memwork, '
                  'another process, %d pages an interval; %d intervals): '
                  'median CPU time of the clearing call %.0f us, of the '
                  'testing call %.0f us.' % (
                      res['pages'], len(rows), clear / 1e3, test / 1e3)]
    key = 'cpu_pct_%d_vms' % res['vms']
    cpu = [(int(k.rsplit('_', 2)[1]), v) for k, v in ri.items()
           if k.startswith(key + '_at_')]
    if cpu:
        lines += ['', 'CPU of %d VMs per repeat (mean ± 95 %% half-width): '
                  '%s; goal <= 1 %% of a core at the default 100 pages: '
                  '**%s**.' % (res['vms'], ', '.join(
                      '%d pages %s' % (p, discipline.fmt(v, '.4f',
                                                         unit=' %'))
                      for p, v in sorted(cpu)),
                      discipline.verdict(ri.get(key + '_at_100_pages', {}),
                                         high=1.0))]
    lines += ['', res['extrapolation'], '']
    with open(path, 'w') as f:
        f.write('\n'.join(lines))


def plot(path, res, rows):
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt
    fig, axes = plt.subplots(2, 1, figsize=(11, 9),
                             gridspec_kw={'height_ratios': [3, 2]})
    ax = axes[0]
    t = [(r['t0'] + r['t1']) / 2 for r in rows]
    ax.step([r['t0'] for r in rows], [r['true_kb'] / 1024 for r in rows],
            where='post', label='true WSS (union over the interval)',
            color='black')
    ax.plot(t, [r['kmod_kb'] / 1024 for r in rows], 'o', ms=3,
            label='kmod (%d random pages)' % res['pages'])
    ax.plot(t, [r['smaps_kb'] / 1024 for r in rows], 'x', ms=3,
            label='smaps (clear_refs + Referenced)')
    for shape in SHAPES:
        ts = [r['t0'] for r in rows if r['shape'] == shape]
        if ts:
            ax.axvline(min(ts), color='grey', lw=0.5)
            ax.text(min(ts), res['peak_mib'] * 1.02, shape)
    ax.set_xlabel('guest uptime (s)')
    ax.set_ylabel('MiB')
    ax.set_ylim(0, res['peak_mib'] * 1.1)
    ax.set_title('memmut-wss in a TCG guest: W1-W5, peak %d MiB mapped'
                 % res['peak_mib'])
    ax.legend(loc='upper center', bbox_to_anchor=(0.5, -0.15), ncol=3,
              fontsize=8)
    ax = axes[1]
    pages = sorted(res['cost'])
    ax.plot(pages, [res['cost'][p]['round_ns_per_page'] for p in pages],
            'o-', label='ns per sampled page (clear + test)')
    ax.set_xscale('log')
    ax.set_xlabel('sampled pages per call')
    ax.set_ylabel('ns / page (TCG)')
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--peak-mib', type=int, default=128)
    p.add_argument('--step-seconds', type=float, default=6)
    p.add_argument('--interval-ms', type=int, default=1500)
    p.add_argument('--pages', type=int, default=100)
    p.add_argument('--cost-rounds', type=int, default=20)
    p.add_argument('--round-seconds', type=float, default=60.0,
                   help='Badis round ([badis] round_interval default)')
    p.add_argument('--vms', type=int, default=10)
    p.add_argument('--out', default=RESULTS)
    p.add_argument('--repeats', type=int, default=3,
                   help='guest boots, each one hold of --lock (default '
                        '%(default)s)')
    p.add_argument('--lock', default='/tmp/memmut-tcg.lock',
                   help='flock file each boot holds ("" for none)')
    args = p.parse_args()

    img = kmod.kmod_image()
    schedule, shape_of_step = [], []
    for shape in SHAPES:
        steps = workloads.shape_schedule(shape, args.peak_mib,
                                         args.step_seconds)
        schedule += steps
        shape_of_step += [shape] * len(steps)
    costs = ','.join('%d:%d:64' % (n, args.cost_rounds if n < 10000 else
                                   max(5, args.cost_rounds // 2))
                     for n in COST_PAGES)
    cmdline = ('memmut.kmod=1 memmut.autoswap=0 memmut.kmod_cost=%s '
               'memmut.kmod_interval_ms=%d memmut.kmod_pages=%d %s'
               % (costs, args.interval_ms, args.pages,
                  guestmod.workload_cmdline(schedule, 's', poweroff=True)))
    started = time.time()
    rec = discipline.Record(seed=0, repeats=args.repeats)
    rows, oops, per_rep, holds = [], [], [], []
    text = ''

    def save():
        # after every repeat, so a stopped run keeps what it measured
        rec.finish()
        rec.repeats = len(per_rep)
        summary = pooled_accuracy(rows)
        c = mean_cost(per_rep, args.vms)
        intervals = repeat_intervals(per_rep, args.vms)
        qemu = subprocess.run(['qemu-system-x86_64', '--version'],
                              capture_output=True,
                              text=True).stdout.split()[3]
        default = c.get(100)
        extrap = (
            'Extrapolation (from the measured per-page cost, not measured on '
            'a KVM host): the work of a call is proportional to the pages it '
            'samples, not to the size of the VM (a 16 GiB VM is a larger '
            'range to pick from, the same page-table walk per page). At the '
            'default rate (%d pages per VM per %g s Badis round: one '
            'clearing call and one testing call) the measured round costs '
            '%.0f us of CPU, so %d VMs of 16 GiB need %.5f %% of one core '
            '(goal <= 1 %%: %s). Even at 10 000 pages per round %d VMs '
            'would need %.3f %%. These are TCG figures (an emulated '
            'kernel): real hardware is faster.' % (
                100, args.round_seconds, default['round_ns'] / 1e3 if default
                else float('nan'), args.vms,
                default['cpu_pct_%d_vms' % args.vms] if default else float(
                    'nan'),
                'met' if default and default['cpu_pct_%d_vms' % args.vms] <= 1
                else 'NOT met', args.vms,
                c[10000]['cpu_pct_%d_vms' % args.vms] if 10000 in c
                else float('nan')))
        res = {
            'command': '.tox/functional/bin/python -m '
                       'tests.benchmarks.bench_kmod --repeats %d'
                       % args.repeats,
            'args': vars(args),
            'date': time.strftime('%Y-%m-%d %H:%M UTC',
                                  time.gmtime(started)),
            'kernel': img.kernel_version, 'qemu': qemu,
            'host': platform.node(), 'peak_mib': args.peak_mib,
            'step_s': args.step_seconds, 'interval_ms': args.interval_ms,
            'pages': args.pages, 'round_s': args.round_seconds,
            'vms': args.vms,
            'accuracy': summary, 'cost': c, 'extrapolation': extrap,
            'kernel_trouble': oops, 'intervals': rows,
            'module_unloaded': all(r['module_unloaded'] for r in per_rep),
            'repeats': per_rep, 'repeat_intervals': intervals,
            'discipline': rec.as_dict(), 'holds': holds,
        }
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, 'kmod.json'), 'w') as f:
            json.dump(res, f, indent=1)
        write_md(os.path.join(args.out, 'kmod.md'), res)
        plot(os.path.join(args.out, 'kmod.png'), res, rows)

    for rep in range(args.repeats):
        # one boot per repeat, each one hold of the TCG lock
        with discipline.lock_hold(args.lock, holds, rep):
            with tempfile.TemporaryDirectory() as tmp:
                text = boot(img, cmdline, os.path.join(tmp, 'console.log'),
                            timeout=60 + 3 * workloads.duration(schedule))
        oops += [line for line in text.splitlines()
                 if any(w in line for w in ('BUG', 'WARNING:', 'Oops',
                                            'Call Trace'))]
        r_rows, r_summary = accuracy(text, schedule, shape_of_step,
                                     args.peak_mib * 1024)
        for r in r_rows:
            r['repeat'] = rep
        rows += r_rows
        per_rep.append({'repeat': rep, 'accuracy': r_summary,
                        'cost': cost(text, args.round_seconds, args.vms),
                        'module_unloaded': 'KMOD-UNLOADED' in text})
        save()
    print(open(os.path.join(args.out, 'kmod.md')).read())
    if oops:
        print('KERNEL TROUBLE:\n' + '\n'.join(oops))
        return 1
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
