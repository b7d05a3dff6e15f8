#!/bin/bash
# Issue 13, stop 81: the cases the option moved on the model (hot sets,
# loaded) and load-then-idle, one twin pair set on TCG at the tree with
# end_round_on_thrashing on by default. Run from this directory:
#   T=<tree> bash queue.sh
. ../badis66/lib.sh
run tcg_on hotset,hotset_slow,load_idle
