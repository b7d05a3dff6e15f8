#!/bin/bash
# Issue 13, stop 70: queue.sh's pairs from a loaded start only (where the
# first probe's burst is answered and leaves the guest's swap cache),
# rounds _r3.._r5, from the tree with the probe's event naming the
# memory in use given up.
cd "$(dirname "$0")"
. ../lib.sh
B0=(--badis-option probe_burst_s=0 --starts loaded)
for R in _r3 _r4 _r5; do
  run tcg_load_idle${R} load_idle "${B0[@]}" --label b0
  run tcg_iu_load_idle${R} load_idle "${B0[@]}" --badis-option \
      probe_in_use_evidence=True --label iu
done
