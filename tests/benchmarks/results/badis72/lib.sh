# Sourced by queue.sh and queue_w15.sh: badis66's bench_patterns pairs
# (run) and one bench_badis invocation (wrun), none and badis, 10 s
# steps, under the TCG lock, from the tree $T.
T=${T:-/tmp/t72/tree}
. ../badis66/lib.sh
wrun() {    # out_dir shapes allocs [bench_badis options]
  local out=$PWD/$1 shapes=$2 allocs=$3
  shift 3
  mkdir -p "$out"
  {
    echo "== $(date -u +%FT%TZ) tree $(cat "$T/COMMIT")"; uptime
    (cd "$T" && PYTHONPATH=$T flock /tmp/memmut-tcg.lock $PY \
        -m tests.benchmarks.bench_badis --step 10 --shapes "$shapes" \
        --allocs "$allocs" --estimators none,badis --out "$out" "$@")
    echo "rc=$? $(date -u +%FT%TZ)"; uptime
  } > "$out/load.txt" 2>&1
}
