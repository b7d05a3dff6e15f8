#!/bin/bash
# Issue 13, stop 65: four held-out patterns on TCG, the judge the model
# screens for: Badis (the defaults) beside its twin, 120 s, 256 MiB,
# from boot and from a loaded start, one pair at a time under the TCG
# lock, from the tree $T (its COMMIT file names the commit).
cd "$(dirname "$0")"
T=${T:-/tmp/t65/tree}
OUT=$PWD/${OUT_DIR:-tcg}
mkdir -p "$OUT"
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
{
  echo "== $(date -u +%FT%TZ) tree $(cat "$T/COMMIT")"; uptime
  (cd "$T" && PYTHONPATH=$T flock /tmp/memmut-tcg.lock $PY \
      -m tests.benchmarks.bench_patterns \
      --patterns ${PATTERNS:-phases_up,hotset_slow,load_idle_small,zipf1.0} \
      --estimators badis --starts boot,loaded --seconds 120 --twin \
      --out "$OUT" --log "$OUT/agent.log" ${EXTRA:-})
  echo "rc=$? $(date -u +%FT%TZ)"; uptime
} > "$OUT/load.txt" 2>&1
