#!/bin/bash
# W3/W5 ablation of the session-3 switches, one lock slot
set -u
SRC=/tmp/b13/src
cd $SRC
export PYTHONPATH=$SRC MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
OUT=$SRC/tests/benchmarks/results/badis13-s3/ablation
mkdir -p $OUT
load() { echo "== $(date -u +%FT%TZ) $1"; uptime; top -bn1 | sed -n 7,14p; }
{
load "start main (none,badis)"
$PY -m tests.benchmarks.bench_badis --step 10 --shapes W3,W5 --allocs s,d \
    --estimators none,badis --out $OUT/main > $OUT/main.stdout 2>&1
echo "main rc=$?"
for cfg in stall probe both; do
  case $cfg in
    stall) opts="--badis-option stall_filter=true";;
    probe) opts="--badis-option pinned_probe=true";;
    both) opts="--badis-option stall_filter=true --badis-option pinned_probe=true";;
  esac
  mkdir -p $OUT/$cfg
  cp $OUT/main/badis.jsonl $OUT/$cfg/
  load "start $cfg ($opts)"
  $PY -m tests.benchmarks.bench_badis --step 10 --shapes W3,W5 --allocs s,d \
      --estimators badis --keep-other-runs $opts --out $OUT/$cfg > $OUT/$cfg.stdout 2>&1
  echo "$cfg rc=$?"
done
load "end"
} > $OUT/load.txt 2>&1
