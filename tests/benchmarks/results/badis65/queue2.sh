#!/bin/bash
# Issue 13, stop 65: more pairs of the slow hot set, the defaults and
# probe_readback_fraction 0.25 alternated, rounds 2 and 3 (round 1 is
# tcg/ and tcg_readback/).
cd "$(dirname "$0")"
for r in ${ROUNDS:-2 3}; do
  OUT_DIR=tcg_r$r PATTERNS=hotset_slow bash queue.sh
  OUT_DIR=tcg_readback_r$r PATTERNS=hotset_slow EXTRA="--badis-option \
probe_readback_fraction=0.25 --label readback" bash queue.sh
done
