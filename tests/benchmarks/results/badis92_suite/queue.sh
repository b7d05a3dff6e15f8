#!/bin/bash
# Issue 13, stop 92: the whole pattern suite (the seven memwork patterns,
# redis and the nine held-out patterns) at the defaults that landed with
# stop 91 (c7b8e443), bench_patterns twin pairs, both starts, 120 s,
# 256 MiB, under the TCG lock, from the tree $T (a worktree with a COMMIT
# file). Run from this directory: T=<tree> bash queue.sh
. ../badis72/lib.sh
run tcg_suite seq,random,zipf0.8,zipf1.2,hotset,load_idle,phases
run tcg_redis redis
run tcg_heldout zipf0.6,zipf1.0,zipf1.5,hotset_slow,hotset_small,load_idle_small,load_idle_half,phases_down,phases_up
