#!/bin/bash
# Issue 13, stop 66: what [badis] probe_readback_fraction = 0.25 (stop
# 65's other candidate for the slow hot set) costs on the suite's three
# patterns where a probe or a descent happens (load_idle, hotset,
# phases; the others keep a working set near the booking): the defaults
# and the option alternated per pattern, one twin pair each, 120 s,
# 256 MiB, both starts, from the tree $T; R names a later round
# (_r2: its directories end in _r2).
cd "$(dirname "$0")"
. ./lib.sh
for p in ${PATTERNS:-load_idle hotset phases}; do
  run tcg_suite_$p${R:-} $p
  run tcg_suite_readback_$p${R:-} $p --badis-option \
      probe_readback_fraction=0.25 --label readback
done
