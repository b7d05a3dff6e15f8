#!/bin/bash
# Issue 13, stop 83: the stop's defaults (both options on, a probe over a
# held demand only where the max-average holds it), one TCG twin pair set
# on the patterns of queue.sh. Run from this directory:
#   T=<tree> bash queue_final.sh
. ../badis66/lib.sh
run tcg_final hotset,hotset_small,phases
