#!/bin/bash
# Issue 13, stop 63: how noisy is redis's vm_over on this bed, and does
# pinning each guest of a pair to its own core quiet it? A/A pairs (none
# beside none) unpinned and pinned, then Badis (the defaults) beside its
# twin, pinned, from boot and from a loaded start; three pairs each,
# interleaved so that drift in the machine's state falls on every kind.
cd "$(dirname "$0")"
. ./run.sh
for r in 1 2 3; do
  run aa_r$r --aa --estimators none
  run aa_pin_r$r --aa --pin --estimators none
  run badis_pin_r$r --pin --estimators badis --starts boot,loaded
done >> "$OUT/load.txt" 2>&1
