"""The fault campaign's result file (tests/benchmarks/bench_faults.py):
the interval over repeated libvirt runs, the merge of sections run
separately, and the Markdown. No hypervisor needed, so it is unit-tested
(tests/benchmarks/test_bench_faults.py)."""

import json
import os

from tests.benchmarks import discipline


# the figures of one libvirt run that get an interval over the repeats
LIBVIRT_REPEATED = {
    'recovery_p50_s': lambda r: r['recovery_s']['p50'],
    'recovery_p99_s': lambda r: r['recovery_s']['p99'],
    'first_healthy_poll_after_faults_stop_s':
        lambda r: r['first_healthy_poll_after_faults_stop_s'],
    'faults': lambda r: r['faults'],
}
# counts that must be 0 in every repeat: summed over the repeats
LIBVIRT_ZERO_GOALS = ('polls_raised', 'floor_violations',
                      'balloons_below_floor_at_end',
                      'unmanaged_after_recovery', 'guests_stopped')


def libvirt_repeats(runs):
    """Several libvirt runs (each with fresh guests and its own fault
    seed) in one result: the runs, a mean with a 95 % interval over them
    for each figure of LIBVIRT_REPEATED, and the zero-goal counts summed
    over them (goal 0 in total)."""
    out = {'repeats': runs, 'n': len(runs), 'summary': {}}
    for key, get in LIBVIRT_REPEATED.items():
        values = [get(r) for r in runs]
        if any(v is not None for v in values):
            out['summary'][key] = discipline.summarize(values)
    for key in LIBVIRT_ZERO_GOALS:
        # (runs recorded before a key existed count 0 for it)
        out[key] = sum(r.get(key, 0) for r in runs)
    out['faults'] = sum(r['faults'] for r in runs)
    for key in ('guests', 'p', 'p_balloon', 'poll_interval_s',
                'duration_s', 'recovery_phase_s'):
        out[key] = runs[0][key]
    return out


def _pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] \
        if values else None


def _mean(values):
    return sum(values) / len(values) if values else None


def event_times(per_run):
    """Recovery times of repeated runs (a list of value lists, one per
    run): p50/p99/max over all events, ``summary`` the interval over the
    events pooled (events of one run share its machine state, so it is
    the narrower), ``summary_runs`` the interval over the runs' means
    (independent runs: the one the evaluation table quotes)."""
    pooled = [v for vals in per_run for v in vals]
    out = {'p50': _pct(pooled, 0.5), 'p99': _pct(pooled, 0.99),
           'max': max(pooled) if pooled else None, 'values': pooled,
           'per_run': per_run,
           'summary': discipline.summarize(pooled) if pooled else None}
    means = [_mean(vals) for vals in per_run if vals]
    out['summary_runs'] = discipline.summarize(means) if means else None
    return out


def memstore_repeats(runs):
    """Repeated memstore SIGKILL runs (each a fresh guest and export):
    kills, pages verified and pages lost summed (goal 0 in total), the
    guest finished in every run, and the time to serve again over the
    kills (event_times)."""
    return {
        'repeats': runs, 'n': len(runs),
        'kills': sum(r['kills'] for r in runs),
        'kill_every_s': runs[0]['kill_every_s'],
        'acknowledged_pages_lost': sum(r['acknowledged_pages_lost']
                                       for r in runs),
        'pages_verified': sum(r['pages_verified'] for r in runs),
        'guest_finished': all(r['guest_finished'] for r in runs),
        'time_to_serve_again_s': event_times(
            [r['time_to_serve_again_s']['values'] for r in runs]),
    }


SERVICES_SUMMED = ('agent_kills', 'broker_restarts', 'db_restarts',
                   'reports_stored', 'agent_runs', 'seq_gaps_in_stored_runs',
                   'unmanaged_after_recovery', 'balloons_below_floor_at_end')
SERVICES_KINDS = ('agent_sigkill', 'broker_restart', 'db_restart')


