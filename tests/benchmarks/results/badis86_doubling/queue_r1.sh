#!/bin/bash
# Issue 13, stop 86: the doubling ramp with any round that writes as much
# as it reads back (shortage_ramp_doubling_out_ratio=1; tree 26251b0 +
# doubling.patch), phases and phases up at 512 MiB, the agent's log at
# DEBUG (each round's swap-ins and writes).
# Run from this directory: T=<tree> bash queue_r1.sh
. ../badis66/lib.sh
run tcg512_double_r1 phases,phases_up \
    --booked-mib 512 --data-mib 320 --log-level DEBUG \
    --badis-option shortage_ramp_doubling_out_ratio=1
