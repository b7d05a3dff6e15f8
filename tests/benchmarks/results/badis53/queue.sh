#!/bin/bash
# Issue 13, stop 63: how noisy is redis's vm_over on this bed, and does
# pinning each guest of a pair to its own core quiet it? A/A pairs (none
# beside none) unpinned and pinned, then Badis (the defaults) beside its
# twin, pinned, from boot and from a loaded start; three pairs each,
# interleaved so that drift in the machine's state falls on every kind.
cd "$(dirname "$0")"
T=${T:-/tmp/t63/tree}
OUT=${OUT:-$PWD}
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
run() {  # DIR ARGS...
  local dir=$1; shift
  echo "== $(date -u +%FT%TZ) $dir: $*"; uptime
  (cd "$T" && PYTHONPATH=$T flock /tmp/memmut-tcg.lock $PY \
      -m tests.benchmarks.bench_patterns --patterns redis --seconds 120 \
      --twin --out "$OUT/$dir" --log "$OUT/$dir/agent.log" "$@") \
      > "$OUT/$dir.stdout" 2>&1
  echo "$dir rc=$?"
}
for r in 1 2 3; do
  mkdir -p aa_r$r aa_pin_r$r badis_pin_r$r
  run aa_r$r --aa --estimators none
  run aa_pin_r$r --aa --pin --estimators none
  run badis_pin_r$r --pin --estimators badis --starts boot,loaded
done >> "$OUT/load.txt" 2>&1
