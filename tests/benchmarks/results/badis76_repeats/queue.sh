#!/bin/bash
# Issue 13, stop 76: a third and a fourth twin pair of the cases at or
# over 1.03 in ../badis75_suite (phases and phases up, both starts; redis,
# both starts), at stop 75's defaults, so that each case's median is
# taken over three or four pairs, not one or two. As there: bench_patterns
# twin pairs, 120 s, 256 MiB, under the TCG lock, from the tree $T.
# Run from this directory: T=<tree> bash queue.sh
. ../badis72/lib.sh
run tcg_r3 phases,phases_up
run tcg_redis_r2 redis
run tcg_r4 phases,phases_up
run tcg_redis_r3 redis
