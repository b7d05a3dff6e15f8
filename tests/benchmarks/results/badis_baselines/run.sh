#!/bin/bash
# one hold: run.sh OUTDIR PATTERNS STARTS
set -u
OUT=$1; PATS=$2; STARTS=$3
cd /tmp/bl/src || exit 1
export PYTHONPATH=/tmp/bl/src MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
mkdir -p $OUT
# do not start a hold that could not end before the hard stop (03:30)
now=$(date -u +%H:%M); cut=03:08
if [[ "$now" > "$cut" ]]; then echo "skip $PATS at $now" >> $OUT/load.txt; exit 0; fi
load() { echo "== $(date -u +%FT%TZ) $1 (commit $(cat /tmp/bl/src/COMMIT))"; uptime; top -bn1 | sed -n 7,14p; }
{
load "patterns $PATS starts $STARTS: none,badis,zballoond,selfballoon"
/work/main/.tox/functional/bin/python -m tests.benchmarks.bench_patterns --patterns $PATS --starts $STARTS --seconds 30 \
  --estimators none,badis,zballoond,selfballoon --out $OUT > $OUT/bench.stdout 2>&1
echo "rc=$?"
load end
} >> $OUT/load.txt 2>&1
