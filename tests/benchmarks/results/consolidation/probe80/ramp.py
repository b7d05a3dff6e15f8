"""Probe: the placement's CPU threshold lowered by D while the VMs' median
CPU history covers less than a day (the planner's own warm-up)."""
import statistics
import os
import sys
sys.path.insert(0, os.path.abspath(os.path.join(
    os.path.dirname(__file__), *['..'] * 5)))
from memmut.consolidation import placement  # noqa: E402
from memmut.consolidation import planner  # noqa: E402
from tests.benchmarks import bench_consolidation  # noqa: E402

D = float(sys.argv[1])
FULL = int(sys.argv[2])
state = {'young': False}
orig_round = planner.plan_round
orig_dense = placement.dense_cpu_threshold


def plan_round(hosts, vms, *a, **kw):
    lens = [len(v.cpu_history) for v in vms]
    state['young'] = bool(lens) and statistics.median(lens) < FULL
    return orig_round(hosts, vms, *a, **kw)


def dense(cpu_threshold, *a):
    if state['young'] and cpu_threshold > 0.85:
        cpu_threshold -= D
    return orig_dense(cpu_threshold, *a)


planner.plan_round = plan_round
placement.dense_cpu_threshold = dense
sys.exit(bench_consolidation.main(sys.argv[3:]))
