#!/bin/bash
# Issue 13, stop 88: the held-out periodic job (the one pattern of the
# suite over the median goal at 256 MiB, ../badis81_periodic: 1.033 in
# four runs at stop 80's tree) at the current defaults, which stops 81-87
# changed (end_round_on_thrashing, calibration_probe_early,
# probe_answer_rate, probe_over_demand, rise_hold_no_grow): twin pair
# sets as in ../badis66, both starts, 120 s, 256 MiB.
# Run from this directory: T=<tree> bash queue.sh
. ../badis66/lib.sh
for r in 1 2 3; do
  run tcg_r$r periodic
done
