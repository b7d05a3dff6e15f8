#!/bin/bash
# Issue 13, stop 87: W4 static alone, alternating stop 77's tree ($T77)
# and stop 87's ($T87), three runs each -> w4s_t77/, w4s_t87/: is W4,s's
# rise on the current tree the code's? Run from this directory:
#     T77=<tree of 9f6caeb> T87=<tree of f4d9316> bash queue_w4s.sh
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
for r in 0 1 2; do
  for pair in "t77 $T77" "t87 $T87"; do
    set -- $pair
    out=$PWD/w4s_$1
    mkdir -p "$out"
    {
      echo "== repeat $r $(date -u +%FT%TZ) tree $(cat "$2/COMMIT")"; uptime
      (cd "$2" && PYTHONPATH=$2 flock /tmp/memmut-tcg.lock $PY \
          -m tests.benchmarks.bench_badis --step 10 --shapes W4 \
          --allocs s --estimators none,badis --repeats 1 \
          --first-repeat $r --keep-other-runs --out "$out")
      echo "rc=$? $(date -u +%FT%TZ)"
    } >> "$out/load.txt" 2>&1
  done
done
