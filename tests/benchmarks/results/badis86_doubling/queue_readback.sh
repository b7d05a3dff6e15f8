#!/bin/bash
# Issue 13, stop 86: a recurrence of the VM's own time slice only once
# the guest read back 0.5 % of what the balloon gave back
# (time_slice_recur_readback=0.005; tree 26251b0 + stop86b.patch, the
# doubling off) on phases, periodic, growth and the hot set at 512 MiB,
# the agent's log at DEBUG.
# Run from this directory: T=<tree> bash queue_readback.sh
. ../badis66/lib.sh
run tcg512_readback phases,periodic,growth,hotset \
    --booked-mib 512 --data-mib 320 --log-level DEBUG \
    --badis-option time_slice_recur_readback=0.005
