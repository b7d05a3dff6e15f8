#!/bin/bash
# Issue 13, stop 83: probe_answer_rate and probe_over_demand (both on since
# this stop: the badis configuration) off, the first alone, and both on the
# paged guest model
# at the bench's clock (256 MiB, TCG's costs, both starts, seeds 10-14)
# under reclaim rule $1 (clock or lru): the patterns of
# ../badis78_probe_step's screen and W1-W5. Writes bench_$1 here.
#   python3 ../badis78_probe_step/compare.py bench_$1 off bench_$1 rate
#   python3 ../badis78_probe_step/compare.py bench_$1 off bench_$1 badis
cd "$(dirname "$0")/../../../.."
R=tests/benchmarks/results/badis83_rate
P=hotset,load_idle,phases,hotset_slow,hotset_small,load_idle_small,load_idle_half,phases_down,phases_up,seq,random,zipf0.8,zipf1.2,zipf0.6,zipf1.0,zipf1.5,periodic,growth
.tox/py3/bin/python -m tests.benchmarks.bench_model --seeds 10-14 \
    --reclaim $1 --workers 2 \
    --config 'off probe_answer_rate=False probe_over_demand=False' \
    --config 'rate probe_answer_rate=True probe_over_demand=False' \
    --config badis \
    --patterns $P --shapes W1,W2,W3,W4,W5 --allocs s,d --out $R/bench_$1
