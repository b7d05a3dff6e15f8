#!/bin/bash
# Issue 13/20, stop 76: the fixed-work slowdown (completion time of a fixed
# amount of work over the `none` run's) of Badis at stop 75's defaults, on
# all ten W1-W5 schedules (../badis_fixed_work ran W3,d and W5,d only, at
# a30baab of 25 November, with the baselines). One invocation, 3 repeats,
# under the TCG lock, from the tree $T (a copy of the commit in $T/COMMIT).
# Run from this directory: T=<tree> bash run.sh
set -u
OUT=$PWD
PY=/work/main/.tox/functional/bin/python
export PATH=/work/main/memstore/target/release:$PATH
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
{
  echo "== $(date -u +%FT%TZ) tree $(cat "$T/COMMIT")"; uptime
  (cd "$T" && PYTHONPATH=$T flock /tmp/memmut-tcg.lock $PY \
      -m tests.benchmarks.bench_badis --fixed-work 240 \
      --shapes W1,W2,W3,W4,W5 --allocs s,d --estimators none,badis \
      --parallel 1 --repeats 3 --seed 20 --timeout 120 --out "$OUT")
  echo "rc=$? $(date -u +%FT%TZ)"; uptime
} > "$OUT/load.txt" 2>&1
