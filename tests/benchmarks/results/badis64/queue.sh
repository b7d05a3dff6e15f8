#!/bin/bash
# Issue 13, stop 64: more redis pairs, unpinned, so that the suite's
# goals (vm_over median <= 1.03, worst <= 1.10) are judged on about ten
# pairs per start rather than three: Badis (the defaults) beside its
# twin from boot and from a loaded start, interleaved with A/A pairs
# (none beside none: the bed's own noise). badis53's invocation, from
# this stop's tree.
cd "$(dirname "$0")"
T=${T:-/tmp/t64/tree}
. ../badis53/run.sh
for r in ${ROUNDS:-7 8 9 10 11 12 13}; do
  run badis_r$r --estimators badis --starts boot,loaded
  run aa_r$r --aa --estimators none
done >> "$OUT/load.txt" 2>&1
