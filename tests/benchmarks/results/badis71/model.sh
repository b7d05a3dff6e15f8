#!/bin/bash
# Issue 13, stop 71: the paged guest model (256 MiB, TCG's costs, both
# starts, seeds 10-14) under reclaim rule $1, re-entries off against
# reentry_horizon_rounds 10, 20 and 30 (`h10`, `h20`, `h30`): the nine patterns
# with probes (`model_$1`), then W1-W5 static and dynamic, seq, random and
# Zipf 0.6-1.5 (`model_rest_$1`). Optional $2: --writeback-surplus value;
# PART=1 or 2 runs one half.
cd /work/main
SOME=hotset,load_idle,phases,hotset_slow,hotset_small,load_idle_small,load_idle_half,phases_down,phases_up
REST=seq,random,zipf0.8,zipf1.2,zipf0.6,zipf1.0,zipf1.5
OUT=tests/benchmarks/results/badis71
r=$1
WS=${2:-0}
SUF=$r; [ "$WS" != 0 ] && SUF=ws${WS}_$r
M=".tox/py3/bin/python -m tests.benchmarks.bench_model --seeds 10-14 --workers 1 --writeback-surplus $WS"
C=(--config 'badis reentry_horizon_rounds=0'
   --config 'h10 reentry_horizon_rounds=10'
   --config 'h20 reentry_horizon_rounds=20'
   --config 'h30 reentry_horizon_rounds=30')
[ "${PART:-12}" != 2 ] && $M "${C[@]}" --patterns $SOME --reclaim $r --out $OUT/model_$SUF
[ "${PART:-12}" != 1 ] && $M "${C[@]}" --patterns $REST --shapes W1,W2,W3,W4,W5 --allocs s,d \
    --reclaim $r --out $OUT/model_rest_$SUF
