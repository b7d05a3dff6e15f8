#!/bin/bash
# Issue 13, stop 69: the paged guest model (256 MiB, TCG's costs, both
# starts, seeds 10-14) under both reclaim rules. model_rebase_*,
# model_chain_*, model_rest_* at 4411e10's code (probe_chain was then in
# the working tree); model_hold_* with throw-away code, not kept: the
# pinned_used_bound cap held while a probe runs (`hold`, option
# probe_holds_used_bound), alone and with both options (`rhc`).
cd /work/main
SOME=hotset,load_idle,phases,hotset_slow,hotset_small,load_idle_small,load_idle_half,phases_down,phases_up
REST=seq,random,zipf0.8,zipf1.2,zipf0.6,zipf1.0,zipf1.5
OUT=tests/benchmarks/results/badis69
M=".tox/py3/bin/python -m tests.benchmarks.bench_model --seeds 10-14 --workers 1"
RC='pinned_drop_rebase=True probe_chain=True'
for r in lru clock; do
  $M --config badis --config 'rebase pinned_drop_rebase=True' \
      --patterns $SOME --reclaim $r --out $OUT/model_rebase_$r
  $M --config 'rebase pinned_drop_rebase=True' --config "chain $RC" \
      --patterns $SOME --reclaim $r --out $OUT/model_chain_$r
  $M --config badis --config "rc $RC" --patterns $REST \
      --shapes W1,W2,W3,W4,W5 --allocs s,d --reclaim $r \
      --out $OUT/model_rest_$r
done
