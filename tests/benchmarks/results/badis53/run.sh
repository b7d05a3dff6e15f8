# Sourced by queue.sh and queue2.sh: one bench_patterns invocation on
# redis, 120 s, twins, under the TCG lock, from the tree $T.
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
