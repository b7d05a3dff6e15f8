#!/bin/bash
# Issue 13, stop 92: a second pair set of the suite at 256 MiB (as
# queue.sh), and the patterns whose working set rises at 512 MiB with
# 320 MiB of data (../badis84_size's size), from the same tree.
# Run from this directory: T=<tree> bash queue2.sh
. ../badis72/lib.sh
run tcg_suite_r2 seq,random,zipf0.8,zipf1.2,hotset,load_idle,phases
run tcg512_rise phases,phases_up,periodic,growth \
    --booked-mib 512 --data-mib 320
