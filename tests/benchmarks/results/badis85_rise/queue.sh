#!/bin/bash
# Issue 13, stop 85: the working sets that rise at 512 MiB (320 MiB of
# data), Badis at the defaults beside the one-poll-late oracle in the
# same lock slot: is the 1.045-1.055 of ../badis84_size the estimator's
# or the read-back any balloon that gave the memory away pays?
# Twin pairs, both starts, 120 s. Run from this directory: T=<tree> bash queue.sh
. ../badis66/lib.sh
run tcg512_rise phases,phases_up,periodic \
    --booked-mib 512 --data-mib 320 --estimators badis,oracle
