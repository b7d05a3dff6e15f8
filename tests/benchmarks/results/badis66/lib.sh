# Sourced by queue.sh and queue_readback.sh: one bench_patterns twin
# pair set (both starts, 120 s, 256 MiB) from the tree $T under the TCG
# lock, with its times and load in load.txt.
T=${T:-/tmp/t66/tree}
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
run() {     # out_dir patterns [bench_patterns options]
  local out=$PWD/$1 patterns=$2
  shift 2
  mkdir -p "$out"
  {
    echo "== $(date -u +%FT%TZ) tree $(cat "$T/COMMIT")"; uptime
    (cd "$T" && PYTHONPATH=$T flock /tmp/memmut-tcg.lock $PY \
        -m tests.benchmarks.bench_patterns --patterns "$patterns" \
        --estimators badis --starts boot,loaded --seconds 120 --twin \
        --out "$out" --log "$out/agent.log" "$@")
    echo "rc=$? $(date -u +%FT%TZ)"; uptime
  } > "$out/load.txt" 2>&1
}
