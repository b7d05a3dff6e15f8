#!/bin/bash
# Issue 13, stop 70: the paged guest model (256 MiB, TCG's costs, both
# starts, seeds 10-14) under both reclaim rules, defaults against
# probe_in_use_evidence (`iu`). The model keeps no swap cache (a page it
# evicts is written and freed at once), so the option can only act where
# the program frees memory during a probe: a regression check, not the
# measure (that is TCG, queue.sh).
cd /work/main
SOME=hotset,load_idle,phases,hotset_slow,hotset_small,load_idle_small,load_idle_half,phases_down,phases_up
REST=seq,random,zipf0.8,zipf1.2,zipf0.6,zipf1.0,zipf1.5
OUT=tests/benchmarks/results/badis70
M=".tox/py3/bin/python -m tests.benchmarks.bench_model --seeds 10-14 --workers 1"
r=$1
$M --config 'badis probe_in_use_evidence=False' \
    --config 'iu probe_in_use_evidence=True' \
    --patterns $SOME --reclaim $r --out $OUT/model_iu_$r
$M --config 'badis probe_in_use_evidence=False' \
    --config 'iu probe_in_use_evidence=True' --patterns $REST \
    --shapes W1,W2,W3,W4,W5 --allocs s,d --reclaim $r \
    --out $OUT/model_rest_$r
