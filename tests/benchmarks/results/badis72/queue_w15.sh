#!/bin/bash
# Stop 72: W1-W5 static and dynamic (bench_badis, 10 s steps, none and
# badis in each invocation), the defaults then [badis] shortage_ramp.
# Run from this directory.
T=${T:-/tmp/t72/tree}
. ../badis66/lib.sh
wrun() {    # out_dir [bench_badis options]
  local out=$PWD/$1
  shift
  mkdir -p "$out"
  {
    echo "== $(date -u +%FT%TZ) tree $(cat "$T/COMMIT")"; uptime
    (cd "$T" && PYTHONPATH=$T flock /tmp/memmut-tcg.lock $PY \
        -m tests.benchmarks.bench_badis --step 10 \
        --shapes W1,W2,W3,W4,W5 --allocs s,d --estimators none,badis \
        --out "$out" "$@")
    echo "rc=$? $(date -u +%FT%TZ)"; uptime
  } > "$out/load.txt" 2>&1
}
wrun w15_def --badis-option shortage_ramp=false
wrun w15_ramp --badis-option shortage_ramp=true
