"""Benchmark discipline: repeats, randomized order, intervals, provenance.

One small module every benchmark can use (issue 20, item 1)::

    from tests.benchmarks import discipline

    rec = discipline.Record(seed=1)              # load average, versions
    order = rec.order(cases, repeats=5)          # seeded shuffle, recorded
    for case, rep in order:
        values[case].append(run(case, rep))
    rec.finish()                                 # load average after
    s = discipline.summarize(values['a'])        # mean, 95 % CI (Student t)
    discipline.fmt(s, '.2f')                     # '3.26 ± 0.12 (n=5)'
    discipline.goal_met(s, low=2.5)              # whole interval >= 2.5?
    result['discipline'] = rec.as_dict()

Rules:

* every headline figure is the mean of ``n`` repeats with a two-sided
  95 % confidence interval from Student's t distribution (``n - 1``
  degrees of freedom): ``mean ± t * sd / sqrt(n)``; with ``n = 1`` the
  half-width is unknown (``None``) and no goal counts as met;
* cases run in a random order drawn from a recorded seed, so a drift of
  the machine (other sessions share it) spreads over all cases instead of
  biasing the last ones;
* a goal is met only if the whole interval is inside it;
* the result file records the versions of every component that is
  installed (``None`` otherwise) and the load average before and after.
"""

import concurrent.futures
import contextlib
import fcntl
import json
import math
import os
import platform
import random
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Two-sided 95 % quantiles of Student's t (t_{0.975, df}).
_T975 = {
    1: 12.7062, 2: 4.3027, 3: 3.1824, 4: 2.7764, 5: 2.5706, 6: 2.4469,
    7: 2.3646, 8: 2.3060, 9: 2.2622, 10: 2.2281, 11: 2.2010, 12: 2.1788,
    13: 2.1604, 14: 2.1448, 15: 2.1314, 16: 2.1199, 17: 2.1098,
    18: 2.1009, 19: 2.0930, 20: 2.0860, 21: 2.0796, 22: 2.0739,
    23: 2.0687, 24: 2.0639, 25: 2.0595, 26: 2.0555, 27: 2.0518,
    28: 2.0484, 29: 2.0452, 30: 2.0423, 40: 2.0211, 60: 2.0003,
    120: 1.9799,
}
_Z975 = 1.959964


def t_quantile(df):
    """t_{0.975} for ``df`` degrees of freedom (the 95 % two-sided
    multiplier): exact table values to 4 decimals up to 30, then linear
    in 1/df between 30, 40, 60, 120 and infinity (error < 1e-3)."""
    if df < 1:
        raise ValueError('need at least one degree of freedom')
    df = int(df)
    if df in _T975:
        return _T975[df]
    knots = [30, 40, 60, 120]
    for lo, hi in zip(knots, knots[1:]):
        if lo < df < hi:
            a, b = 1.0 / lo, 1.0 / hi
            f = (1.0 / df - b) / (a - b)
            return _T975[hi] + f * (_T975[lo] - _T975[hi])
    f = 120.0 / df
    return _Z975 + f * (_T975[120] - _Z975)


def summarize(values):
    """Mean and 95 % interval of repeated measurements.

    Returns ``{'n', 'mean', 'sd', 'half_width', 'low', 'high', 'min',
    'max', 'values'}``; ``sd`` is the sample standard deviation (n - 1);
    with one value ``sd``, ``half_width``, ``low`` and ``high`` are None.
    Values that are None are left out (a failed repeat).
    """
    xs = [float(v) for v in values if v is not None]
    n = len(xs)
    if not n:
        raise ValueError('no values to summarize')
    mean = math.fsum(xs) / n
    out = {'n': n, 'mean': mean, 'min': min(xs), 'max': max(xs),
           'values': xs, 'sd': None, 'half_width': None, 'low': None,
           'high': None}
    if n > 1:
        sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
        hw = t_quantile(n - 1) * sd / math.sqrt(n)
        out.update(sd=sd, half_width=hw, low=mean - hw, high=mean + hw)
    return out


