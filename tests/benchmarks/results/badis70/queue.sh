#!/bin/bash
# Issue 13, stop 70: probe_in_use_evidence (label `iu`) against the
# defaults (label `badis`), alternated pattern by pattern, one twin pair
# per run (both starts). R=_r2 (_r3...) for further rounds; PATTERNS to
# choose them.
cd "$(dirname "$0")"
. ./lib.sh
IU=(--badis-option probe_in_use_evidence=True --label iu)
for p in ${PATTERNS:-load_idle hotset_slow}; do
  run tcg_${p}${R} $p
  run tcg_iu_${p}${R} $p "${IU[@]}"
done
