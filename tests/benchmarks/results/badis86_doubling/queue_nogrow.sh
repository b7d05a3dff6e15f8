#!/bin/bash
# Issue 13, stop 86: no grow in the quiet rounds after a rise rule's ask
# (rise_hold_no_grow; tree 26251b0 + nogrow.patch) beside the defaults
# on the same tree, the rises and the hot set at 512 MiB, one twin pair
# set each, the agent's log at DEBUG.
# Run from this directory: T=<tree> bash queue_nogrow.sh
. ../badis66/lib.sh
run tcg512_nogrow phases,phases_up,periodic,growth,hotset \
    --booked-mib 512 --data-mib 320 --log-level DEBUG \
    --badis-option rise_hold_no_grow=true
