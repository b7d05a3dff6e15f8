"""The evaluation table of issue 20, built from the benchmark result files.

One row per headline figure: its mean, n, 95 % interval, whether the file
records component versions, the figure published before (read from a
result file too: the same file as first committed or before issue 20,
or a "before" record inside a file) and the goal's verdict under the
rule of tests/benchmarks/discipline.py (met only if the whole interval is
inside the goal; n = 1 is undecided). Then every result file under
tests/benchmarks/results that the table does not cover, with whether it
has intervals and versions. No number is typed here: every figure is read
from the files, so rerunning a benchmark and this tool updates the
table::

    python tools/evaluation_summary.py > tests/benchmarks/results/EVALUATION.md

(``--out PATH`` writes the file; the text around the table is kept
between the markers of an existing file.)
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from tests.benchmarks import discipline  # noqa: E402

RESULTS_REL = 'tests/benchmarks/results'
# the commit before the issue-20 work began (discipline.py's parent)
BASE_REV = '4542cd0^'
BEGIN = '<!-- evaluation_summary: begin -->'
END = '<!-- evaluation_summary: end -->'


class Loader:
    """Result files by path relative to the results directory: as they
    are now, at a git revision, or as first committed. Missing files and
    revisions give None."""

    def __init__(self, root=ROOT):
        self.root = root
        self._cache = {}

    def _parse(self, path, text):
        if path.endswith('.jsonl'):
            return [json.loads(line) for line in text.splitlines()
                    if line.strip()]
        return json.loads(text)

    def load(self, path, rev=None):
        key = (path, rev)
        if key not in self._cache:
            self._cache[key] = self._read(path, rev)
        return self._cache[key]

    def _read(self, path, rev):
        full = os.path.join(RESULTS_REL, path)
        if rev is None:
            try:
                with open(os.path.join(self.root, full)) as f:
                    return self._parse(path, f.read())
            except (OSError, ValueError):
                return None
        if rev == 'first':
            rev = self._git('log', '--diff-filter=A', '--format=%H', '--',
                            full)
            rev = rev.split()[-1] if rev else None
        elif rev == 'previous':
            rev = self._previous(full)
        if rev is None:
            return None
        text = self._git('show', '%s:%s' % (rev, full))
        try:
            return self._parse(path, text) if text else None
        except ValueError:
            return None

    def _previous(self, full):
        """The revision of the version published before the current one:
        HEAD's if the file was changed since, else the one before the
        last commit that changed it."""
        revs = (self._git('log', '--format=%H', '-2', '--', full) or
                '').split()
        changed = self._git('diff', '--quiet', 'HEAD', '--', full) is None
        if changed:
            return revs[0] if revs else None
        return revs[1] if len(revs) > 1 else None

    def _git(self, *args):
        try:
            out = subprocess.run(['git', '-C', self.root] + list(args),
                                 capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip() if out.returncode == 0 else None


def dig(doc, *keys):
    """doc[k1][k2]... or None where a key is missing."""
    for k in keys:
        if isinstance(doc, dict) and k in doc:
            doc = doc[k]
        elif isinstance(doc, list) and isinstance(k, int) and \
                -len(doc) <= k < len(doc):
            doc = doc[k]
        else:
            return None
    return doc


def as_summary(value):
    """A figure as ``{'n', 'mean', 'low', 'high'}``: a discipline summary
    or paired ratio as it is, a bare number as one measurement."""
    if value is None:
        return None
    if isinstance(value, dict):
        if value.get('mean') is None:
            return None
        low, high = value.get('low'), value.get('high')
        known = low is not None and high is not None
        return {'n': value.get('n', 1), 'mean': float(value['mean']),
                'low': low if known else None,
                'high': high if known else None,
                'half_width': (high - low) / 2.0 if known else None}
    return {'n': 1, 'mean': float(value), 'low': None, 'high': None,
            'half_width': None}


def has_versions(doc, depth=0):
    """True if the file records component versions somewhere: a
    ``versions`` dict, or a dict with the memmut commit and QEMU's
    version (a jsonl log: in every line)."""
    if depth == 0 and isinstance(doc, list) and doc and all(
            isinstance(x, dict) for x in doc) and 'versions' in doc[0]:
        return all(has_versions(x, 1) for x in doc)
    if isinstance(doc, dict):
        v = doc.get('versions')
        if isinstance(v, dict) and ('qemu' in v or 'memmut_commit' in v):
            return True
        if 'memmut_commit' in doc and 'qemu' in doc:
            return True
        if depth < 4:
            return any(has_versions(x, depth + 1) for x in doc.values()
                       if isinstance(x, (dict, list)))
    if isinstance(doc, list) and depth < 4:
        return any(has_versions(x, depth + 1) for x in doc[:3])
    return False


def versions_cell(doc):
    """The table's versions cell: 'yes', 'no', or for a file written
    before versions were recorded and annotated with
    ``versions_not_recorded`` (a note whose first clause, up to ';', says
    at which commit the runs were made, read from git history): 'not
    recorded (<that clause>)', 'partly' if some of its runs record them."""
    if doc is None:
        return '-'
    note = doc.get('versions_not_recorded') if isinstance(doc, dict) \
        else None
    if note:
        where = note.split(';')[0].strip()
        return ('partly; the rest not recorded (%s)' if has_versions(doc)
                else 'not recorded (%s)') % where
    return 'yes' if has_versions(doc) else 'no'


Spec = collections.namedtuple('Spec', [
    'file', 'figure', 'get', 'fmt', 'scale', 'unit', 'goal', 'goal_text',
    'before', 'count'])


def spec(file, figure, get, fmt='.2f', scale=1.0, unit='', goal=None,
         goal_text='', before=None, count=False):
    """``get(doc)``: the figure (summary dict or number) from the loaded
    file; ``goal``: (low, high), either None; ``before``: (file, rev,
    get) with rev None (now), 'first' or a git revision; ``count``: a
    count judged by its value (a zero goal), not by an interval."""
    return Spec(file, figure, get, fmt, scale, unit, goal, goal_text,
                before, count)


def _mut(scenario, mode, what, workload=None):
    """A mutualization figure from the series log, summarized as
    ``bench_mutualization --aggregate`` does."""
    def get(lines):
        from tests.benchmarks import bench_mutualization as bm
        mine = sorted((ln for ln in lines or []
                       if ln['scenario'] == scenario),
                      key=lambda ln: (ln['repeat'], ln['started_utc']))
        if not mine:
            return None
        bm.set_scenario(scenario)
        s = bm.repeat_summary(mine)
        return dig(s, what, mode, *([workload] if workload else []))
    return get


def _fio_ratio(workload, baseline, what='iops'):
    def get(doc):
        for c in dig(doc, 'fio', 'cases') or []:
            if c['workload'] == workload:
                return dig(c, 'ratios_memstore_to', baseline, what)
        return None
    return get


def _kmod_before(doc):
    return dig(doc, 'accuracy', 'all', 'kmod_mean_err_pct')


def _controller(hosts, controllers, summary_key, *run_keys):
    """A controller-scale figure: from the ``summary`` rows of a file
    written with ``--repeats`` (``summary_key``), or from a bare list of
    single runs, as the files before the repeats were (``run_keys``)."""
    def get(doc):
        repeated = isinstance(doc, dict)
        rows = doc.get('summary') if repeated else doc
        for r in rows or []:
            if r.get('hosts') == hosts and r.get('controllers') == \
                    controllers:
                return r.get(summary_key) if repeated else dig(r, *run_keys)
        return None
    return get


def _events(doc, section, key):
    """A fault-campaign recovery time: over repeated runs, the interval
    over the runs' means (``summary_runs``; the events of one run are not
    independent); from a single run, the interval over its events, or its
    p50 when it kept no raw times."""
    r = dig(doc, section, key) or {}
    runs = r.get('summary_runs')
    if runs and runs.get('n', 0) >= 2:
        return runs
    return r.get('summary') or r.get('p50')


