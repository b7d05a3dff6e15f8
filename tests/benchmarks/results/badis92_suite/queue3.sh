#!/bin/bash
# Issue 13, stop 92: a second pair of phases up at 256 MiB, the one case
# of the first pass over 1.03 (as queue.sh's held-out run).
# Run from this directory: T=<tree> bash queue3.sh
. ../badis72/lib.sh
run tcg_heldout_r2 phases_up
