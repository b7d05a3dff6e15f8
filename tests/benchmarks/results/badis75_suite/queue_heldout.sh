#!/bin/bash
# Issue 13, stop 75: the held-out patterns (parameters no default was
# tuned on, workloads.held_out_suite) at stop 75's defaults, as queue.sh.
# Run from this directory: T=<tree> bash queue_heldout.sh
. ../badis72/lib.sh
run tcg_heldout zipf0.6,zipf1.0,zipf1.5,hotset_slow,hotset_small,load_idle_small,load_idle_half,phases_down,phases_up
