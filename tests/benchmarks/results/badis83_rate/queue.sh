#!/bin/bash
# Issue 13, stop 83: probe_answer_rate off and on, one TCG twin pair set
# each, on the hot sets and phases. Run from this directory:
#   T=<tree> bash queue.sh
. ../badis66/lib.sh
run tcg_off hotset,hotset_small,phases --badis-option probe_answer_rate=False
run tcg_rate hotset,hotset_small,phases --badis-option probe_answer_rate=True
