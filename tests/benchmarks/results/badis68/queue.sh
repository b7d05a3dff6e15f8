#!/bin/bash
# Issue 13, stop 68: a balloon probe that outlives the blind first
# reclaim after a load ([badis] probe_burst_s = $BURST) and reads the
# reuse distances of what it made the guest write as its own
# (probe_rise_written) on TCG, beside the defaults, alternated per
# pattern: the slow hot set (where stop 65's and 66's agent logs showed
# the first probe answered by a read-back burst) and the suite's three
# patterns with probes (load_idle, hotset, phases); one twin pair each,
# 120 s, 256 MiB, both starts, from the tree $T; R names a later round.
cd "$(dirname "$0")"
. ./lib.sh
BURST=${BURST:-1.0}
BOTH=(--badis-option probe_burst_s=$BURST --badis-option
      probe_rise_written=True --label both)
for p in ${PATTERNS:-hotset_slow load_idle hotset phases}; do
  run tcg_$p${R:-} $p
  run tcg_both_$p${R:-} $p "${BOTH[@]}"
done
