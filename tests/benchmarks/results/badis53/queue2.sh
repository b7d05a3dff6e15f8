#!/bin/bash
# Issue 13, stop 63, second part: unpinned (queue.sh showed pinning no
# quieter), redis from a loaded start: Badis, and `observe` (Badis's
# sampling with the balloon left at the booking: what reading the guest
# costs it), each beside its twin, interleaved with A/A pairs; three
# rounds.
cd "$(dirname "$0")"
T=${T:-/tmp/t63/tree}
OUT=${OUT:-$PWD}
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
run() {  # DIR ARGS...
  local dir=$1; shift
  mkdir -p "$OUT/$dir"
  echo "== $(date -u +%FT%TZ) $dir: $*"; uptime
  (cd "$T" && PYTHONPATH=$T flock /tmp/memmut-tcg.lock $PY \
      -m tests.benchmarks.bench_patterns --patterns redis --seconds 120 \
      --twin --out "$OUT/$dir" --log "$OUT/$dir/agent.log" "$@") \
      > "$OUT/$dir.stdout" 2>&1
  echo "$dir rc=$?"
}
for r in 4 5 6; do
  run badis_loaded_r$r --estimators badis --starts loaded
  run observe_loaded_r$r --estimators observe --starts loaded
  run aa_r$r --aa --estimators none
done >> "$OUT/load.txt" 2>&1