def services_repeats(runs):
    """Repeated service-fault runs (each a fresh broker, database,
    agent, controller and guests): the counts summed (the zero goals
    over all runs) and each kind's recovery times (event_times)."""
    out = {'repeats': runs, 'n': len(runs),
           'outage_s': runs[0]['outage_s']}
    for key in SERVICES_SUMMED:
        out[key] = sum(r[key] for r in runs)
    for kind in SERVICES_KINDS:
        key = 'recovery_%s_s' % kind
        out[key] = event_times([r[key]['values'] for r in runs])
    return out


def diskfull_repeats(runs):
    """Repeated disk-full runs (each a fresh tmpfs, memstore and guest):
    the pass/fail checks over every run (memstore alive in all, no run
    paused on ENOSPC), the counts summed, and the pages lost summed over
    the runs whose memwork finished (a run the guest OOM-killed has no
    such figure: ``pages_lost_runs`` says how many had one)."""
    finished = [r for r in runs if r.get('acknowledged_pages_lost')
                is not None]
    return {
        'repeats': runs, 'n': len(runs),
        'tmpfs_mib': runs[0].get('tmpfs_mib'),
        'ram_quota_mib': runs[0]['ram_quota_mib'],
        'error_policy': runs[0]['error_policy'],
        'memstore_alive': all(r['memstore_alive'] for r in runs),
        'memstore_alive_runs': sum(bool(r['memstore_alive'])
                                   for r in runs),
        # libvirt state 3 is paused (reason 3: I/O error)
        'paused_runs': sum(r['domain_state'][0] == 3 for r in runs),
        'requests_refused': sum(r['requests_refused'] or 0 for r in runs),
        'guest_swap_write_errors': sum(r['guest_swap_write_errors']
                                       for r in runs),
        'guest_oom_kills': sum(r['guest_oom_kills'] for r in runs),
        'memwork_finished_runs': len(finished),
        'acknowledged_pages_lost': (sum(r['acknowledged_pages_lost']
                                        for r in finished)
                                    if finished else None),
    }


def load_repeats(runs):
    """Repeated load runs (each with its own fresh guests): every poll's
    time pooled (p50/p99/max), each run's p50 and p99 with a 95 % interval
    over the runs, the agent's CPU per poll likewise, and whether every
    run's p99 stayed under the poll interval."""
    pooled = [t for r in runs for t in r['poll_times_s']]
    return {
        'repeats': runs, 'n': len(runs),
        'guests': runs[0]['guests'],
        'poll_interval_s': runs[0]['poll_interval_s'],
        'polls': sum(r['polls'] for r in runs),
        'poll_s': {'p50': _pct(pooled, 0.5), 'p99': _pct(pooled, 0.99),
                   'max': max(pooled)},
        'summary': {
            'poll_p50_s': discipline.summarize(
                [r['poll_s']['p50'] for r in runs]),
            'poll_p99_s': discipline.summarize(
                [r['poll_s']['p99'] for r in runs]),
            'agent_cpu_s_per_poll': discipline.summarize(
                [r['agent_cpu_s_per_poll'] for r in runs]),
        },
        'agent_cpu_s_per_poll': _mean([r['agent_cpu_s_per_poll']
                                       for r in runs]),
        'p99_under_interval': all(r['p99_under_interval'] for r in runs),
    }


def _runs_cell(r):
    """'mean ± hw (n=runs)' over the runs' means, when repeated."""
    return discipline.fmt(r['summary_runs'], '.2f') \
        if r.get('summary_runs') and r['summary_runs']['n'] >= 2 else None


