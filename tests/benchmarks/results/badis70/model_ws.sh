#!/bin/bash
# Issue 13, stop 70: the paged guest model with its swap cache
# (--writeback-surplus WS: a shrink writes WS times more than it frees
# and leaves the rest resident, clean; guest_model.PagedGuest), defaults
# against probe_in_use_evidence (`iu`; both set explicitly, the option
# being the default since), both reclaim rules: ./model_ws.sh
# RULE WS [rest]
cd /work/main
SOME=hotset,load_idle,phases,hotset_slow,hotset_small,load_idle_small,load_idle_half,phases_down,phases_up
REST=seq,random,zipf0.8,zipf1.2,zipf0.6,zipf1.0,zipf1.5
OUT=tests/benchmarks/results/badis70
M=".tox/py3/bin/python -m tests.benchmarks.bench_model --seeds 10-14 --workers 1"
r=$1 ws=$2
if [ "$3" = rest ]; then
  $M --config 'badis probe_in_use_evidence=False' \
    --config 'iu probe_in_use_evidence=True' \
      --patterns $REST --shapes W1,W2,W3,W4,W5 --allocs s,d --reclaim $r \
      --writeback-surplus $ws --out $OUT/model_ws${ws}_rest_$r
else
  $M --config 'badis probe_in_use_evidence=False' \
    --config 'iu probe_in_use_evidence=True' \
      --patterns $SOME --reclaim $r --writeback-surplus $ws \
      --out $OUT/model_ws${ws}_iu_$r
fi