def fmt(summary, spec='.3g', scale=1.0, unit=''):
    """``'mean ± half-width (n=N)'`` for Markdown tables (``scale``
    multiplies both, e.g. 100 for a percentage)."""
    mean = format(summary['mean'] * scale, spec)
    if summary['half_width'] is None:
        return '%s%s ± ? (n=%d)' % (mean, unit, summary['n'])
    return '%s ± %s%s (n=%d)' % (mean, format(summary['half_width'] * scale,
                                              spec), unit, summary['n'])


def goal_met(summary, low=None, high=None):
    """True only if the whole interval lies inside ``[low, high]`` (either
    bound may be None). An interval of unknown width (n = 1) never
    counts as met."""
    if summary['half_width'] is None:
        return False
    if low is not None and summary['low'] < low:
        return False
    if high is not None and summary['high'] > high:
        return False
    return True


def markdown_table(header, rows):
    """A Markdown table from a header list and rows of cells."""
    lines = ['| ' + ' | '.join(header) + ' |',
             '|' + '|'.join('---' for _ in header) + '|']
    lines += ['| ' + ' | '.join(str(c) for c in r) + ' |' for r in rows]
    return '\n'.join(lines)


def closing_lines(result):
    """The end of a result's Markdown: the run's conditions (if any),
    what the benchmark shows and what it does not (``result['note']``),
    and the machine's load around the run."""
    lines = []
    if result.get('conditions'):
        lines += ['', 'Conditions: ' + result['conditions']]
    lines += ['', '## What this shows and what it does not', '',
              result['note'], '',
              'Load average before / after: %s / %s.' % (
                  result['discipline']['load_before'],
                  result['discipline']['load_after'])]
    return lines


def case_order(cases, repeats=1, seed=0):
    """Every (case, repeat) pair in a random order drawn from ``seed``."""
    pairs = [(c, r) for r in range(repeats) for c in cases]
    random.Random(seed).shuffle(pairs)
    return pairs


def blocked_order(cases, repeats=1, seed=0):
    """Every (case, repeat) pair, repeat by repeat (all of repeat 0, then
    all of repeat 1, ...), the cases shuffled afresh inside each repeat
    by one generator drawn from ``seed``.

    Unlike ``case_order`` the runs of one repeat stay close in time, so
    a ratio between two cases of the same repeat (``paired_ratio``)
    compares runs that met the same machine state, while no case is
    always first or last."""
    rng = random.Random(seed)
    pairs = []
    for r in range(repeats):
        block = list(cases)
        rng.shuffle(block)
        pairs += [(c, r) for c in block]
    return pairs


def within_budget(order, budget_s, clock=None):
    """Yield ``(i, case, repeat)`` of ``order`` until ``budget_s`` seconds
    (0 or None: no limit) have passed since the first; then say how many
    runs were done and stop, so a series ends inside its lock share."""
    clock = clock or time.monotonic
    t0 = clock()
    for i, (case, rep) in enumerate(order):
        if budget_s and clock() - t0 > budget_s:
            print('budget spent: %d of %d runs done' % (i, len(order)),
                  flush=True)
            return
        yield i, case, rep


def stop_deadline(hhmm, now):
    """The epoch time of the UTC ``HH:MM`` nearest to ``now`` (within 12
    hours either way): a stop time a little after midnight is tomorrow's
    for a series started the evening before (comparing the strings would
    stop it at once), and one just past is past (not tomorrow's); None
    without one."""
    if not hhmm:
        return None
    h, m = (int(x) for x in hhmm.split(':'))
    day = now - now % 86400
    t = day + h * 3600 + m * 60
    return min((t - 86400, t, t + 86400), key=lambda c: abs(c - now))


