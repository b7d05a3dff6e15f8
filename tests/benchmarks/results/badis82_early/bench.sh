#!/bin/bash
# Issue 13, stop 82: calibration_probe_early on and off on the paged guest
# model at the bench's clock (256 MiB, TCG's costs, both starts, seeds
# 10-14) under reclaim rule $1 (clock or lru): the patterns of
# ../badis78_probe_step's screen and W1-W5. Writes bench_$1 here.
#   python3 ../badis78_probe_step/compare.py bench_$1 off bench_$1 badis
cd "$(dirname "$0")/../../../.."
R=tests/benchmarks/results/badis82_early
P=hotset,load_idle,phases,hotset_slow,hotset_small,load_idle_small,load_idle_half,phases_down,phases_up,seq,random,zipf0.8,zipf1.2,zipf0.6,zipf1.0,zipf1.5,periodic,growth
.tox/py3/bin/python -m tests.benchmarks.bench_model --seeds 10-14 \
    --reclaim $1 --workers 2 \
    --config 'off calibration_probe_early=False' --config badis \
    --patterns $P --shapes W1,W2,W3,W4,W5 --allocs s,d --out $R/bench_$1
