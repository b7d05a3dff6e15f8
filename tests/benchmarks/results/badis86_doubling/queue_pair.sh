#!/bin/bash
# Issue 13, stop 86: rise_hold_no_grow beside the defaults on the same
# tree (26251b0 + nogrow.patch), alternating per pattern so that both
# meet the same machine: phases, phases up and growth at 512 MiB (then
# PATTERNS="periodic hotset" into the same directory), one twin pair set
# each, runs recorded as "defaults" and "nogrow" in one patterns.jsonl.
# Run from this directory: T=<tree> [PATTERNS="..."] bash queue_pair.sh
T=${T:?tree}
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
out=$PWD/tcg512_pair
mkdir -p "$out"
one() {     # label pattern [bench_patterns options]
  local label=$1 pattern=$2
  shift 2
  echo "== $(date -u +%FT%TZ) $label $pattern tree $(cat "$T/COMMIT")"
  uptime
  (cd "$T" && PYTHONPATH=$T flock /tmp/memmut-tcg.lock $PY \
      -m tests.benchmarks.bench_patterns --patterns "$pattern" \
      --estimators badis --starts boot,loaded --seconds 120 --twin \
      --booked-mib 512 --data-mib 320 --label "$label" \
      --keep-other-runs --out "$out" --log "$out/agent-$label.log" "$@")
  echo "rc=$? $(date -u +%FT%TZ)"
}
{
  for p in ${PATTERNS:-phases phases_up growth}; do
    one defaults $p
    one nogrow $p --badis-option rise_hold_no_grow=true
  done
} >> "$out/load.txt" 2>&1
