#!/bin/bash
# Stop 72: [badis] shortage_ramp against the stop-71 defaults (the rule
# off) on TCG, the rises: phases and phases_up (bench_patterns twin
# pairs, both starts, 120 s) and W5, W3, W1 at d (bench_badis, 10 s
# steps, none + badis per invocation). Configurations alternate; each
# run holds the TCG lock.
# Run from this directory: bash queue.sh [R]  (R: a suffix of the round)
. ./lib.sh
R=${1:-}
run tcg_def$R phases,phases_up --badis-option shortage_ramp=false
run tcg_ramp$R phases,phases_up --badis-option shortage_ramp=true \
    --label ramp
wrun w_def$R W5,W3,W1 d --badis-option shortage_ramp=false
wrun w_ramp$R W5,W3,W1 d --badis-option shortage_ramp=true
