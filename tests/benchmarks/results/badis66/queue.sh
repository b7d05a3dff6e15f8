#!/bin/bash
# Issue 13, stop 66: [badis] hindsight_recent_only on TCG, the judge the
# paged model screened it for: the slow hot set (where stop 65's agent
# log showed a shrink judged bad by read-backs of pages evicted before
# it) and the suite's hot set (where hindsight earned its place), the
# defaults and the option alternated round by round, 120 s, 256 MiB,
# from boot and from a loaded start, one twin pair at a time under the
# TCG lock, from the tree $T (its COMMIT file names the commit).
cd "$(dirname "$0")"
. ./lib.sh
RECENT=(--badis-option hindsight_recent_only=True --label recent)
for r in ${ROUNDS:-1 2 3}; do
  run tcg_slow_r$r hotset_slow
  run tcg_slow_recent_r$r hotset_slow "${RECENT[@]}"
done
for r in ${HOT_ROUNDS:-1}; do
  run tcg_hotset_r$r hotset
  run tcg_hotset_recent_r$r hotset "${RECENT[@]}"
done
