#!/bin/bash
# Issue 13, stop 77: the VM's own time slice from its first round
# ([badis] time_slice_from_first) and kept while a held peak is used
# again ([badis] time_slice_reuse), on TCG, bench_patterns twin pairs as
# ../badis76_repeats. Run from this directory: T=<tree> bash queue.sh
. ../badis72/lib.sh
# from_first alone (tree 96ffa57): periodic; the second pair was stopped
# after its boot run (tcg_first_r2 has that one run)
# run tcg_first periodic --badis-option time_slice_from_first=true --badis-option time_slice_reuse=false --label first
# run tcg_first_r2 periodic --badis-option time_slice_from_first=true --badis-option time_slice_reuse=false --label first
# both (tree with time_slice_reuse): periodic twice, then phases and the
# slow hot set, where the model says the memory saved falls most
B='--badis-option time_slice_from_first=true --badis-option time_slice_reuse=true --label both'
run tcg_both periodic $B
run tcg_both_r2 periodic $B
run tcg_both_cost phases,hotset_slow $B
