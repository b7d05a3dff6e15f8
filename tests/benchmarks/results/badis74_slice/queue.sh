#!/bin/bash
# Stop 74: [badis] time_slice_max=60 against the defaults on TCG, the
# pattern suite's cases where the rule can act (phases, phases up, the
# hot sets, load-then-idle; bench_patterns twin pairs, both starts,
# 120 s), then a third W1-W5 repeat with it into ../badis73_slice/tcg_w15.
# Configurations alternate; each run holds the TCG lock.
# Run from this directory: T=<tree> bash queue.sh [R]
. ../badis72/lib.sh
R=${1:-}
run tcg_def$R phases,phases_up
run tcg_slice$R phases,phases_up --badis-option time_slice_max=60 \
    --label slice60
run tcg_def_hot$R hotset,hotset_slow,load_idle
run tcg_slice_hot$R hotset,hotset_slow,load_idle \
    --badis-option time_slice_max=60 --label slice60
