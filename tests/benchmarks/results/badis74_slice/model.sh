#!/bin/bash
# Issue 13, stop 74: the paged guest model (256 MiB, TCG's costs, both
# starts, seeds 10-14) under reclaim rule $1 (clock or lru): the
# defaults (the slice off), a VM's own time slice of at most 15 slices
# (60 s on the bench's 4 s slice) with a balloon probe's swap-ins left
# out of its recurrences, and a floor's reference sample that rises with
# the working set (shrink_floor_rebase_rounds 4), on the sixteen
# patterns and W1-W5 static and dynamic. Run from anywhere; writes
# model_$1 here.
cd "$(dirname "$0")/../../../.."
P=hotset,load_idle,phases,hotset_slow,hotset_small,load_idle_small,load_idle_half,phases_down,phases_up,seq,random,zipf0.8,zipf1.2,zipf0.6,zipf1.0,zipf1.5
.tox/py3/bin/python -m tests.benchmarks.bench_model --config 'badis' \
    --config 'slice15 time_slice_max_slices=15' \
    --config 'rebase4 shrink_floor_rebase_rounds=4' --patterns $P \
    --shapes W1,W2,W3,W4,W5 --allocs s,d --seeds 10-14 --reclaim $1 \
    --workers 1 --out tests/benchmarks/results/badis74_slice/model_$1
