#!/bin/bash
# Issue 13, stop 71: the defaults (label `badis`) against
# reentry_horizon_rounds=10 (label `h10`: 10 s at the bed's 1 s rounds),
# alternated pattern by pattern, one twin pair per run (both starts, 120
# s, 256 MiB). R=_r2 (_r3...) for further rounds; PATTERNS to choose
# them.
cd "$(dirname "$0")"
. ./lib.sh
H10=(--badis-option reentry_horizon_rounds=10 --label h10)
for p in ${PATTERNS:-hotset_slow hotset}; do
  run tcg_${p}${R} $p
  run tcg_h10_${p}${R} $p "${H10[@]}"
done
