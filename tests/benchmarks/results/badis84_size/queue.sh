#!/bin/bash
# Issue 13, stop 84: the suite and the held-out patterns at 512 MiB with
# 320 MiB of data on the TCG bed, at the current defaults: the size the
# suite was last run at on TCG at stop 53 (../badis42, suite512), before
# thirty stops of rules chosen at 256 MiB. Twin pairs, both starts, 120 s.
# Run from this directory: T=<tree> bash queue.sh
. ../badis66/lib.sh
run tcg512_suite seq,random,zipf0.8,zipf1.2,hotset,load_idle,phases \
    --booked-mib 512 --data-mib 320
run tcg512_heldout zipf0.6,zipf1.5,hotset_slow,hotset_small,load_idle_small,load_idle_half,phases_down,phases_up,growth,periodic \
    --booked-mib 512 --data-mib 320
