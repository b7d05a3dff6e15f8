"""Merge the single-run files of this directory's runs into one file per
configuration (repeats numbered in the order they ran), with
bench_controller_scale's summary and Markdown.

    python tests/benchmarks/results/controller_scale_10000_groupcommit/\
merge.py SRC_DIR...

Each SRC_DIR holds ``<run>.json`` files written by ``run.sh`` (one
``--repeats 1`` run each) and ``tree/COMMIT``: the commit the runs' tree
copy was made from, recorded as the runs' memmut commit (the copy has no
git, so the runs themselves recorded none).
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(HERE)))))

from tests.benchmarks import bench_controller_scale as bcs  # noqa: E402
from tests.benchmarks import discipline  # noqa: E402

# configuration -> run files, in the order they ran
CONFIGS = {
    'batch1': ['b1_r0', 'b1_r1', 'b1_r2'],
    'writers1': ['b64_r0', 'w1_r1'],
    'writers2': ['w2_r0', 'w2_r1', 'w2_r2', 'w2_r3'],
    'writers4': ['w4_r0'],
    'controllers2_writers2': ['c2w2_r0'],
    'writers1_threads128': ['b64t_r0', 'b64t_r1'],
    'writers2_threads128': ['w2t_r0', 'w2t_r1'],
    'writers2_6min': ['w2long_r0'],
}


def load(srcs, name):
    for src in srcs:
        path = os.path.join(src, name + '.json')
        if os.path.exists(path):
            with open(path) as f:
                doc = json.load(f)
            commit = discipline.tree_commit(os.path.join(src, 'tree'))
            v = doc['discipline']['versions']
            if not v.get('memmut_commit'):
                v['memmut_commit'] = commit
                v['memmut_commit_from'] = 'tree/COMMIT of the run\'s copy'
            return doc
    return None


def run_line(label, r):
    """One row of runs.md: the figures the README compares."""
    c = r['cpu_ms_per_report']
    last = r.get('lag_last_interval_s')
    return ('| %s | %d | %.1f / %.1f | %s | %.2f / %.2f | %.1f | %.1f | '
            '%.1f | %.2f | %.1f | %d | %d |' % (
                label, r['repeat'], r['lag_s']['p50'], r['lag_s']['p99'],
                '%.1f / %.1f' % (last['p50'], last['p99']) if last else '-',
                r['latency_s']['p50'], r['latency_s']['p99'],
                c['controllers'], c['postgres'], c['total'],
                r['machine_busy_cores'], r['round_wall_s'],
                r['failed_calls_resent'], r['lost_or_doubled']))


def main(srcs):
    lines = [
        '# Every run, by configuration (written by merge.py)', '',
        'Lag: a report\'s making to its storing (its wait in the sender '
        'and its resends included); last interval: the reports made in the '
        'last 60 s of the sending. CPU: ms per stored report.', '',
        '| configuration | run | lag p50 / p99 (s) | lag, last interval '
        'p50 / p99 (s) | latency p50 / p99 (s) | controller CPU | '
        'PostgreSQL CPU | total CPU | busy cores | round (s) | calls '
        'resent | lost or doubled |',
        '|---|---|---|---|---|---|---|---|---|---|---|---|']
    for label, names in CONFIGS.items():
        docs = [d for d in (load(srcs, n) for n in names) if d]
        if not docs:
            continue
        runs = []
        for i, d in enumerate(docs):
            for r in d['runs']:
                r['repeat'] = i
                r['versions'] = d['discipline']['versions']
                runs.append(r)
        doc = {'command': [d['command'] for d in docs],
               'discipline': docs[0]['discipline'],
               'runs_discipline': [d['discipline'] for d in docs],
               'holds': [h for d in docs for h in d['holds']],
               'summary': bcs.summarize_runs(runs), 'runs': runs}
        doc['discipline']['repeats'] = len(docs)
        doc['command'] = '; '.join(doc['command'])
        lines.extend(run_line(label, r) for r in runs)
        out = os.path.join(HERE, label)
        with open(out + '.json', 'w') as f:
            json.dump(doc, f, indent=1)
        with open(out + '.md', 'w') as f:
            f.write(bcs.markdown(runs, doc))
        print('wrote', out + '.json')
    with open(os.path.join(HERE, 'runs.md'), 'w') as f:
        f.write('\n'.join(lines) + '\n')


if __name__ == '__main__':
    main(sys.argv[1:])