def paired_ratio(numerators, denominators):
    """Geometric mean and 95 % interval of per-repeat ratios.

    ``numerators[i] / denominators[i]`` is the ratio of repeat ``i``
    (pairs where either is None are left out); the interval is Student's
    t on the logarithms of the ratios, taken back with ``exp``, so it is
    multiplicative (a ratio and its inverse get mirrored intervals) and
    never below zero. Returns ``{'n', 'mean' (the geometric mean),
    'low', 'high', 'half_width' (in log space), 'method', 'values' (the
    ratios)}``; with one pair ``low``, ``high`` and ``half_width`` are
    None, as in ``summarize``."""
    if len(numerators) != len(denominators):
        raise ValueError('need as many numerators as denominators')
    ratios = [float(a) / float(b) for a, b in zip(numerators, denominators)
              if a is not None and b is not None]
    if any(r <= 0 for r in ratios):
        raise ValueError('ratios must be positive')
    logs = summarize([math.log(r) for r in ratios])
    out = {'n': logs['n'], 'mean': math.exp(logs['mean']),
           'values': ratios, 'min': min(ratios), 'max': max(ratios),
           'half_width': logs['half_width'], 'low': None, 'high': None,
           'method': 'per-repeat paired ratios; Student t on their '
                     'logarithms (geometric mean, interval exp(mean log '
                     '± t sd / sqrt(n)))'}
    if logs['half_width'] is not None:
        out.update(low=math.exp(logs['low']), high=math.exp(logs['high']))
    return out


def ratio_over_cases(columns):
    """:func:`paired_ratio` of the per-repeat geometric mean over cases:
    ``columns`` holds one list per case of its per-repeat ratios, in the
    same repeat order (a benchmark's "all cases" figure)."""
    per_rep = [math.exp(sum(math.log(c[i]) for c in columns) / len(columns))
               for i in range(len(columns[0]))]
    return paired_ratio(per_rep, [1.0] * len(per_rep))


def verdict(summary, low=None, high=None):
    """``'met'`` if the whole interval is inside ``[low, high]``, ``'not
    met'`` if it lies wholly outside, else ``'undecided'`` (the interval
    straddles a bound, or its width is unknown with n = 1)."""
    if summary.get('low') is None or summary.get('high') is None:
        return 'undecided'
    if goal_met(summary, low=low, high=high):
        return 'met'
    if low is not None and summary['high'] < low:
        return 'not met'
    if high is not None and summary['low'] > high:
        return 'not met'
    return 'undecided'


def combine_verdicts(verdicts):
    """Several goals that must all hold: ``'not met'`` if any is not met,
    else ``'undecided'`` if any is undecided, else ``'met'``."""
    verdicts = list(verdicts)
    if 'not met' in verdicts:
        return 'not met'
    if 'undecided' in verdicts or not verdicts:
        return 'undecided'
    return 'met'


@contextlib.contextmanager
def lock_hold(path, holds=None, label=None, pause=3.0):
    """Hold the file lock ``path`` (flock, as ``flock(1)`` takes it; the
    TCG lock of a shared machine) for one block of runs, so that a long
    benchmark holds it block by block instead of for its whole length;
    no lock when ``path`` is empty. After the release it sleeps
    ``pause`` seconds: flock is not fair, and a process that locks again
    at once would get the lock back before the waiters wake. Appends
    ``{'block', 'waited_s', 'held_s', 'load_after'}`` to ``holds`` when
    given."""
    t0 = time.monotonic()
    f = None
    if path:
        f = open(path, 'a')
        fcntl.flock(f, fcntl.LOCK_EX)
    t1 = time.monotonic()
    try:
        yield
    finally:
        held = time.monotonic() - t1
        if f is not None:
            fcntl.flock(f, fcntl.LOCK_UN)
            f.close()
        if holds is not None:
            holds.append({'block': label, 'waited_s': round(t1 - t0, 1),
                          'held_s': round(held, 1),
                          'load_after': loadavg()})
        if f is not None and pause:
            time.sleep(pause)


@contextlib.contextmanager
def run_pool(workers):
    """A thread pool for a benchmark's runs whose queued runs are
    cancelled when the block raises (a SIGTERM the benchmark turned into
    KeyboardInterrupt, an error): ``ThreadPoolExecutor``'s own exit waits
    for every submitted run, queued ones included, so a benchmark that
    was told to stop went on with all its remaining runs first (stop 88:
    one SIGTERM did not stop bench_badis for minutes). The runs already
    running are not waited for here; the caller's cleanup (destroying
    their guests) ends them."""
    pool = concurrent.futures.ThreadPoolExecutor(workers)
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _stop(signum, frame):
    raise KeyboardInterrupt('SIGTERM')


