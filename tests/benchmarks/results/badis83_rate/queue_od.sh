#!/bin/bash
# Issue 13, stop 83: probe_answer_rate and probe_over_demand on, one TCG
# twin pair set on the patterns of queue.sh. Run from this directory:
#   T=<tree> bash queue_od.sh
. ../badis66/lib.sh
run tcg_od hotset,hotset_small,phases --badis-option probe_answer_rate=True --badis-option probe_over_demand=True