def _diskfull_failed_runs(doc):
    """Disk-full runs whose memstore died or whose VM paused on ENOSPC
    (a single run: 0 or 1)."""
    df = dig(doc, 'diskfull')
    if not df:
        return None
    if df.get('n'):
        return (df['n'] - df['memstore_alive_runs']) + df['paused_runs']
    return int(not df['memstore_alive']) + int(df['domain_state'][0] == 3)


def _goal(name):
    """A goal record of bench_consolidation (mean, low, high and the
    formatted value, whose '(n=N)' gives n)."""
    def get(doc):
        g = dig(doc, 'goals', name)
        if not g:
            return None
        m = re.search(r'\(n=(\d+)\)', g.get('value', ''))
        return dict(g, n=int(m.group(1)) if m else 1)
    return get


def _above_bound(group, rung):
    """How far a consolidation_bounds rung lies above the per-step lower
    bound, per input of ``group`` (a reference for the distance goal)."""
    def get(doc):
        from tests.benchmarks import discipline
        rows = [r for r in dig(doc, 'rows') or []
                if r.get('group') == group and r.get(rung) is not None]
        if not rows:
            return None
        return discipline.summarize(
            [r[rung] / r['lower_bound'] - 1 for r in rows])
    return get


def _badis_interval(doc, estimator, key, single=None):
    """A bench_badis figure: the interval over repeats when the file has
    them, else (a file of single runs) the summary's ``single`` figure."""
    iv = dig(doc, 'summary', estimator, 'intervals', key)
    if iv or single is None:
        return iv
    return dig(doc, 'summary', estimator, single)


def _geo_cases(doc, estimator, cases):
    """A fixed-work slowdown over some of the schedules only: per
    repeat the geometric mean of those cases' ratios, then the paired
    interval over the repeats, as bench_badis computes 'all cases'."""
    per = dig(doc, 'slowdown', 'estimators', estimator, 'cases') or {}
    values = [per[c]['values'] for c in cases if c in per]
    if len(values) != len(cases) or len({len(v) for v in values}) != 1:
        return None
    return discipline.ratio_over_cases(values)


def _goals_met(part):
    """'k of m' goals of a sweep whose whole interval holds."""
    def get(doc):
        goals = dig(doc, 'goals', part) or {}
        if not goals:
            return None
        return '%d of %d' % (sum(1 for g in goals.values() if g.get('met')),
                             len(goals))
    return get


def _w15_series(file, series, before, before_series):
    """The two figures of a repeated W1-W5 series (bench_badis
    ``--repeats``; ``series`` names it in the labels): Badis's mean
    error and its vm_over median, each beside ``before`` = (file, rev):
    another series' intervals when ``before_series``, else the single
    run's figures."""
    def earlier(interval_key, single_key):
        if before_series:
            return lambda d: dig(d, 'summary', 'badis', 'intervals',
                                 interval_key)
        return lambda d: dig(d, 'summary', 'badis', single_key)
    return [
        spec(file, 'Badis mean error, %% of booked (W1-W5, %s)' % series,
             lambda d: dig(d, 'summary', 'badis', 'intervals',
                           'booked_all'),
             unit=' %', goal=(None, 5.0), goal_text='<= 5 %',
             before=before + (earlier('booked_all',
                                      'mean_error_pct_booked'),)),
        spec(file, 'Badis vm_over, median of 10 schedules (%s)' % series,
             lambda d: dig(d, 'summary', 'badis', 'intervals',
                           'vm_over_median'),
             fmt='.3f', goal=(None, 1.03), goal_text='<= 1.03',
             before=before + (earlier('vm_over_median',
                                      'vm_over_median'),)),
    ]