def libvirt_markdown(lv):
    sm = lv['summary']
    zero = [['polls that raised', 'polls_raised'],
            ['balloon targets below the floor', 'floor_violations'],
            ['balloons below the floor at the end',
             'balloons_below_floor_at_end'],
            ['VMs unmanaged after recovery', 'unmanaged_after_recovery'],
            ['guests not running at the end', 'guests_stopped']]
    rows = [['faults injected (all repeats)', lv['faults'], '']]
    # (a section aggregated before a count existed did not record it)
    rows += [[label + ' (all repeats)', lv.get(key, 'not recorded'), '0']
             for label, key in zero]
    for label, key in (
            ('recovery p50 (s)', 'recovery_p50_s'),
            ('recovery p99 (s)', 'recovery_p99_s'),
            ('first healthy poll after the faults stop (s)',
             'first_healthy_poll_after_faults_stop_s')):
        if key in sm:
            rows.append([label, discipline.fmt(sm[key], '.2f'), ''])
    d = lv.get('discipline') or {}
    return ['## libvirt errors at random calls (real guests)', '',
            '%d repeats, each with %d fresh guests, %g s of faults (p = %g, '
            'balloon changes %g) then %g s without, polls every %g s, '
            'fault seed --seed + repeat; mean ± 95 %% half-width over the '
            'repeats (Student t). Load average before %s, after %s.' % (
                lv['n'], lv['guests'], lv['duration_s'], lv['p'],
                lv['p_balloon'], lv['recovery_phase_s'],
                lv['poll_interval_s'], d.get('load_before'),
                d.get('load_after')), '',
            discipline.markdown_table(['figure', 'value', 'goal'], rows), '']


def diskfull_markdown(df):
    """The disk-full table of one run, or of repeats (counts summed)."""
    if df.get('n'):
        head = ['%d repeats, each a fresh tmpfs, memstore and guest; counts '
                'summed over them.' % df['n'], '']
        rows = [['memstore alive at the end (runs)', '%d of %d' % (
                    df['memstore_alive_runs'], df['n']), 'all'],
                ['runs paused on ENOSPC', df['paused_runs'], '0'],
                ['requests refused (ENOSPC)', df['requests_refused'], ''],
                ['guest swap write errors seen',
                 df['guest_swap_write_errors'], ''],
                ['acknowledged pages lost (runs where memwork finished: '
                 '%d)' % df['memwork_finished_runs'],
                 df['acknowledged_pages_lost'], '0'],
                ['guest OOM kills', df['guest_oom_kills'], '']]
    else:
        head = []
        rows = [['memstore alive at the end', df['memstore_alive'], 'True'],
                ['requests refused (ENOSPC)', df['requests_refused'], ''],
                ['guest swap write errors seen',
                 df['guest_swap_write_errors'], ''],
                ['acknowledged pages lost', df['acknowledged_pages_lost'],
                 '0'],
                ['VM paused on ENOSPC', df['domain_state'][0] == 3,
                 'False'],
                ['guest OOM kills', df['guest_oom_kills'], '']]
    return head + [discipline.markdown_table(['figure', 'value', 'goal'],
                                             rows), '']


def load_markdown(ld):
    """The load table of one run, or of repeats (with intervals)."""
    rows = [['poll p50 / p99 (s)%s' % (', all polls pooled'
                                       if ld.get('n') else ''),
             '%.3f / %.3f' % (ld['poll_s']['p50'], ld['poll_s']['p99']),
             '< 5'],
            ['agent CPU per poll (s)', '%.3f' % ld['agent_cpu_s_per_poll'],
             '']]
    head = []
    if ld.get('n'):
        sm = ld['summary']
        head = ['%d repeats, each with fresh guests; %d polls in all.'
                % (ld['n'], ld['polls']), '']
        rows += [['poll p50, mean over the runs (s)',
                  discipline.fmt(sm['poll_p50_s'], '.3f'), ''],
                 ['poll p99, mean over the runs (s)',
                  discipline.fmt(sm['poll_p99_s'], '.3f'), '< 5'],
                 ['every run\'s p99 under the interval',
                  ld['p99_under_interval'], 'True']]
    return head + [discipline.markdown_table(['figure', 'value', 'goal'],
                                             rows), '']


