#!/bin/bash
# Issue 13, stop 75: the whole pattern suite (the seven memwork patterns
# and redis) at stop 75's defaults (a VM's own time slice on, 15 slices),
# bench_patterns twin pairs, both starts, 120 s, 256 MiB, under the TCG
# lock, from the tree $T. Run from this directory: T=<tree> bash queue.sh
. ../badis72/lib.sh
run tcg_suite seq,random,zipf0.8,zipf1.2,hotset,load_idle,phases
run tcg_redis redis
