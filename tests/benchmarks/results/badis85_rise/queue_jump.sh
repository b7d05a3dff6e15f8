#!/bin/bash
# Issue 13, stop 85: the shortage jump limited to rounds of fresh
# allocation (shortage_grow_fraction 0.5, shortage_grow_out_ratio 2: a
# short round whose swap-outs are at least twice its swap-ins goes half
# way to the booking) on the rises at 512 MiB, and on the hot set and
# growth, whose shortages it must leave alone. Badis alone; its defaults
# are in tcg512_rise (same machine, same session) and ../badis84_size.
# Run from this directory: T=<tree> bash queue_jump.sh
. ../badis66/lib.sh
run tcg512_jump phases,phases_up,periodic,hotset,growth \
    --booked-mib 512 --data-mib 320 \
    --badis-option shortage_grow_fraction=0.5 \
    --badis-option shortage_grow_out_ratio=2
