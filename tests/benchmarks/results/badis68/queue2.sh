#!/bin/bash
# Issue 13, stop 68: the order the TCG runs of this directory were made
# in (queue.sh's run() pairs; a burst of 3 s, the probe's whole window:
# the first reclaim's probe is judged by whether the guest still reads
# back in its last round): the candidate on the slow hot set beside the
# defaults' run already made (tcg_hotset_slow), then load_idle, a second
# round of the slow hot set, then hotset, the defaults first in each
# pair. burst1/ and rounds2/ hold the slow hot set with a 1 s burst and
# with probe_answer_rounds = 2 (7251f40).
cd "$(dirname "$0")"
. ./lib.sh
BOTH=(--badis-option probe_burst_s=3.0 --badis-option
      probe_rise_written=True --label both)
run tcg_both_hotset_slow hotset_slow "${BOTH[@]}"
run tcg_load_idle load_idle
run tcg_both_load_idle load_idle "${BOTH[@]}"
run tcg_hotset_slow_r2 hotset_slow
run tcg_both_hotset_slow_r2 hotset_slow "${BOTH[@]}"
run tcg_hotset hotset
run tcg_both_hotset hotset "${BOTH[@]}"