SPECS = [
    # Badis (issue 20 item 2): W1-W5, fixed time, Badis and both
    # baselines with their `none` reference from one invocation of one
    # commit, repeats (the single runs published first are the "before")
    spec('badis.json', 'Badis mean error, % of booked (W1-W5; 7b20e1a, '
         '29 November, with the baselines)',
         lambda d: _badis_interval(d, 'badis', 'booked_all',
                                   'mean_error_pct_booked'),
         unit=' %', goal=(None, 5.0), goal_text='<= 5 %',
         before=('badis.json', BASE_REV,
                 lambda d: dig(d, 'summary', 'badis',
                               'mean_error_pct_booked'))),
    spec('badis.json', 'Badis mean error, % of the true WSS (W1-W5)',
         lambda d: _badis_interval(d, 'badis', 'truth_all'), unit=' %'),
    spec('badis.json', 'Badis mean error, % of booked, truth on the '
         'probed base (W1-W5)',
         lambda d: _badis_interval(d, 'badis', 'probe_booked_all'),
         unit=' %', goal=(None, 5.0), goal_text='<= 5 %'),
    spec('badis.json', 'Badis vm_over, median of 10 schedules (7b20e1a, '
         '29 November, with the baselines)',
         lambda d: _badis_interval(d, 'badis', 'vm_over_median',
                                   'vm_over_median'),
         fmt='.3f', goal=(None, 1.03), goal_text='<= 1.03',
         before=('badis.json', BASE_REV,
                 lambda d: dig(d, 'summary', 'badis', 'vm_over_median'))),
] + [
    spec('badis.json', '%s %s' % (label, figure),
         lambda d, e=estimator, k=key, f=single: _badis_interval(d, e, k, f),
         unit=unit, fmt=fmt,
         before=('badis.json', BASE_REV,
                 lambda d, e=estimator, f=single: dig(d, 'summary', e, f)))
    for estimator, label in (('zballoond', 'Zballoond'),
                             ('selfballoon', 'self-ballooning'))
    for figure, key, single, unit, fmt in (
        ('mean error, % of booked (W1-W5)', 'booked_all',
         'mean_error_pct_booked', ' %', '.2f'),
        ('vm_over, median of 10 schedules', 'vm_over_median',
         'vm_over_median', '', '.3f'))
] + [
    # Badis W1-W5 repeated (issue 20's cheapest honest design: fixed
    # time, both allocations, Badis and `none` from one invocation),
    # beside the single runs published first
    *_w15_series('badis_repeats/badis.json', 'repeats',
                 ('badis.json', BASE_REV), before_series=False),
    # the same design at the stop-73 defaults (issue 13: W1-W5 not
    # worse than at the series above)
    *_w15_series('badis73_noraise/badis.json',
                 'repeats, stop 73 defaults',
                 ('badis_repeats/badis.json', None), before_series=True),
    # and with a VM's own time slice (60 s on the bench's 4 s slice),
    # beside it: the defaults since stop 75 (the fix that made it one
    # changes nothing for a single VM)
    *_w15_series('badis73_slice/tcg_w15/badis.json',
                 'repeats, stop 73 defaults + own time slice = stop 75 '
                 'defaults',
                 ('badis73_noraise/badis.json', None), before_series=True),
    # and at the stop-87 defaults, beside stop 77's (the last W1-W5
    # series before stops 81-87 added defaults)
    *_w15_series('badis87_defaults/w15/badis.json',
                 'repeats, stop 87 defaults',
                 ('badis77_reuse_w15/badis.json', None), before_series=True),
    # stop 88: the same two trees alternating schedule by schedule (the
    # bed drifts in spells: blocks of one tree mislead)
    *_w15_series('badis88_w4s_bisect/w15_f4d93169/badis.json',
                 'stop 87 tree alternating with stop 77\'s, stop 88',
                 ('badis88_w4s_bisect/w15_9f6caeb3/badis.json', None),
                 before_series=True),
    # Badis and the baselines in fixed-work mode (issue 20 item 2):
    # completion time / `none`'s, one invocation per repeat, all four
    # estimators from one commit; W3,d and W5,d only
    spec('badis_fixed_work/badis.json', 'Badis slowdown, completion time '
         '(fixed work, W3,d W5,d; a30baab, 25 November)',
         lambda d: dig(d, 'slowdown', 'estimators', 'badis', 'all_cases'),
         fmt='.3f', goal=(None, 1.03), goal_text='<= 1.03',
         before=('badis.json', BASE_REV,
                 lambda d: dig(d, 'summary', 'badis', 'vm_over_median'))),
    spec('badis_fixed_work/badis.json', 'Zballoond slowdown, completion '
         'time (fixed work, W3,d W5,d; a lower bound: runs cut at their '
         'timeout)',
         lambda d: dig(d, 'slowdown', 'estimators', 'zballoond',
                       'all_cases'),
         fmt='.3f',
         before=('badis.json', BASE_REV,
                 lambda d: dig(d, 'summary', 'zballoond',
                               'vm_over_median'))),
    spec('badis_fixed_work/badis.json', 'self-ballooning slowdown, '
         'completion time (fixed work, W3,d W5,d; a lower bound: runs cut '
         'at their timeout)',
         lambda d: dig(d, 'slowdown', 'estimators', 'selfballoon',
                       'all_cases'),
         fmt='.3f',
         before=('badis.json', BASE_REV,
                 lambda d: dig(d, 'summary', 'selfballoon',
                               'vm_over_median'))),
    # the same protocol at the stop-75 defaults, Badis and `none` only,
    # on all ten schedules (one invocation, 3 repeats)
    spec('badis76_fixed_work/badis.json', 'Badis slowdown, completion '
         'time (fixed work, W1-W5 s/d, stop 75 defaults)',
         lambda d: dig(d, 'slowdown', 'estimators', 'badis', 'all_cases'),
         fmt='.3f', goal=(None, 1.03), goal_text='<= 1.03',
         before=('badis_fixed_work/badis.json', None,
                 lambda d: dig(d, 'slowdown', 'estimators', 'badis',
                               'all_cases'))),
    spec('badis76_fixed_work/badis.json', 'Badis slowdown, completion '
         'time (fixed work, W3,d W5,d only, stop 75 defaults)',
         lambda d: _geo_cases(d, 'badis', ('W3,d', 'W5,d')),
         fmt='.3f', goal=(None, 1.03), goal_text='<= 1.03',
         before=('badis_fixed_work/badis.json', None,
                 lambda d: dig(d, 'slowdown', 'estimators', 'badis',
                               'all_cases'))),
    spec('badis_cost.json', 'agent CPU, 10 guests, production rounds',
         lambda d: dig(d, 'ten', 'summary', 'production_pct_core_10vms')
         or dig(d, 'ten', 'production_pct_core_10vms'),
         fmt='.3f', unit=' % core', goal=(None, 1.0), goal_text='<= 1 %',
         before=('badis_cost.json', 'previous',
                 lambda d: dig(d, 'ten', 'production_pct_core_10vms'))),
    spec('badis_cost.json', 'memstore CPU, 10 guests swapping',
         lambda d: dig(d, 'ten', 'summary', 'memstore_pct_core')
         or dig(d, 'ten', 'memstore_pct_core'), unit=' % core',
         before=('badis_cost.json', 'previous',
                 lambda d: dig(d, 'ten', 'memstore_pct_core'))),
    spec('badis_cost.json', 'sampler CPU per round, 4 GiB guest',
         lambda d: dig(d, 'sampler', 'sizes', -1, 'summary'), scale=1000.0,
         unit=' ms',
         before=('badis_cost.json', 'first',
                 lambda d: dig(d, 'sampler', 'sizes', -1, 'summary'))),
    spec('kmod.json', 'memmut-wss mean error, % of mapping',
         lambda d: dig(d, 'repeat_intervals', 'kmod_mean_err_pct')
         or _kmod_before(d), unit=' %', goal=(None, 5.0),
         goal_text='<= 5 %', before=('kmod.json', 'previous', _kmod_before)),
    spec('kmod.json', 'memmut-wss CPU, 10 VMs, 100 pages per round',
         lambda d: dig(d, 'repeat_intervals',
                       'cpu_pct_10_vms_at_100_pages')
         or dig(d, 'cost', '100', 'cpu_pct_10_vms'), fmt='.4f',
         unit=' % core', goal=(None, 1.0), goal_text='<= 1 %',
         before=('kmod.json', 'previous',
                 lambda d: dig(d, 'cost', '100', 'cpu_pct_10_vms'))),
    # mutualization (item 3), from the series log
    spec('mutualization_repeats.jsonl',
         'shortage, equal: swap reduction vs static (>=)',
         _mut('shortage', 'equal', 'swap_reduction_x'), unit='x',
         goal=(8.0, None), goal_text='>= 8x',
         before=('mutualization_shortage.json', BASE_REV,
                 lambda d: dig(d, 'summary', 'equal', 'swap_reduction_x'))),
    spec('mutualization_repeats.jsonl',
         'shortage, proportional: swap reduction vs static (>=)',
         _mut('shortage', 'proportional', 'swap_reduction_x'), unit='x',
         goal=(8.0, None), goal_text='>= 8x',
         before=('mutualization_shortage.json', BASE_REV,
                 lambda d: dig(d, 'summary', 'proportional',
                               'swap_reduction_x'))),
    spec('mutualization_repeats.jsonl',
         'shortage, equal: speed-up BLAS-like (>=)',
         _mut('shortage', 'equal', 'speedup_pct', 'blas'), fmt='.1f',
         unit=' %', goal=(20.0, None), goal_text='>= 20 %',
         before=('mutualization_shortage.json', BASE_REV,
                 lambda d: dig(d, 'summary', 'equal', 'speedup_pct',
                               'blas'))),
    spec('mutualization_repeats.jsonl',
         'shortage, proportional: speed-up GRASS-like (>=)',
         _mut('shortage', 'proportional', 'speedup_pct', 'grass'),
         fmt='.1f', unit=' %', goal=(20.0, None), goal_text='>= 20 %',
         before=('mutualization_shortage.json', BASE_REV,
                 lambda d: dig(d, 'summary', 'proportional', 'speedup_pct',
                               'grass'))),
    spec('mutualization_repeats.jsonl',
         'zipf, equal: swap reduction vs static (>=)',
         _mut('zipf', 'equal', 'swap_reduction_x'), unit='x',
         goal=(8.0, None), goal_text='>= 8x'),
    spec('mutualization_repeats.jsonl',
         'ch.3, equal: swap reduction vs static (>=)',
         _mut('ch3', 'equal', 'swap_reduction_x'), fmt='.1f', unit='x',
         goal=(8.0, None), goal_text='>= 8x',
         before=('mutualization.json', BASE_REV,
                 lambda d: dig(d, 'summary', 'equal', 'swap_reduction_x'))),
    spec('mutualization_repeats.jsonl',
         'ch.3, equal: speed-up BLAS-like (>=)',
         _mut('ch3', 'equal', 'speedup_pct', 'blas'), fmt='.1f',
         unit=' %', goal=(20.0, None), goal_text='>= 20 %',
         before=('mutualization.json', BASE_REV,
                 lambda d: dig(d, 'summary', 'equal', 'speedup_pct',
                               'blas'))),
    # memstore (item 4)
    spec('memstore.json', 'fio randread QD32 IOPS, memstore / nbdkit sparse',
         _fio_ratio('randread QD32', 'nbdkit-sparse'), unit='x',
         goal=(1.0, None), goal_text='>= 1.0x',
         before=('memstore.json', None,
                 lambda d: dig(d, 'fio', 'previous', 'iops_vs_nbdkit',
                               'randread QD32'))),
    spec('memstore.json', 'fio randwrite QD1 IOPS, memstore / nbdkit sparse',
         _fio_ratio('randwrite QD1', 'nbdkit-sparse'), unit='x',
         goal=(1.0, None), goal_text='>= 1.0x',
         before=('memstore.json', None,
                 lambda d: dig(d, 'fio', 'previous', 'iops_vs_nbdkit',
                               'randwrite QD1'))),
    spec('memstore.json', 'fio randread QD1 p99, memstore / nbdkit sparse',
         _fio_ratio('randread QD1', 'nbdkit-sparse', 'p99'), unit='x',
         goal=(None, 2.0), goal_text='<= 2.0x',
         before=('memstore.json', None,
                 lambda d: dig(d, 'fio', 'previous', 'p99_vs_nbdkit',
                               'randread QD1'))),
    spec('memstore.json', 'guest fault p99, memstore / nbdkit sparse',
         lambda d: dig(d, 'guest', 'ratios_memstore_to', 'nbdkit-sparse',
                       'fault_p99_us'), unit='x', goal=(None, 2.0),
         goal_text='<= 2.0x'),
    # remote memory (issue 18)
    spec('remote.json', 'remote-10gbe / RAM, 1024-page reads',
         lambda d: dig(d, 'ratios', 'remote-10gbe', '1024'), unit='x',
         goal=(None, 3.0), goal_text='<= 3x',
         before=('remote.json', None,
                 lambda d: dig(d, 'ratios', 'remote-10gbe@before',
                               '1024'))),
    spec('remote_failure.json', 'time to backup after a lender SIGKILL',
         lambda d: dig(d, 'summary', 'sigkill', 'to_backup_s'), fmt='.1f',
         scale=1000.0, unit=' ms', goal=(None, 1.0), goal_text='<= 1 s',
         before=('remote_failure.json', 'first',
                 lambda d: dig(d, 'summary', 'sigkill', 'to_backup_s'))),
    spec('remote_failure.json', 'time to backup after a link cut',
         lambda d: dig(d, 'summary', 'link-cut', 'to_backup_s'), fmt='.1f',
         scale=1000.0, unit=' ms', goal=(None, 1.0), goal_text='<= 1 s',
         before=('remote_failure.json', 'first',
                 lambda d: dig(d, 'summary', 'link-cut', 'to_backup_s'))),
    spec('remote_gain.json', 'completion, remote-10gbe / disk swap',
         lambda d: dig(d, 'gain'), fmt='.3f', unit='x', goal=(None, 0.83),
         goal_text='<= 0.83x (gain >= 17 %)',
         before=('remote_gain.json', 'first', lambda d: dig(d, 'gain'))),
    # the simulator (item 5) and the planner
    spec('consolidation.json', 'active hosts booked / WSS, Bitbrains',
         _goal('active_host_ratio'), unit='x',
         goal=(2.5, None), goal_text='>= 2.5x',
         before=('consolidation_before_issue20.json', None,
                 lambda d: dig(d, 'bitbrains', 'ratio'))),
    spec('consolidation.json', 'WSS memory overload (host time), Bitbrains',
         _goal('memory_overload_time_wss'), fmt='.3f',
         scale=100.0, unit=' %', goal=(None, 0.002), goal_text='<= 0.2 %',
         before=('consolidation_before_issue20.json', None,
                 lambda d: dig(d, 'bitbrains', 'wss_mem_overload'))),
    # issue 19's goals in the main run's steady state (since stop 65)
    spec('consolidation.json', 'WSS migrations per VM-day, Bitbrains',
         _goal('migrations_per_vm_day_wss'), fmt='.3f',
         goal=(None, 0.15), goal_text='<= 0.15'),
    spec('consolidation.json', 'WSS CPU overload (host time), Bitbrains',
         _goal('cpu_overload_time_wss'), fmt='.3f', scale=100.0,
         unit=' %', goal=(None, 0.003), goal_text='<= 0.3 %'),
    spec('consolidation.json',
         'WSS active hosts above the per-step lower bound, Bitbrains',
         _goal('above_lower_bound_wss'), fmt='.1f', scale=100.0,
         unit=' %', goal=(None, 0.15), goal_text='<= 15 %'),
    # stop 78: what a clairvoyant re-packing within the migration budget
    # needs, against the same bound (a reference, not the planner)
    spec('consolidation/bounds.json',
         'clairvoyant re-packing within the migration budget, 100 %, above '
         'the per-step lower bound, Bitbrains (a reference)',
         _above_bound('bitbrains', 'sticky'), fmt='.1f', scale=100.0,
         unit=' %'),
    spec('consolidation/planner_ab.json', 'planning round CPU, 10 000 hosts',
         lambda d: dig(d, 'summary', 'new', 'cpu'), fmt='.3f', unit=' s',
         goal=(None, 1.0), goal_text='<= 1 s',
         # 12605ec: the figure published before the kept sums (the
         # file's previous version is a smoke run of the new benchmark)
         before=('consolidation/planner_ab.json', '12605ec',
                 lambda d: dig(d, 'summary', 'new', 'cpu'))),
    spec('consolidation/tradeoff.json', 'sweep goals met (Bitbrains)',
         _goals_met('bitbrains')),
    # stop 79: the same curve at the stop-79 defaults, 8 seeds, after a
    # day of burn-in (tradeoff.json is the cold run at stop 41's)
    spec('consolidation/tradeoff_stop79.json',
         'sweep goals met after a day of burn-in (Bitbrains, stop-79 '
         'defaults)', _goals_met('bitbrains')),
    # stop 63: the defaults after a day's burn-in (a planner that has
    # been running; doc/source/simulator.rst)
    spec('consolidation/tradeoff_burnin_w1b1.json',
         'goals met after a day of burn-in, bursty', _goals_met(
             'synthetic bursty')),
    spec('consolidation/tradeoff_burnin_w1b1.json',
         'goals met after a day of burn-in, memory_spikes', _goals_met(
             'synthetic memory_spikes')),
    # stop 79: the profiles whose memory-caused share the seasonal
    # forecast's own threshold brought under the goal
    spec('consolidation/tradeoff_burnin_w1b1.json',
         'goals met after a day of burn-in, default', _goals_met(
             'synthetic default')),
    spec('consolidation/tradeoff_burnin_w1b1.json',
         'goals met after a day of burn-in, diurnal', _goals_met(
             'synthetic diurnal')),
    # stop 80: profiles no default was chosen on (held out), after a
    # day of burn-in
    spec('consolidation/heldout80_w1b1.json',
         'goals met after a day of burn-in, churn (held out)', _goals_met(
             'synthetic churn')),
    spec('consolidation/heldout80_w1b1.json',
         'goals met after a day of burn-in, heavy_tail (held out)',
         _goals_met('synthetic heavy_tail')),
    spec('consolidation/heldout80_w1b1.json',
         'goals met after a day of burn-in, memory_growth (held out)',
         _goals_met('synthetic memory_growth')),
    spec('ws_curve_streams.json', 'curve allocation, zipf0.8 stream',
         lambda d: dig(d, 'summary', 'zipf0.8', 'curve', 'fraction'),
         fmt='.1f', scale=100.0, unit=' %'),
    # fault campaign (issue 17) and the controller (issue 19)
    spec('faults.json', 'libvirt faults: recovery p50',
         lambda d: dig(d, 'libvirt', 'summary', 'recovery_p50_s')
         or dig(d, 'libvirt', 'recovery_s', 'p50'), unit=' s',
         # the single 600 s run published first, kept in the file
         before=('faults.json', None,
                 lambda d: dig(d, 'libvirt_before_repeats', 'recovery_s',
                               'p50'))),
    spec('faults.json', 'libvirt faults: recovery p99',
         lambda d: dig(d, 'libvirt', 'summary', 'recovery_p99_s')
         or dig(d, 'libvirt', 'recovery_s', 'p99'), unit=' s',
         # the single 600 s run published first, kept in the file
         before=('faults.json', None,
                 lambda d: dig(d, 'libvirt_before_repeats', 'recovery_s',
                               'p99'))),
    spec('faults.json', 'libvirt faults: polls that raised (all runs)',
         lambda d: dig(d, 'libvirt', 'polls_raised'), fmt='d',
         goal=(0, 0), goal_text='0', count=True),
    spec('faults.json', 'memstore SIGKILL: acknowledged pages lost',
         lambda d: dig(d, 'memstore', 'acknowledged_pages_lost'), fmt='d',
         goal=(0, 0), goal_text='0', count=True),
    spec('faults.json', 'memstore SIGKILL: time to serve again',
         lambda d: _events(d, 'memstore', 'time_to_serve_again_s'),
         unit=' s',
         before=('faults.json', None,
                 lambda d: dig(d, 'memstore_before_repeats',
                               'time_to_serve_again_s', 'p50'))),
    spec('faults.json', 'agent SIGKILL: recovery',
         lambda d: _events(d, 'services', 'recovery_agent_sigkill_s'),
         fmt='.1f', unit=' s',
         before=('faults.json', None,
                 lambda d: dig(d, 'services_before_repeats',
                               'recovery_agent_sigkill_s', 'p50'))),
    spec('faults.json', 'services: reports lost (sequence gaps)',
         lambda d: dig(d, 'services', 'seq_gaps_in_stored_runs'), fmt='d',
         goal=(0, 0), goal_text='0', count=True),
    spec('faults.json', 'disk full: runs with memstore dead or the VM '
         'paused',
         _diskfull_failed_runs, fmt='d', goal=(0, 0), goal_text='0',
         count=True),
    spec('faults.json', 'load, 20 guests: poll p99',
         lambda d: dig(d, 'load', 'summary', 'poll_p99_s')
         or dig(d, 'load', 'poll_s', 'p99'), unit=' s',
         goal=(None, 5.0), goal_text='< 5 s (the poll interval)',
         before=('faults.json', None,
                 lambda d: dig(d, 'load_before_repeats', 'poll_s', 'p99'))),
    # the same section after [badis] spread_rounds (64dd4ef): the
    # repeats before it are the "before"
    spec('faults_spread.json', 'load, 20 guests: poll p99, rounds spread',
         lambda d: dig(d, 'load', 'summary', 'poll_p99_s'), unit=' s',
         goal=(None, 5.0), goal_text='< 5 s (the poll interval)',
         before=('faults.json', None,
                 lambda d: dig(d, 'load', 'summary', 'poll_p99_s'))),
    spec('controller_scale.json', '1000 hosts, 1 controller: latency p99',
         _controller(1000, 1, 'latency_p99_s', 'latency_s', 'p99'),
         unit=' s',
         before=('controller_scale_before_repeats.json', None,
                 _controller(1000, 1, None, 'latency_s', 'p99'))),
    spec('controller_scale.json', '1000 hosts, 1 controller: lost or doubled',
         _controller(1000, 1, 'lost_or_doubled', 'lost_or_doubled'),
         fmt='d', goal=(0, 0), goal_text='0', count=True),
    # before: the repeats of the same bench before the cheaper
    # store_report (controller_scale_3000_before_ingest.json)
    spec('controller_scale_3000.json',
         '3000 hosts, 1 controller: latency p99',
         _controller(3000, 1, 'latency_p99_s', 'latency_s', 'p99'),
         unit=' s',
         before=('controller_scale_3000_before_ingest.json', None,
                 _controller(3000, 1, 'latency_p99_s'))),
    spec('controller_scale_3000.json',
         '3000 hosts, 1 controller: lost or doubled',
         _controller(3000, 1, 'lost_or_doubled', 'lost_or_doubled'),
         fmt='d', goal=(0, 0), goal_text='0', count=True),
    # 10 000 hosts overload the 2-core machine: the lag (reports queued
    # in the senders) is the figure, and no acknowledged report lost
    spec('controller_scale_10000.json',
         '10000 hosts, 2 controllers: lag p99',
         _controller(10000, 2, 'lag_p99_s'), fmt='.0f', unit=' s'),
    spec('controller_scale_10000.json',
         '10000 hosts, 1 controller: lost or doubled',
         _controller(10000, 1, 'lost_or_doubled'),
         fmt='d', goal=(0, 0), goal_text='0', count=True),
    spec('controller_scale_10000.json',
         '10000 hosts, 2 controllers: lost or doubled',
         _controller(10000, 2, 'lost_or_doubled'),
         fmt='d', goal=(0, 0), goal_text='0', count=True),
    # group commit (stop 67), the defaults; before: one transaction per
    # report, the same afternoon, alternated with them
    spec('controller_scale_10000_groupcommit/writers2.json',
         '10000 hosts, 1 controller, group commit: lag p99',
         _controller(10000, 1, 'lag_p99_s'), fmt='.1f', unit=' s',
         before=('controller_scale_10000_groupcommit/batch1.json', None,
                 _controller(10000, 1, 'lag_p99_s'))),
    spec('controller_scale_10000_groupcommit/writers2.json',
         '10000 hosts, 1 controller, group commit: lost or doubled',
         _controller(10000, 1, 'lost_or_doubled'),
         fmt='d', goal=(0, 0), goal_text='0', count=True),
]


