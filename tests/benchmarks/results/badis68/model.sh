#!/bin/bash
# Issue 13, stop 68: the paged guest model with its two reclaim rules
# (lru: the ideal least-recently-used eviction the model always had;
# clock: the kernel's second chance on accessed bits), seeds 10-14,
# 256 MiB, TCG's costs, both starts. Commits: model_suite_* and
# model_cand_* at 7251f40 (probe_answer_rounds, since replaced);
# model_burst_* at 7251f40 plus a working-tree probe_burst_s that held
# every probe (not committed); model_first_* at 84655d1 (probe_burst_s
# for the guest's first reclaim only, the version kept).
#   model_suite_*: the defaults and the one-poll-late oracle on the
#     whole suite and held-out suite (how each rule compares with TCG);
#   model_cand_*, model_burst_*, model_first_*: the defaults and the
#     candidates on the nine patterns where probes or descents happen.
cd /work/main
ALL=seq,random,zipf0.8,zipf1.2,hotset,load_idle,phases,zipf0.6,zipf1.0,zipf1.5,hotset_slow,hotset_small,load_idle_small,load_idle_half,phases_down,phases_up
SOME=hotset,load_idle,phases,hotset_slow,hotset_small,load_idle_small,load_idle_half,phases_down,phases_up
OUT=tests/benchmarks/results/badis68
M=".tox/py3/bin/python -m tests.benchmarks.bench_model --seeds 10-14"
for r in lru clock; do
  $M --config badis --config oracle --patterns $ALL --reclaim $r \
      --out $OUT/model_suite_$r
  # at 7251f40:
  $M --config badis \
      --config 'both probe_answer_rounds=2 probe_rise_written=True' \
      --config 'rounds2 probe_answer_rounds=2' --patterns $SOME \
      --reclaim $r --out $OUT/model_cand_$r
  # at 84655d1 (and the uncommitted every-probe version for burst_*):
  $M --config badis \
      --config 'burst1 probe_burst_s=1.0 probe_rise_written=True' \
      --config 'burst2 probe_burst_s=2.0 probe_rise_written=True' \
      --patterns $SOME --reclaim $r --out $OUT/model_first_$r
done
