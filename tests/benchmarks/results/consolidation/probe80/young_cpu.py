"""Probe: VMs with less than a day of CPU history placed on their peak x F."""
import os
import sys
sys.path.insert(0, os.path.abspath(os.path.join(
    os.path.dirname(__file__), *['..'] * 5)))
from memmut.consolidation import planner  # noqa: E402
from tests.benchmarks import bench_consolidation  # noqa: E402

F = float(sys.argv[1])
MIN = int(sys.argv[2])
orig = planner.placement_mod.peaks


def peaks(histories, n):
    out = orig(histories, n)
    return [p * F if len(h) < MIN else p for p, h in zip(out, histories)]


planner.placement_mod.peaks = peaks
sys.exit(bench_consolidation.main(sys.argv[3:]))
