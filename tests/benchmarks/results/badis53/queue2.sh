#!/bin/bash
# Issue 13, stop 63, second part: unpinned (queue.sh showed pinning no
# quieter), redis from a loaded start: Badis, and `observe` (Badis's
# sampling with the balloon left at the booking: what reading the guest
# costs it), each beside its twin, interleaved with A/A pairs; three
# rounds.
cd "$(dirname "$0")"
. ./run.sh
for r in 4 5 6; do
  run badis_loaded_r$r --estimators badis --starts loaded
  run observe_loaded_r$r --estimators observe --starts loaded
  run aa_r$r --aa --estimators none
done >> "$OUT/load.txt" 2>&1
