#!/bin/bash
# Stop 48: W1-W5 (one run per case) of shrink_floor_held_shortage and of
# the defaults, paired in one session.
set -u
R=/work/main/tests/benchmarks/results/badis36
T=/tmp/b64/t
PY=/work/main/.tox/functional/bin/python
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
w15() {  # NAME [badis options]
  local name=$1; shift
  local opts=""; for o in "$@"; do opts="$opts --badis-option $o"; done
  echo "== $(date -u +%FT%TZ) w15 $name"; uptime
  (cd $T && flock /tmp/memmut-tcg.lock env PYTHONPATH=$T $PY -m tests.benchmarks.bench_badis --step 10 --shapes W1,W2,W3,W4,W5 --allocs s,d --estimators badis --parallel 2 $opts --out $R/w15/$name) > $R/w15-$name.stdout 2>&1
  echo "w15 $name rc=$?"
}
mkdir -p $R/w15
{ w15 hs2 shrink_floor_held_shortage=true; w15 badis; } >> $R/w15.txt 2>&1
echo QUEUE_DONE >> $R/w15.txt
