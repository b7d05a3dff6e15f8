"""One planning round, this tree's planner against an older commit's.

Usage::

    python -m tests.benchmarks.bench_planner_ab [--old-rev main] \
        [--new-rev HEAD] [--hosts 10000] [--repeats 8] [--rounds 3]

Both commits' ``memmut`` packages are extracted with ``git archive``
into temporary directories (so editing the tree during a run changes
nothing). Each (version, repeat) runs in its own
process, in ``discipline.blocked_order`` (both versions inside each
repeat, shuffled), so the two meet the same machine state. A process
builds the ``bench_consolidation.scaling_round`` instance (30 VMs per
active host, a day of history, the default algorithm set) and times
``--rounds`` successive rounds, the window moving on by one sample per
round and ``--churn`` VMs moved between rounds (see :func:`child`); its
figure is the best CPU time of the rounds after the first (the
steady state, without the noise of other processes' bursts); the first
round (cold: nothing kept from a previous round) is reported beside it.
Reported per version: the mean and 95 % interval of those figures over
the repeats, the paired new/old ratio, and whether every repeat of both
versions gave the same plans in every round. Results:
results/consolidation/planner_ab.json and .md.
"""

import argparse
import hashlib
import json
import os
import pickle
import shlex
import subprocess
import sys
import tempfile

import numpy as np

from tests.benchmarks import discipline

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
OUT = os.path.join(ROOT, 'tests', 'benchmarks', 'results', 'consolidation')
GOAL_SECONDS = 1.0


def child(hosts, rounds, history, churn=0):
    """Time ``rounds`` successive rounds in this process; print one JSON
    line.

    The VMs' series are ``history + rounds - 1`` samples long and round
    ``r`` sees the ``history`` samples ending at sample ``history - 1 +
    r``: the window moves on by one sample per round, as a controller's
    does. Before each round after the first, ``churn`` VMs (drawn with a
    fixed seed, the same for both versions) move to another active host,
    as migrations between rounds would; the rounds' own migrations are
    not applied (nor their host states fed back), so every round faces
    the decisions of the one-round instance (about 50 000 moves planned
    at 10 000 hosts), the figure earlier parts of issue 19 measured. A
    planner that keeps summed histories between rounds
    (``history_sums``, issue 19's fifth part) is given one: round 0 fills
    it (cold), the next rounds move it on. The figure is the best CPU
    time of the rounds after the first (of round 0 with one round)."""
    import dataclasses
    import time
    from memmut.consolidation import loader
    from memmut.consolidation import planner
    from tests.benchmarks import bench_consolidation as bench
    try:
        from memmut.consolidation import history_sums
    except ImportError:         # a planner from before issue 19, part 5
        history_sums = None
    length = history + rounds - 1
    hs, full = bench.scaling_round(hosts, bench.VMS_PER_HOST,
                                   history=length)
    numbered = 'history_end' in {f.name for f in
                                 dataclasses.fields(planner.PlannerVM)}
    where = {v.uuid: v.host for v in full}
    algos = loader.build_all(loader.AlgorithmSpec(), 300.0, 60.0)
    sums = history_sums.HistorySums() if history_sums else None
    rng = np.random.default_rng(1)
    active = sorted({h.name for h in hs if h.active})
    uuids = [v.uuid for v in full]
    cpus, walls, digests, moves = [], [], [], []
    for r in range(rounds):
        if r and churn:
            for k in rng.choice(len(uuids), size=churn, replace=False):
                others = [a for a in rng.choice(active, size=2)
                          if a != where[uuids[k]]]
                where[uuids[k]] = str(others[0])
        lo, hi = r, r + history
        extra = {'history_end': hi - 1} if numbered else {}
        vms = [planner.PlannerVM(v.uuid, where[v.uuid],
                                 v.cpu_history[lo:hi], v.ram,
                                 v.mem_history[lo:hi], **extra)
               for v in full]
        kw = {'sums': sums} if sums is not None else {}
        t0, c0 = time.perf_counter(), time.process_time()
        plan = planner.plan_round(hs, vms, algos, **kw)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        digests.append(hashlib.sha256(pickle.dumps(
            (plan.migrations, plan.activate, plan.deactivate,
             plan.overloaded, plan.underloaded, plan.failed,
             sorted(plan.states.items())))).hexdigest())
        moves.append(len(plan.migrations))
    warm = slice(1, None) if rounds > 1 else slice(0, None)
    print(json.dumps({'cpu': min(cpus[warm]), 'wall': min(walls[warm]),
                      'cpu_cold': cpus[0], 'wall_cold': walls[0],
                      'cpus': cpus, 'walls': walls,
                      'migrations': moves,
                      'plan_sha256': hashlib.sha256(
                          ''.join(digests).encode()).hexdigest(),
                      'kept_sums': sums is not None,
                      'reused_hosts': getattr(sums, 'reused', None),
                      'computed_hosts': getattr(sums, 'computed', None),
                      'planner': planner.__file__}))