Row = collections.namedtuple('Row', [
    'file', 'figure', 'value', 'n', 'interval', 'versions', 'before',
    'goal', 'verdict', 'summary'])


def _num(x, s):
    if s.fmt == 'd':
        return '%d' % round(x * s.scale)
    return format(x * s.scale, s.fmt)


def _verdict(s, summ):
    if s.goal is None:
        return '-'
    if summ is None:
        return 'no data'
    low, high = s.goal
    if s.count:
        x = summ['mean']
        ok = (low is None or x >= low) and (high is None or x <= high)
        return 'met' if ok else 'not met'
    return discipline.verdict(summ, low=low, high=high)


def build_rows(loader, specs=SPECS):
    rows = []
    for s in specs:
        doc = loader.load(s.file)
        raw = s.get(doc) if doc is not None else None
        text = raw if isinstance(raw, str) else None
        summ = None if text else as_summary(raw)
        if text:
            value, n, interval = text, '', ''
        elif summ is None:
            value, n, interval = 'missing', '', ''
        else:
            value = _num(summ['mean'], s) + s.unit
            n = '-' if s.count else str(summ['n'])
            interval = ('[%s, %s]' % (_num(summ['low'], s),
                                      _num(summ['high'], s))
                        if summ['low'] is not None and
                        summ['high'] is not None else
                        ('exact count' if s.count else 'none (n=1)'))
        before = '-'
        if s.before:
            bfile, rev, bget = s.before
            bdoc = loader.load(bfile, rev)
            braw = bget(bdoc) if bdoc is not None else None
            bsum = as_summary(braw) if not isinstance(braw, str) else None
            if isinstance(braw, str):
                before = braw
            elif bsum is not None:
                before = _num(bsum['mean'], s) + s.unit
                if bsum['low'] is not None and bsum['high'] is not None:
                    before += ' [%s, %s]' % (_num(bsum['low'], s),
                                             _num(bsum['high'], s))
                before += ' (n=%d' % bsum['n'] + (
                    ', %s)' % {BASE_REV: 'before issue 20',
                               'first': 'first published',
                               'previous': 'previous version'}.get(
                                   rev, 'recorded in %s' % bfile
                                   if rev is None else 'at %s' % rev))
        versions = versions_cell(doc)
        rows.append(Row(s.file, s.figure, value, n, interval, versions,
                        before, s.goal_text or '-', _verdict(s, summ),
                        summ))
    return rows