def markdown(res):
    m = res['machine']
    out = ['# Fault campaign (issue 17)', '',
           'Produced by `tests/benchmarks/bench_faults.py` (memmut %s, '
           'QEMU %s under TCG, libvirt %s, host kernel %s); sections run '
           'separately are merged.' % (
               (m.get('memmut_commit') or '?')[:10], m.get('qemu'),
               m.get('libvirt'), m.get('kernel')), '']
    lv = res.get('libvirt')
    title = '## libvirt errors at random calls (real guests)'
    if lv and 'repeats' in lv:
        out += libvirt_markdown(lv)
        lv = res.get('libvirt_before_repeats')
        title = ('### Before the repeats: one run of %g s (published '
                 'first)' % lv['duration_s'] if lv else title)
    if lv:
        out += [title, '',
                discipline.markdown_table(['figure', 'value', 'goal'], [
                    ['faults injected', lv['faults'], ''],
                    ['polls that raised', lv['polls_raised'], '0'],
                    ['balloon targets below the floor', lv[
                        'floor_violations'], '0'],
                    ['balloons below the floor at the end',
                     lv['balloons_below_floor_at_end'], '0'],
                    ['VMs unmanaged after recovery',
                     lv['unmanaged_after_recovery'], '0'],
                    ['recovery p50 / p99 (s)', '%.2f / %.2f' % (
                        lv['recovery_s']['p50'], lv['recovery_s']['p99']),
                     ''],
                ]), '']
    ms = res.get('memstore')
    if ms:
        t = ms['time_to_serve_again_s']
        runs_rows = [['serving again, mean over the runs\' means (s)',
                      _runs_cell(t), '']] if _runs_cell(t) else []
        out += ['## memstore SIGKILL mid-swap (real guest)', '',
                '%s' % ('%d repeats, each a fresh guest and export; counts '
                        'summed over them.' % ms['n'] if ms.get('n')
                        else 'One run.'), '',
                discipline.markdown_table(['figure', 'value', 'goal'], [
                    ['kills', ms['kills'], ''],
                    ['acknowledged pages lost', ms[
                        'acknowledged_pages_lost'], '0'],
                    ['pages verified by memwork', ms['pages_verified'], ''],
                    ['serving again p50 / max (s)', '%.2f / %.2f' % (
                        ms['time_to_serve_again_s']['p50'],
                        ms['time_to_serve_again_s']['max']), ''],
                    ['serving again, mean over the kills (s)',
                     discipline.fmt(ms['time_to_serve_again_s']['summary'],
                                    '.2f')
                     if ms['time_to_serve_again_s'].get('summary')
                     else 'not recorded', ''],
                ] + runs_rows), '']
    before = []
    mb = res.get('memstore_before_repeats')
    if mb and ms and ms.get('n'):
        t = mb['time_to_serve_again_s']
        before.append('memstore SIGKILL: %d kills, %s acknowledged pages '
                      'lost, serving again p50 %.2f s, max %.2f s'
                      % (mb['kills'], mb['acknowledged_pages_lost'],
                         t['p50'], t['max']))
    sb = res.get('services_before_repeats')
    if sb and res.get('services', {}).get('n'):
        before.append('services: %d sequence gaps, agent SIGKILL recovery '
                      'p50 %.1f s, broker %.1f s, database %.1f s' % (
                          sb['seq_gaps_in_stored_runs'],
                          sb['recovery_agent_sigkill_s']['p50'],
                          sb['recovery_broker_restart_s']['p50'],
                          sb['recovery_db_restart_s']['p50']))
    if before:
        out += ['### Before the repeats: one run each (published first)',
                ''] + ['- %s.' % b for b in before] + ['']
    df = res.get('diskfull')
    if df:
        out += ['## Disk full under memstore (real guest)', '']
        out += diskfull_markdown(df)
        db = res.get('diskfull_before_repeats')
        if db and df.get('n'):
            out += ['### Before the repeats: one run (published first)', '']
            out += diskfull_markdown(db)
        out += ['The swap disk reports I/O errors to the guest (memmut '
                'sets libvirt\'s error_policy to report; QEMU\'s default '
                'pauses the VM). When memwork finished, its page checksums '
                'give the pages lost; when the guest OOM-killed it (swap '
                'full, working set above RAM) there is no such figure '
                '("None"): acknowledged writes on a full file system are '
                'then covered by tests/unit/memstore/test_hardening.py '
                '(test_full_tmpfs_reads_zeros_and_writes_get_enospc).', '']
    sv = res.get('services')
    if sv:
        rows = [['agent SIGKILL / broker / DB restarts', '%d / %d / %d' % (
            sv['agent_kills'], sv['broker_restarts'], sv['db_restarts']),
            ''],
            ['reports lost (sequence gaps)', sv['seq_gaps_in_stored_runs'],
             '0'],
            ['VMs unmanaged after recovery', sv['unmanaged_after_recovery'],
             '0'],
            ['balloons below the floor', sv['balloons_below_floor_at_end'],
             '0']]
        for kind in ('agent_sigkill', 'broker_restart', 'db_restart'):
            r = sv['recovery_%s_s' % kind]
            rows.append(['recovery after %s p50 / max (s)' % kind.replace(
                '_', ' '), '%.1f / %.1f' % (r['p50'], r['max']), ''])
            if r.get('summary'):
                rows.append(['recovery after %s, mean over the events (s)'
                             % kind.replace('_', ' '),
                             discipline.fmt(r['summary'], '.2f'), ''])
            if _runs_cell(r):
                rows.append(['recovery after %s, mean over the runs\' '
                             'means (s)' % kind.replace('_', ' '),
                             _runs_cell(r), ''])
        out += ['## Services: agent, broker and database faults', '',
                '%s' % ('%d repeats, each with a fresh broker, database, '
                        'agent, controller and guests; counts summed over '
                        'them.' % sv['n'] if sv.get('n') else 'One run.'),
                '',
                discipline.markdown_table(['figure', 'value', 'goal'], rows),
                '']
    out += ['Faults injected in all: %d.' % res.get('total_faults', 0), '']
    ld = res.get('load')
    if ld:
        out += ['## Load: %d guests, one agent, poll every 5 s'
                % ld['guests'], '']
        out += load_markdown(ld)
        lb = res.get('load_before_repeats')
        if lb and ld.get('n'):
            out += ['### Before the repeats: one run (published first)', '']
            out += load_markdown(lb)
    return '\n'.join(out) + '\n'