def run_main(main, name):
    """Run a benchmark's ``main`` as a command: SIGTERM (a kill, a job
    timeout) becomes KeyboardInterrupt like ^C, so that the benchmark's
    cleanup (its guests, its daemons) still runs, and a stop ends it with
    one line on stderr and exit status 130 instead of a traceback. The
    runs finished before are in its JSON-lines file already;
    ``--keep-other-runs`` runs the rest."""
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        main()
    except KeyboardInterrupt as e:
        sys.stderr.write('%s: stopped (%s); the runs finished before it are '
                         'kept in its JSON-lines file\n' % (
                             name, e or 'interrupt'))
        sys.exit(130)
    finally:
        signal.signal(signal.SIGTERM, previous)


# ---------------------------------------------------------------------------
# Provenance


def _first_line(cmd):
    exe = shutil.which(cmd[0])
    if not exe:
        return None
    try:
        out = subprocess.run([exe] + list(cmd[1:]), capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    text = (out.stdout or out.stderr or '').strip()
    return text.splitlines()[0].strip() if text else None


def _version(cmd, pattern=r'(\d+\.\d+(?:\.\d+)?)'):
    line = _first_line(cmd)
    if not line:
        return None
    m = re.search(pattern, line)
    return m.group(1) if m else line


def _git(*args):
    try:
        out = subprocess.run(['git', '-C', ROOT] + list(args),
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def tree_commit(root=None):
    """The commit a copy of the tree was made from (its ``COMMIT`` file,
    which the copy scripts of the results directories write: a run from
    a copy leaves the working tree free to change meanwhile), or None."""
    try:
        with open(os.path.join(root or ROOT, 'COMMIT')) as f:
            text = f.read().strip()
    except OSError:
        return None
    return text if re.fullmatch(r'[0-9a-f]{40}', text) else None


def versions():
    """Versions of every component that is installed, None otherwise."""
    commit = _git('rev-parse', 'HEAD')
    dirty = _git('status', '--porcelain', '--untracked-files=no')
    tree = None if commit else tree_commit()
    libvirt = _version(['libvirtd', '--version']) or _version(
        ['virsh', '--version'])
    return {
        'python': platform.python_version(),
        'memmut_commit': commit or tree,
        # a copy of a commit's files (no git): what it was made from,
        # whether edited since unknown
        'memmut_dirty': bool(dirty) if commit else None,
        'memstore_commit': _git('log', '-1', '--format=%H', '--',
                                'memstore'),
        'qemu': _version(['qemu-system-x86_64', '--version']),
        'libvirt': libvirt,
        'kernel': platform.release() or None,
        'nbdkit': _version(['nbdkit', '--version']),
        'fio': _version(['fio', '--version']),
    }


def write_results(out_dir, name, result, markdown):
    """Write ``<out_dir>/<name>.json`` (``result``) and ``<name>.md``
    (the ``markdown`` text), and print the Markdown."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, name + '.json'), 'w') as f:
        json.dump(result, f, indent=1, sort_keys=True)
    with open(os.path.join(out_dir, name + '.md'), 'w') as f:
        f.write(markdown)
    print(markdown)


def loadavg():
    """(1, 5, 15)-minute load averages, or None where not available."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


class Record:
    """What a benchmark run records besides its figures.

    Created at the start (load average, versions, seed, CPUs); ``order``
    draws and records the case order; ``finish`` takes the load average
    after; ``as_dict`` gives everything for the result file.
    """

    def __init__(self, seed=0, repeats=1):
        self.seed = seed
        self.repeats = repeats
        self.started = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())
        self.load_before = loadavg()
        self.load_after = None
        self.versions = versions()
        self.orders = {}

    def order(self, cases, repeats=None, name='cases'):
        repeats = self.repeats if repeats is None else repeats
        pairs = case_order(list(cases), repeats, self.seed)
        self.orders[name] = [[c, r] for c, r in pairs]
        return pairs

    def finish(self):
        self.load_after = loadavg()

    def as_dict(self):
        return {
            'seed': self.seed,
            'repeats': self.repeats,
            'confidence': 0.95,
            'interval': 'Student t, two-sided, n - 1 degrees of freedom',
            'goal_rule': 'met only if the whole interval is inside the goal',
            'case_order': self.orders,
            'started_utc': self.started,
            'load_before': self.load_before,
            'load_after': self.load_after,
            'cpus': os.cpu_count(),
            'versions': self.versions,
        }
