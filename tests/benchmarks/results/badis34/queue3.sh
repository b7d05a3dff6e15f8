#!/bin/bash
# Stop 46, after queue2.sh: W1-W5 (one run per case) of both new options
# together and of the defaults.
set -u
R=/work/main/tests/benchmarks/results/badis34
T=/tmp/b62/t2
while ! grep -q QUEUE_DONE $R/slot-4/load.txt 2>/dev/null; do sleep 20; done
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
{ w15 rh calibration_rebase=true shrink_floor_hold_in_use=true; w15 badis; } >> $R/w15.txt 2>&1
echo QUEUE_DONE >> $R/w15.txt
