#!/bin/bash
# Stop 74: the third W1-W5 repeat with [badis] time_slice_max=60 into
# ../badis73_slice/tcg_w15 (its repeats 0 and 1 from stop 73), as
# ../badis73_repeats/run.sh runs one. Run from this directory:
# T=<tree> bash w15.sh
. ../badis72/lib.sh
out=$PWD/../badis73_slice/tcg_w15
{
  echo "== $(date -u +%FT%TZ) tree $(cat "$T/COMMIT") (repeat 2)"; uptime
  (cd "$T" && PYTHONPATH=$T flock /tmp/memmut-tcg.lock $PY \
      -m tests.benchmarks.bench_badis --step 10 --shapes W1,W2,W3,W4,W5 \
      --allocs s,d --estimators none,badis --repeats 1 --first-repeat 2 \
      --keep-other-runs --out "$out" --badis-option time_slice_max=60)
  echo "rc=$? $(date -u +%FT%TZ)"; uptime
} >> "$out/load.txt" 2>&1
