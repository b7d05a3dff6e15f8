#!/bin/bash
# Stop 72: [badis] shortage_ramp against the defaults on TCG, the
# rises: phases and phases_up (bench_patterns twin pairs, both starts,
# 120 s) and W5, W3, W1 at d (bench_badis, 10 s steps, none + badis per
# invocation). Configurations alternate; each run holds the TCG lock.
# Run from this directory: bash queue.sh [R]  (R: a suffix of the round)
T=${T:-/tmp/t72/tree}
. ../badis66/lib.sh
R=${1:-}
wrun() {    # out_dir [bench_badis options]
  local out=$PWD/$1
  shift
  mkdir -p "$out"
  {
    echo "== $(date -u +%FT%TZ) tree $(cat "$T/COMMIT")"; uptime
    (cd "$T" && PYTHONPATH=$T flock /tmp/memmut-tcg.lock $PY \
        -m tests.benchmarks.bench_badis --step 10 --shapes W5,W3,W1 \
        --allocs d --estimators none,badis --out "$out" "$@")
    echo "rc=$? $(date -u +%FT%TZ)"; uptime
  } > "$out/load.txt" 2>&1
}
run tcg_def$R phases,phases_up --badis-option shortage_ramp=false
run tcg_ramp$R phases,phases_up --badis-option shortage_ramp=true \
    --label ramp
wrun w_def$R --badis-option shortage_ramp=false
wrun w_ramp$R --badis-option shortage_ramp=true
