#!/bin/bash
# W1-W5 then the pattern suite: none + main defaults + the session-3
# configurations given as NAME=OPTS arguments, one lock slot
set -u
SRC=/tmp/b13/src2
cd $SRC
export PYTHONPATH=$SRC MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
OUT=$SRC/tests/benchmarks/results/badis13-s3
mkdir -p $OUT/w1w5 $OUT/patterns
load() { echo "== $(date -u +%FT%TZ) $1"; uptime; top -bn1 | sed -n 7,14p; }
P="--patterns load_idle,hotset,random,zipf0.8,zipf1.2 --seconds 30"
{
load "w1w5 main (none,badis)"
$PY -m tests.benchmarks.bench_badis --step 10 --estimators none,badis \
    --out $OUT/w1w5/main > $OUT/w1w5/main.stdout 2>&1
echo "w1w5 main rc=$?"
for arg in "$@"; do
  name=${arg%%=*}; opts=${arg#*=}
  bo=""; for o in $opts; do bo="$bo --badis-option $o"; done
  mkdir -p $OUT/w1w5/$name; cp $OUT/w1w5/main/badis.jsonl $OUT/w1w5/$name/
  load "w1w5 $name ($bo)"
  $PY -m tests.benchmarks.bench_badis --step 10 --estimators badis \
      --keep-other-runs $bo --out $OUT/w1w5/$name > $OUT/w1w5/$name.stdout 2>&1
  echo "w1w5 $name rc=$?"
done
load "patterns main (none,badis)"
$PY -m tests.benchmarks.bench_patterns $P --estimators none,badis \
    --out $OUT/patterns/main > $OUT/patterns/main.stdout 2>&1
echo "patterns main rc=$?"
for arg in "$@"; do
  name=${arg%%=*}; opts=${arg#*=}
  bo=""; for o in $opts; do bo="$bo --badis-option $o"; done
  mkdir -p $OUT/patterns/$name; cp $OUT/patterns/main/patterns.jsonl $OUT/patterns/$name/
  load "patterns $name ($bo)"
  $PY -m tests.benchmarks.bench_patterns $P --estimators badis \
      --keep-other-runs $bo --out $OUT/patterns/$name > $OUT/patterns/$name.stdout 2>&1
  echo "patterns $name rc=$?"
done
load "end"
} > $OUT/load-full.txt 2>&1