def run_case(path, args):
    """One child process on the ``memmut`` extracted into ``path``.

    It runs in ``path``: ``python -m`` puts the working directory first
    on ``sys.path``, so a child started in ROOT would import ROOT's
    ``memmut`` whatever PYTHONPATH says (before issue 19's fifth part
    both versions were this tree's; the child now reports where its
    planner came from and it is checked)."""
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(p for p in (path, ROOT) if p)
    out = subprocess.run(
        [sys.executable, '-m', 'tests.benchmarks.bench_planner_ab',
         '--child', '--hosts', str(args.hosts), '--rounds',
         str(args.rounds), '--history', str(args.history),
         '--churn', str(args.churn)],
        cwd=path, env=env, check=True, capture_output=True, text=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    if not os.path.realpath(res['planner']).startswith(
            os.path.realpath(path) + os.sep):
        raise RuntimeError('the child imported %s, not the planner '
                           'extracted into %s' % (res['planner'], path))
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--old-rev', default='main')
    ap.add_argument('--new-rev', default='HEAD')
    ap.add_argument('--hosts', type=int, default=10000)
    ap.add_argument('--repeats', type=int, default=8)
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--history', type=int, default=288)
    ap.add_argument('--churn', type=int, default=0,
                    help='VMs moved to another host before each round '
                         'after the first')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--child', action='store_true', help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args.hosts, args.rounds, args.history, args.churn)
    commits = {c: subprocess.run(
        ['git', 'rev-parse', rev], cwd=ROOT, check=True,
        capture_output=True, text=True).stdout.strip()
        for c, rev in (('old', args.old_rev), ('new', args.new_rev))}
    old_commit = commits['old']
    rec = discipline.Record(seed=args.seed, repeats=args.repeats)
    runs = {'old': [], 'new': []}
    with tempfile.TemporaryDirectory(prefix='planner-ab-') as tmp:
        paths = {}
        for case, commit in commits.items():
            paths[case] = os.path.join(tmp, case)
            os.makedirs(paths[case])
            archive = subprocess.run(['git', 'archive', commit, 'memmut'],
                                     cwd=ROOT, check=True,
                                     capture_output=True).stdout
            subprocess.run(['tar', '-x', '-C', paths[case]], input=archive,
                           check=True)
        pairs = discipline.blocked_order(['old', 'new'], args.repeats,
                                         args.seed)
        rec.orders['cases'] = [[c, r] for c, r in pairs]
        for case, r in pairs:
            res = run_case(paths[case], args)
            res['repeat'] = r
            runs[case].append(res)
            sys.stderr.write('%s repeat %d: %.3f s CPU (%.3f s wall)\n'
                             % (case, r, res['cpu'], res['wall']))
    rec.finish()
    for v in runs.values():
        v.sort(key=lambda x: x['repeat'])
    summary = {c: {k: discipline.summarize([x[k] for x in v])
                   for k in ('cpu', 'wall', 'cpu_cold')}
               for c, v in runs.items()}
    ratio = discipline.paired_ratio([x['cpu'] for x in runs['new']],
                                    [x['cpu'] for x in runs['old']])
    digests = {x['plan_sha256'] for v in runs.values() for x in v}
    verdict = discipline.verdict(summary['new']['cpu'], high=GOAL_SECONDS)
    out = {'hosts': args.hosts, 'vms_per_active_host': 30,
           'churn_vms_per_round': args.churn,
           'history': args.history, 'rounds_per_process': args.rounds,
           'old_commit': old_commit, 'new_commit': commits['new'],
           'summary': summary,
           'new_over_old_cpu': ratio, 'same_plans': len(digests) == 1,
           'goal_seconds': GOAL_SECONDS, 'goal_new_cpu': verdict,
           'runs': runs,
           'command': 'python -m tests.benchmarks.bench_planner_ab '
                      + shlex.join(argv if argv is not None else sys.argv[1:]),
           'discipline': rec.as_dict()}
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, 'planner_ab.json'), 'w') as f:
        json.dump(out, f, indent=1, sort_keys=True)
    rows = [[c, discipline.fmt(summary[c]['cpu'], '.3f', unit=' s'),
             discipline.fmt(summary[c]['wall'], '.3f', unit=' s'),
             discipline.fmt(summary[c]['cpu_cold'], '.3f', unit=' s')]
            for c in ('old', 'new')]
    md = ['# One planning round, old vs new', '',
          '%d hosts, 30 VMs per active host, %d samples of history, the '
          'default set; %d successive rounds per process (the window '
          'moving on by one sample, %d VMs moved to another host '
          'between rounds), the figure the best of the rounds after the '
          'first; %d processes per version alternated (old = %s, new = '
          '%s).'
          % (args.hosts, args.history, args.rounds, args.churn,
             args.repeats,
             old_commit[:10], commits['new'][:10]), '',
          discipline.markdown_table(['version', 'CPU s (mean ± 95 %)',
                                     'wall s', 'first round CPU s'],
                                    rows), '',
          'new / old CPU: %.3f [%.3f, %.3f]; same plans in every run: %s; '
          'goal ≤ %.1f s CPU: %s.'
          % (ratio['mean'], ratio['low'] or 0, ratio['high'] or 0,
             out['same_plans'], GOAL_SECONDS, verdict), '',
          'Load average before/after: %s / %s.'
          % (rec.load_before, rec.load_after), '']
    with open(os.path.join(OUT, 'planner_ab.md'), 'w') as f:
        f.write('\n'.join(md))
    print('\n'.join(md))


if __name__ == '__main__':
    main()
