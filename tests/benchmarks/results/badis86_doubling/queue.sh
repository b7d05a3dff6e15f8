#!/bin/bash
# Issue 13, stop 86: the doubling ramp on rounds of new data
# (shortage_ramp_doubling_out_ratio=2; tree 26251b0 + doubling.patch) on
# the four rises at 512 MiB, one twin pair set, both starts.
# Run from this directory: T=<tree> bash queue.sh
. ../badis66/lib.sh
run tcg512_double phases,phases_up,growth,periodic \
    --booked-mib 512 --data-mib 320 \
    --badis-option shortage_ramp_doubling_out_ratio=2
