#!/bin/bash
# Issue 13, stop 75: a second pair of the cases over 1.03 in queue.sh and
# queue_heldout.sh (phases, phases up), as there.
# Run from this directory: T=<tree> bash queue_r2.sh
. ../badis72/lib.sh
run tcg_phases_r2 phases,phases_up
