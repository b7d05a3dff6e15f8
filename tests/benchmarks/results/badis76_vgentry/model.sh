#!/bin/bash
# Issue 13, stop 76: [badis] vg_entry_grow (the round whose sample reached
# the allocation before any swap activity asks the estimate and its rise
# once more) on the paged guest model (256 MiB, TCG's costs, both starts,
# seeds 10-14) under reclaim rule $1 (clock or lru), the sixteen patterns
# and W1-W5 static and dynamic: the same runs as ../badis74_slice's model
# screen, whose `slice15` configuration is stop 75's defaults (identical
# to them run for run, stop 75), so only the new configuration runs here.
# Run from anywhere; writes model_$1 here.
cd "$(dirname "$0")/../../../.."
P=hotset,load_idle,phases,hotset_slow,hotset_small,load_idle_small,load_idle_half,phases_down,phases_up,seq,random,zipf0.8,zipf1.2,zipf0.6,zipf1.0,zipf1.5
.tox/py3/bin/python -m tests.benchmarks.bench_model \
    --config 'vgentry vg_entry_grow=true' --patterns $P \
    --shapes W1,W2,W3,W4,W5 --allocs s,d --seeds 10-14 --reclaim $1 \
    --workers 1 --out tests/benchmarks/results/badis76_vgentry/model_$1