def table(rows):
    return discipline.markdown_table(
        ['result file', 'figure', 'mean', 'n', '95 % interval',
         'versions', 'published before', 'goal', 'verdict'],
        [['`%s`' % r.file, r.figure, r.value, r.n, r.interval, r.versions,
          r.before, r.goal, r.verdict] for r in rows])


# Why a result file is outside the table or still lacks intervals
# (prose, no figures).
WHY = {
    'badis13-ablation': 'per-case ablation runs of issue 13 (one run per '
                        'switch), exploratory',
    'badis13-final': 'issue 13 acceptance runs, one per schedule',
    'badis13-s3': 'issue 13 session 3 runs, one per schedule and case',
    'badis14': 'issue 13 session 4 (working-set curve), one run per case',
    'badis_base_sensitivity': 'one-off sensitivity run of the truth base',
    'badis_no_sampling': 'one-off run without smaps sampling',
    'badis_repeats': 'the files under the W1-W5 series (its badis.json '
                     'is in the table): before-768835a/ holds the one '
                     'repeat before the calibration fix',
    'badis17': 'issue 13 session 7 (shrink floor), alternated slots',
    'badis18': 'issue 13 session 8: the pattern suite with an oracle run, '
               'five slots of paired configurations',
    'badis_repeats8': 'one W1-W5 repeat of session 8\'s defaults, beside '
                      'the three of badis_repeats',
    'memstore_pwrite': 'issue 18: random writes after the pwrite change, '
                       'old and new builds in the same repeats',
    'memstore_readwake': 'issue 18: the READ-worker wake fix, old and new '
                         'builds in the same repeats',
    'badis_single_runs': 'the W1-W5 single runs published first (the '
                         '"before" of badis.json; README there)',
    'badis_series': 'the W1-W5 series\' machine load and console '
                    'output, and diag-old/diag-new: W1 and W4 at the old '
                    'and the new code on the same machine (README there)',
    'badis19': 'issue 13 session 10: vg_no_shrink on the pattern suite, '
               'two alternated slots',
    'badis20': 'issue 13 stop 30: pinned_used_bound on and off, W1-W5 '
               'and one slot of the pattern suite (README there)',
    'badis21': 'issue 13 stop 33: the pattern suite at the issue\'s 120 s '
               'runs, three lock slots: the defaults, shrink_floor and '
               'the production ratio of time slice to round (README '
               'there)',
    'badis22': 'issue 13 stop 34: the pattern suite at 120 s with the '
               'floor in the estimate and a VM\'s own time slice, two '
               'lock slots, and W1-W5 (README there)',
    'badis23': 'issue 13 stop 35: the pattern suite at 120 s with the '
               'calibration probe and a VM\'s own time slice, one lock '
               'slot, and W1-W5 in one slot (README there)',
    'badis24': 'issue 13 stop 36: the calibration probe below what the '
               'guest uses, made the default, one lock slot of the '
               'pattern suite and W1-W5 in one slot (README there)',
    'badis25': 'issue 13 stop 37: shrink floors that a probe, a step and '
               'a steady shortage move, made the default, one lock slot '
               'of the pattern suite and W1-W5 in one slot (README there)',
    'badis26': 'issue 13 stop 38: shrink-floor raises and the floor in '
               'the estimate (both left off), a second full slot of the '
               'defaults and an observe run (what sampling costs), W1-W5 '
               'in one slot (README there)',
    'badis27': 'issue 13 stop 39: a shrink floor counted in the estimate '
               'once a shortage confirmed it, made the default; two lock '
               'slots of the pattern suite and two of W1-W5 (README '
               'there)',
    'badis28': 'issue 13 stop 40: the floor\'s reference sample, the '
               'working-set curve again, raises that hold, floors held '
               'at the demand (options, off), what a swap-in costs the '
               'bed; hot set and load-then-idle in nine lock slots, '
               'W1-W5 (README there)',
    'badis29': 'issue 13 stop 41: the three floor options together '
               '(all3) and the raises alone (rfix) beside the defaults '
               'on the whole pattern suite in alternated lock slots, '
               'W1-W5 (README there)',
    'badis30': 'issue 13 stop 42: the swap-in budget (left off) beside '
               'the defaults on the whole pattern suite in two alternated '
               'lock slots, W1-W5 (README there)',
    'badis31': 'issue 13 stop 43: a descent in steps as one shrink for '
               'the rise test, on and off, on the whole pattern suite in '
               'two alternated lock slots, an observe run, the floor\'s '
               'step back and slow start for shrinks (off), W1-W5 '
               '(README there)',
    'badis32': 'issue 13 stop 44: the probe read-back fraction (off) '
               'and slow start with it, beside the defaults, and a short '
               'round\'s demand half-way to the booking, on the whole '
               'pattern suite in two lock slots with agent logs and '
               'memwork progress; W1-W5 (README there)',
    'badis33': 'issue 13 stop 45: the time slice\'s trade-off (4, 12 '
               'and 30 s on the bench\'s 1 s rounds) and no shrink while '
               'the guest allocates (off), on the whole pattern suite in '
               'alternated lock slots (README there)',
    'badis34': 'issue 13 stop 46: the calibration\'s rise in the moving '
               'average and floors held by the guest\'s use (both off), '
               'on the whole pattern suite in four lock slots, W1-W5 '
               '(README there)',
    'badis35': 'issue 13 stop 47: calibration_rebase with the probe '
               'a few pages do not answer, shortages at a floor that '
               'held and steps that moved the balloon (all off), on the '
               'pattern suite in six lock slots and a DEBUG diagnosis '
               'run; no W1-W5 (README there)',
    'badis36': 'issue 13 stop 48: shrink_floor_held_shortage as '
               'amended and no_shrink_below_estimate (both off), on the '
               'pattern suite in four lock slots, and W1-W5 one run per '
               'case (README there)',
    'badis37': 'issue 13 stop 49: the paged guest model\'s candidate '
               '(no_shrink_below_estimate, hindsight_rounds, '
               'calibration_probe_min_fraction) beside the defaults on the '
               'pattern suite in lock slots, and W1-W5 (README there); '
               'the defaults since stop 50',
    'badis38': 'issue 13 stop 50: the new Badis defaults against the '
               'old on TCG (one slot, pooled with badis37) and '
               'calibration_probe_max_gap_fraction on load-then-idle '
               '(README there)',
    'model1': 'issue 13 stop 49: Badis options screened on the paged '
              'guest model (bench_model.py), many seeds, paired to the '
              'defaults (README there; h5 and k1: stop 50, k1 at KVM '
              'costs)',
    'badis39': 'issue 13 stop 51: calibration_reprobe on the whole '
               'suite, one slot disturbed by model runs beside it; no '
               'decision (README there)',
    'badis40': 'issue 13 stop 51: the pattern suite at 512 MiB with 320 '
               'MiB of data, vg_headroom_fraction against the threshold '
               'alone (README there)',
    'badis41': 'issue 13 stop 52: what judged the 512 MiB suite (the '
               'none reference drifts with the host), the suite with a '
               'none twin beside each run at 512 and 256 MiB, and the '
               'load and first descent at 512 MiB (README there)',
    'badis42': 'issue 13 stop 53: shrink_slow_start_kb beside the '
               'defaults in the same slots, interleaved per pattern and '
               'on a host made slow on purpose (the host\'s speed moves '
               'Zipf\'s dips); pinned_drop_rebase (README there)',
    'badis43': 'issue 13 stop 54: the slow start as the default beside '
               'it off, interleaved per pattern at 256 MiB, Zipf 0.8 at '
               '512 MiB on a slow host, and W1-W5 (README there)',
    'badis44': 'issue 13 stop 55: the defaults after the calibration '
               'hold moved into the step, beside stop 54\'s tree, '
               'interleaved per pattern at 256 MiB (README there)',
    'badis45': 'issue 13 stop 56: a hindsight floor released by a probe '
               'at the allocation of its read-backs, the probe at the '
               'floor and calibration_reprobe_answers, beside stop 55\'s '
               'tree at 256 MiB; Zipf 0.8 at 300 s (README there)',
    'controller_scale_10000_groupcommit': (
        'issue 19 stop 67: group commit of reports at 10 000 hosts, one '
        'file per configuration (README there)'),
    'badis73_slice': 'issue 13 stop 73: time_slice_max 60 s screened on '
                     'the model under both reclaim rules, and three TCG '
                     'runs of W1-W5 with it (the third at stop 74; README '
                     'there)',
    'badis74_slice': 'issue 13 stop 74: a VM\'s own time slice in '
                     'slices: TCG pattern pairs beside the defaults, a '
                     'balloon probe\'s swap-ins left out of its '
                     'recurrences, the model under both reclaim rules, '
                     'a floor reference rule tried and dropped, and why '
                     'the slice stayed off then (README there)',
    'badis77_first': 'issue 13 stop 77: a VM\'s own time slice kept '
                     'while its working set comes back without swapping '
                     '(time_slice_reuse, the default since) and '
                     'lengthened from its first round (time_slice_from_'
                     'first, off) on the model and TCG (README there)',
    'badis77_reuse_w15': 'issue 13 stop 77: W1-W5 repeated at the stop-77 '
                         'defaults (time_slice_reuse on), against '
                         'badis73_repeats\' design (README there)',
    'badis84_scan': 'issue 13 stop 84: the held-out scan pattern (a '
                    'quarter touched often, a full sweep every third of '
                    'the run) on the model at both clocks and on TCG, '
                    'beside the oracle (README there)',
    'badis86_doubling': 'issue 13 stop 86: what a rise looks like on '
                        'TCG at 512 MiB (DEBUG logs), a doubling ramp and '
                        'a read-back needed for a recurrence (both '
                        'dropped), and rise_hold_no_grow (on since stop '
                        '87) on TCG pairs and the model (README there)',
    'badis89_sqlite': 'issue 13 stop 89: a second real program, Debian\'s '
                      'sqlite3 under power-law point lookups, on TCG twin '
                      'pairs beside observe, A/A pairs and the baselines '
                      '(README there)',
    'badis90_probe': 'issue 13 stop 90: the calibration probe on a paced '
                     'sqlite3 (its step, its read-back, a budget for the '
                     'read\'s slope) on TCG twin pairs alternating with '
                     'the changes off, and the paged guest model with '
                     'sqlite-like patterns (README there)',
    'badis91_reached': 'issue 13 stop 91: a probe whose balloon stopped '
                       'short lowers the correction only as far as it got '
                       '(stop 90\'s CI failure): repeats of the functional '
                       'test on TCG and the paged guest model with the '
                       'option off (README there)',
    'badis92_suite': 'issue 13 stop 92: the whole pattern suite, redis '
                     'and the held-out patterns at the defaults that '
                     'landed with stop 91, two pair sets of the suite at '
                     '256 MiB and the rises at 512 MiB (README there)',
    'badis88_periodic': 'issue 13 stop 88: the held-out periodic job at '
                        'the current defaults interleaved with stop 80\'s '
                        'tree on TCG twin pairs (README there)',
    'badis88_w4s_bisect': 'issue 13 stop 88: a bisection of W4 static '
                          'between stop 77\'s tree and stop 87\'s that '
                          'found the bed\'s spells, not a commit; W1-W5 '
                          'on both trees alternating schedule by schedule '
                          '(README there)',
    'badis87_defaults': 'issue 13 stop 87: W1-W5 repeated at the stop-87 '
                        'defaults (rise_hold_no_grow on), with it off and '
                        'with the stop-77 option set on the same tree '
                        '(README there)',
    'badis85_rise': 'issue 13 stop 85: the rises at 512 MiB on TCG '
                    'beside the oracle, the shortage jump on fresh '
                    'allocation (off), and two changes tried and not '
                    'kept: the time slice holding the need, the ramp '
                    'only in evicting rounds (README there)',
    'badis84_size': 'issue 13 stop 84: the suite and the held-out '
                    'patterns on TCG at 512 MiB with 320 MiB of data at '
                    'the current defaults (README there)',
    'badis83_rate': 'issue 13 stop 83: probe_answer_rate and '
                    'probe_over_demand (both on since) on the model at '
                    'production\'s and the bench\'s clock, and TCG twin '
                    'pair sets (README there)',
    'badis82_early': 'issue 13 stop 82: calibration_probe_early on and '
                     'off on the model at production\'s and the bench\'s '
                     'clock, and one TCG twin pair set (README there)',
    'badis81_production': 'issue 13 stop 81: the paged guest model on '
                          'production\'s clock (bench_model --timing '
                          'production), KVM\'s costs, beside the oracle, '
                          'end_round_on_thrashing on and off (README '
                          'there)',
    'badis81_thrash': 'issue 13 stop 81: end_round_on_thrashing on and off '
                      'on the model at the bench\'s clock, both reclaim '
                      'rules (README there)',
    'badis81_periodic': 'issue 13 stop 81: the held-out periodic job at the '
                        'current defaults beside the one-poll-late oracle, '
                        'two TCG twin pairs (README there)',
    'badis78_probe_step': 'issue 13 stop 78: a larger first calibration '
                          'probe (pinned_probe_step_kb 16 and 32 MiB) on '
                          'the model, not taken (README there)',
    'badis76_repeats': 'issue 13 stop 76: a third pair of phases and '
                       'phases up and more pairs of redis at the stop-75 '
                       'defaults (each case\'s median over its pairs, '
                       'medians.py), and the two held-out patterns added '
                       'at stop 76, growth and periodic',
    'badis76_fixed_work': 'issue 13/20 stop 76: the fixed-work slowdown '
                          'of Badis at the stop-75 defaults on all ten '
                          'W1-W5 schedules, 3 repeats (the rows above)',
    'badis76_vgentry': 'issue 13 stop 76: vg_entry_grow (the round whose '
                       'sample reached the allocation asks the estimate '
                       'and its rise once more) on the model and TCG '
                       '(README there)',
    'badis75_suite': 'issue 13 stop 75: the whole pattern suite (seven '
                     'memwork patterns and redis) and the held-out '
                     'patterns, both starts, at the stop-75 defaults, a '
                     'VM\'s own time slice on (README there)',
    'badis73_repeats': 'issue 13 stop 73: W1-W5 repeated at the stop-72 '
                       'defaults, the reference of badis73_noraise '
                       '(README there)',
    'badis72': 'issue 13 stop 72: shortage_ramp (a second short round '
               'asks one more round of growth ahead) on the model under '
               'both reclaim rules, and on TCG beside the defaults: '
               'phases and phases up in two rounds, the hot sets and '
               'load-then-idle, W1-W5 (README there)',
    'badis71': 'issue 13 stop 71: reentry_horizon_rounds (swap-ins of '
               'pages evicted long ago are no shortage while under the '
               'swap-in bound) at 10, 20 and 30 rounds on the model under '
               'both reclaim rules, and on TCG beside the defaults '
               '(README there)',
    'badis70': 'issue 13 stop 70: probe_in_use_evidence (a probe counts '
               'memory in use given up without a swap-out) on the model '
               'with and without its new swap cache (--writeback-surplus) '
               'and on TCG beside the stop 69 defaults, with the first '
               'probe\'s burst answered (burst0/); made the default '
               '(README there)',
    'badis69': 'issue 13 stop 69: pinned_drop_rebase and the new '
               'probe_chain (probes in a row after one that lowered the '
               'correction) on the model under both reclaim rules and on '
               'TCG beside the stop 68 defaults, two rounds; both made '
               'the defaults (README there)',
    'badis68': 'issue 13 stop 68: the paged guest model\'s second-chance '
               'reclaim (--reclaim clock) beside its LRU on the whole '
               'suite; probe_burst_s (three versions) and '
               'probe_rise_written on the model under both rules and on '
               'TCG beside the defaults, both made the defaults (README '
               'there)',
    'badis66': 'issue 13 stop 66: [badis] hindsight_recent_only on TCG, '
               'the slow hot set and the suite\'s hot set, the defaults '
               'and the option alternated; probe_readback_fraction beside '
               'the defaults on three suite patterns (README there)',
    'badis65': 'issue 13 stop 65: the held-out patterns (parameters no '
               'default was tuned on) on the model at two sizes and four '
               'of them on TCG (README there)',
    'badis64': 'issue 13 stop 64: more redis pairs, unpinned (Badis '
               'from boot and from a loaded start, A/A pairs), judged with '
               'stop 63\'s on the suite\'s median and worst (README '
               'there)',
    'badis53': 'issue 13 stop 63: redis\'s vm_over noise on this bed '
               '(A/A pairs, unpinned and pinned to a core each) and Badis '
               'and observe beside their twins (README there)',
    'badis52': 'issue 13 stop 62: the read\'s slope gate '
               '(calibration_probe_warm_slope) and the calibration that '
               'follows a load (calibration_follow_rounds) on TCG (redis, '
               'hot set, Zipf, load-then-idle, twins) and on the paged '
               'guest model with its kv pattern, 256 and 512 MiB '
               '(README there)',
    'badis51': 'issue 13 stop 61: a read over rounds before each '
               'calibration probe (calibration_probe_warm_rounds) on TCG '
               '(Zipf 0.8, hot set, load-then-idle, twins) and on the '
               'paged guest model, held-out seeds and 512 MiB with KVM '
               'costs (README there)',
    'badis50': 'issue 13 stop 60: the production back-end (sampled '
               'pages, KVM) on the paged guest model: the calibration at '
               'the estimate, 400 and 1000 pages, ws_curve, pooling; the '
               'simulated hypervisor (README there)',
    'badis49': 'issue 13 stop 59: the real program (redis) with the '
               'defaults against ws_curve on TCG at 300 s, three slots; '
               'ws_curve on the paged guest model with W1-W5 (README '
               'there)',
    'badis48': 'issue 13 stop 58: W1-W5 on TCG with the defaults after '
               'the probe-floor changes, against stop 53; swap readahead '
               '(pages read per fault) and read-backs judged by faults '
               '(README there)',
    'badis47': 'issue 13 stop 58: the figure the controller packs on '
               '(WSS^max_avg, and with the shrink floor) against the '
               'truth on TCG and the paged guest model (README there)',
    'badis46': 'issue 13 stop 57: the pattern suite at 300 s with the '
               'defaults, second-half errors, and a floor\'s raise that '
               'kept where the guest read back (README there)',
    'model4': 'issue 13 stop 56: the same on the paged guest model at '
              '120 and 360 s, and what run length does to each pattern '
              '(README there)',
    'model3': 'issue 13 stop 55: what the calibration probe costs on the '
              'paged guest model, and a shallow first probe tried and '
              'not kept (README there)',
    'model2': 'issue 13 stop 51: the paged guest model at 512 MiB (the '
              'VG deadlock, vg_headroom_fraction, the calibration '
              'window; README there)',
    'badis_fixed_work': 'the raw log behind badis_fixed_work/badis.json '
                        '(in the table)',
    'fuzz': 'fuzzing campaign: crash counts, not a timed figure',
    'consolidation_before_issue20.json': 'the pre-issue-20 repeats, kept '
                                         'as the "before" figures',
    'controller_scale_rollups.json': 'database sizes per row (not timing); '
                                     'one run per setting',
    'badis.jsonl': 'the raw log behind badis.json',
    'mutualization_shortage.json': 'per-scenario detail written by '
                                   '--aggregate; the table summarizes the '
                                   'series log itself, which may be newer',
    'ws_curve_streams_h64.json': 'the same streams with a 64 s horizon',
    'consolidation': 'planner scaling and the trade-off sweeps of issue 19 '
                     '(planner_ab.json and tradeoff.json are in the table)',
}


