#!/bin/bash
# Issue 13, stop 86: the doubling ramp on any short round after a grow
# (shortage_ramp_doubling) with the recurrence needing a read-back
# (time_slice_recur_readback=0.1; tree 26251b0 + stop86b.patch), the
# rises and the hot set at 512 MiB, the agent's log at DEBUG.
# Run from this directory: T=<tree> bash queue_double_rb.sh
. ../badis66/lib.sh
run tcg512_double_rb phases,phases_up,growth,periodic,hotset \
    --booked-mib 512 --data-mib 320 --log-level DEBUG \
    --badis-option shortage_ramp_doubling=true \
    --badis-option time_slice_recur_readback=0.1
