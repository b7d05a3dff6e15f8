"""One configuration of a model screen against another, run for run:
the paired mean differences over all runs, then per case that moved the
means over the seeds of vm_over, % saved, S_more and S_less (one poll of
allowance, % of booked).

    python3 compare.py REF_DIR REF_LABEL NEW_DIR NEW_LABEL
"""
import collections
import importlib.util
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# the loader of stop 76's compare (vm_over, saved, swap-ins, S_more,
# S_less per run)
_SPEC = importlib.util.spec_from_file_location(
    'compare76', os.path.join(HERE, '..', 'badis76_vgentry', 'compare.py'))
_COMPARE76 = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_COMPARE76)
load = _COMPARE76.load
FIGURES = (('vm_over', 0, '%.3f'), ('saved', 1, '%5.2f'),
           ('S_more', 3, '%5.2f'), ('S_less', 4, '%5.2f'))


def mean(values):
    values = [v for v in values if v is not None]
    return statistics.mean(values) if values else math.nan


def main(ref_dir, ref_label, new_dir, new_label):
    a = load(ref_dir, ref_label)
    b = load(new_dir, new_label)
    keys = sorted(set(a) & set(b))
    print('%d paired, %d identical; vm_over %+.4f saved %+.2f' % (
        len(keys), sum(a[k] == b[k] for k in keys),
        statistics.mean(b[k][0] - a[k][0] for k in keys),
        statistics.mean(b[k][1] - a[k][1] for k in keys)))
    per = collections.defaultdict(list)
    for k in keys:
        per[k[:2]].append((a[k], b[k]))
    for (case, start), v in sorted(per.items()):
        if all(x == y for x, y in v):
            continue
        cols = [('%s ' + spec + ' -> ' + spec) % (
            name, mean(x[i] for x, _ in v), mean(y[i] for _, y in v))
            for name, i, spec in FIGURES]
        print('%-16s %-6s %s' % (case, start, '  '.join(cols)))
    return 0


if __name__ == '__main__':
    sys.exit(main(*sys.argv[1:5]))
