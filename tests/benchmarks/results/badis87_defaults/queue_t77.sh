#!/bin/bash
# Issue 13, stop 87: W1-W5 as ../badis73_repeats from the stop-77 tree
# (9f6caeb, which ../badis77_reuse_w15 measured on 6 December), today,
# beside w15/: is the difference the bed's or the code's? One repeat.
# Run from this directory: T=<tree of 9f6caeb> bash queue_t77.sh
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
mkdir -p w15_t77
cd w15_t77 || exit 1
out=$PWD
{
  echo "== repeat 0 $(date -u +%FT%TZ) tree $(cat "$T/COMMIT")"; uptime
  (cd "$T" && PYTHONPATH=$T flock /tmp/memmut-tcg.lock \
      /work/main/.tox/functional/bin/python \
      -m tests.benchmarks.bench_badis --step 10 --shapes W1,W2,W3,W4,W5 \
      --allocs s,d --estimators none,badis --repeats 1 \
      --first-repeat 0 --keep-other-runs --out "$out")
  echo "rc=$? $(date -u +%FT%TZ)"; uptime
} >> load.txt 2>&1
