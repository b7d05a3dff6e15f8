#!/bin/bash
# Issue 13, stop 85: the shortage jump of queue_jump.sh on the tree whose
# time slice holds the need, not the jump's demand, on the two cases the
# jump lost on in tcg512_jump (growth: slice recurrences held the jump's
# demand; the hot set). Twin pairs, both starts, 120 s.
# Run from this directory: T=<tree> bash queue_peak_jump.sh
. ../badis66/lib.sh
run tcg512_peak_jump growth,hotset --booked-mib 512 --data-mib 320 \
    --badis-option shortage_grow_fraction=0.5 \
    --badis-option shortage_grow_out_ratio=2
