#!/bin/bash
# Issue 13, stop 88: W1-W5 (the schedules and settings of
# ../badis73_repeats) alternating stop 77's tree (9f6caeb) and stop 87's
# (f4d9316) schedule by schedule, so that both see the bed's same spell:
# -> w15_9f6caeb3/, w15_f4d93169/. Run from this directory after run.sh
# has unpacked both trees under /tmp/bisect:
#     bash pairs_w15.sh FIRST_REPEAT N
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
for ((r = $1; r < $1 + $2; r++)); do
  for shape in W1 W2 W3 W4 W5; do
    for alloc in s d; do
      # which tree goes first alternates too
      if (( (r + ${shape#W}) % 2 )); then trees="9f6caeb3 f4d93169"
      else trees="f4d93169 9f6caeb3"; fi
      for c in $trees; do
        T=/tmp/bisect/$c
        out=$PWD/w15_$c
        mkdir -p "$out"
        {
          echo "== repeat $r $shape,$alloc $(date -u +%FT%TZ) tree $c"
          (cd "$T" && PYTHONPATH=$T flock /tmp/memmut-tcg.lock $PY \
              -m tests.benchmarks.bench_badis --step 10 --shapes $shape \
              --allocs $alloc --estimators none,badis --repeats 1 \
              --first-repeat $r --keep-other-runs --out "$out")
          echo "rc=$? $(date -u +%FT%TZ)"
        } >> "$out/load.txt" 2>&1
      done
    done
  done
done