def other_files(loader, rows, root=ROOT):
    """Result files (json, jsonl) the table does not cover, grouped by
    their top directory under results/: [(name, files, with intervals,
    with versions, why)]."""
    covered = {r.file for r in rows}
    base = os.path.join(root, RESULTS_REL)
    groups = collections.OrderedDict()
    for dirpath, dirs, files in sorted(os.walk(base)):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith(('.json', '.jsonl')):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), base)
            if rel in covered:
                continue
            top = rel.split(os.sep)[0]
            groups.setdefault(top, []).append(rel)
    out = []
    for top, files in groups.items():
        docs = [loader.load(f) for f in files]
        out.append((top, len(files),
                    sum(1 for d in docs if has_interval(d)),
                    sum(1 for d in docs if d is not None and
                        has_versions(d)),
                    WHY.get(top, '')))
    return out


def has_interval(doc, depth=0):
    """True if the file holds any figure with a 95 % interval (a summary
    with n >= 2 and both bounds)."""
    if isinstance(doc, dict):
        if doc.get('n', 0) and doc.get('n', 0) >= 2 and \
                doc.get('low') is not None and doc.get('high') is not None:
            return True
        if depth < 6:
            return any(has_interval(x, depth + 1) for x in doc.values()
                       if isinstance(x, (dict, list)))
    if isinstance(doc, list) and depth < 6:
        return any(has_interval(x, depth + 1) for x in doc[:20])
    return False


