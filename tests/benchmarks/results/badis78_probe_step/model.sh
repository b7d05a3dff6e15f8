#!/bin/bash
# Issue 13, stop 78: a larger first step of the pinned-page calibration's
# balloon probes ([badis] pinned_probe_step_kb 16 and 32 MiB against the
# bench's 4 MiB) on the paged guest model (256 MiB, TCG's costs, both
# starts, seeds 10-14) under reclaim rule $1 (clock or lru): the sixteen
# patterns of ../badis77_first's screen, periodic, growth and W1-W5.
# Writes model_$1 here. Compare with the stop-77 defaults (`reuse` of
# ../badis77_first, run for run the same cases):
#   python3 compare.py ../badis77_first/model_$1 reuse model_$1 probe16
cd "$(dirname "$0")/../../../.."
R=tests/benchmarks/results/badis78_probe_step
P=hotset,load_idle,phases,hotset_slow,hotset_small,load_idle_small,load_idle_half,phases_down,phases_up,seq,random,zipf0.8,zipf1.2,zipf0.6,zipf1.0,zipf1.5,periodic,growth
.tox/py3/bin/python -m tests.benchmarks.bench_model --seeds 10-14 \
    --reclaim $1 --workers 1 \
    --config 'probe16 pinned_probe_step_kb=16384' \
    --config 'probe32 pinned_probe_step_kb=32768' \
    --patterns $P --shapes W1,W2,W3,W4,W5 --allocs s,d --out $R/model_$1
