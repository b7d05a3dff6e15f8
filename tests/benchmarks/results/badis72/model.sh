#!/bin/bash
# Issue 13, stop 72: the paged guest model (256 MiB, TCG's costs, both
# starts, seeds 10-14) under reclaim rule $1 (clock or lru): the
# defaults against [badis] shortage_ramp, on the sixteen patterns
# (the suite and the held-out suite) and W1-W5 static and dynamic.
cd /work/main
P=hotset,load_idle,phases,hotset_slow,hotset_small,load_idle_small,load_idle_half,phases_down,phases_up,seq,random,zipf0.8,zipf1.2,zipf0.6,zipf1.0,zipf1.5
.tox/py3/bin/python -m tests.benchmarks.bench_model --config 'badis shortage_ramp=False' \
    --config 'ramp shortage_ramp=True' --patterns $P \
    --shapes W1,W2,W3,W4,W5 --allocs s,d --seeds 10-14 --reclaim $1 \
    --workers 1 --out tests/benchmarks/results/badis72/model_$1