def earlier_repeats(out, section):
    """The runs of ``section`` already repeated in ``<out>.json`` (a
    stopped or short series to go on from) and that section's discipline
    record; ([], None) if it has none."""
    try:
        with open(out + '.json') as f:
            sec = json.load(f).get(section) or {}
    except (OSError, ValueError):
        return [], None
    return list(sec.get('repeats') or []), sec.get('discipline')


def save(out, res):
    """Merge ``res`` into ``<out>.json`` (sections run separately are
    kept) and rewrite ``<out>.md``. A single run of a section that
    repeats replace is kept as ``<section>_before_repeats``."""
    if os.path.exists(out + '.json'):
        with open(out + '.json') as f:
            old = json.load(f)
        for section in ('libvirt', 'memstore', 'services', 'diskfull',
                        'load'):
            if (section in res and section in old
                    and 'repeats' not in old[section]):
                old[section + '_before_repeats'] = old[section]
        # every run's arguments and versions, since the sections merged
        # here may come from different runs
        runs = old.get('runs') or [{'started_utc': None,
                                    'args': old.get('args'),
                                    'machine': old.get('machine')}]
        this = res['discipline']['started_utc']
        runs = [r for r in runs if r['started_utc'] != this]
        runs.append({'started_utc': this, 'args': res['args'],
                     'machine': res['machine']})
        old.update(res)
        res = old
        res['runs'] = runs
    sv = res.get('services', {})
    # (a disk-full run is one fault; a single run has no 'n')
    diskfull_runs = (res['diskfull'].get('n', 1) if 'diskfull' in res
                     else 0)
    res['total_faults'] = (diskfull_runs +
                           res.get('libvirt', {}).get('faults', 0) +
                           res.get('memstore', {}).get('kills', 0) +
                           sv.get('agent_kills', 0) +
                           sv.get('broker_restarts', 0) +
                           sv.get('db_restarts', 0))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out + '.json', 'w') as f:
        json.dump(res, f, indent=1, sort_keys=True, default=str)
    with open(out + '.md', 'w') as f:
        f.write(markdown(res))
    print('wrote %s.json and .md' % out)