def lacking(rows):
    """Files of the table with a headline figure without an interval
    (n = 1, not a count) or without versions."""
    out = collections.OrderedDict()
    for r in rows:
        why = []
        if r.value == 'missing':
            why.append('figure missing')
        if r.summary is not None and r.summary['low'] is None and \
                r.interval != 'exact count':
            why.append('no interval')
        if r.versions == 'no':
            why.append('no versions')
        elif r.versions.startswith(('not recorded', 'partly')):
            why.append('versions ' + r.versions.replace(
                'partly; the rest', 'partly recorded, the rest'))
        if why:
            out.setdefault(r.file, set()).update(why)
    return [(f, sorted(w)) for f, w in out.items()]


def render(loader):
    rows = build_rows(loader)
    lines = [BEGIN, '', table(rows), '',
             'Headline figures whose file still lacks an interval or '
             'versions:', '']
    missing = lacking(rows)
    for f, why in missing:
        lines.append('- `%s`: %s' % (f, ', '.join(why)))
    if not missing:
        lines.append('- none')
    lines += ['', 'Result files outside the table (grouped by directory): '
              'files, how many hold any 95 % interval, how many record '
              'versions:', '',
              discipline.markdown_table(
                  ['result files', 'files', 'with an interval',
                   'with versions', 'why outside the table'],
                  [['`%s`' % t, n, i, v, w]
                   for t, n, i, v, w in other_files(loader, rows)]),
              '', END]
    return '\n'.join(lines) + '\n'


def splice(existing, generated):
    """Replace the generated block of ``existing`` (between BEGIN and
    END), keeping the hand-written text around it."""
    if existing and BEGIN in existing and END in existing:
        head = existing.split(BEGIN, 1)[0]
        tail = existing.split(END, 1)[1]
        return head + generated.rstrip('\n') + tail
    return generated


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', help='write (splice into) this file')
    args = ap.parse_args(argv)
    text = render(Loader())
    if args.out:
        existing = None
        if os.path.exists(args.out):
            with open(args.out) as f:
                existing = f.read()
        with open(args.out, 'w') as f:
            f.write(splice(existing, text))
    else:
        sys.stdout.write(text)


if __name__ == '__main__':
    main()
