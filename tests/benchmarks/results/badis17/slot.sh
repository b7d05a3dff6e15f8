#!/bin/bash
# One lock slot of issue 13's session-5 comparison, from a git archive of
# the commit in $SRC (so later edits cannot leak in):
#   slot.sh KIND OUTDIR ORDER NAME=OPTS
# KIND: patterns (the pattern suite, PATTERNS env, SECONDS env, default 30)
# or w1w5 (bench_badis, SHAPES and ALLOCS env).
# ORDER main-first: `none` + main's defaults, then NAME with its [badis]
# options; curve-first: `none` + NAME, then main. The second run goes on a
# copy of the slot's jsonl (--keep-other-runs): each slot has its own
# `none` reference, and the two estimators alternate between slots.
set -u
KIND=$1; OUT=$2; ORDER=$3; ARG=$4
SRC=${SRC:-/tmp/b15/src}
cd "$SRC" || exit 1
export PYTHONPATH=$SRC MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
mkdir -p $OUT
load() { echo "== $(date -u +%FT%TZ) $1 (commit $(cat $SRC/COMMIT))"; uptime; top -bn1 | sed -n 7,14p; }
if [ $KIND = patterns ]; then
  MOD=tests.benchmarks.bench_patterns; J=patterns.jsonl
  ARGS="--patterns ${PATTERNS:-load_idle,hotset,random,zipf0.8,zipf1.2,phases} --seconds ${SECONDS_RUN:-30}"
else
  MOD=tests.benchmarks.bench_badis; J=badis.jsonl
  ARGS="--step 10 --shapes ${SHAPES:-W1,W2,W3,W4,W5} --allocs ${ALLOCS:-s,d}"
fi
name=${ARG%%=*}; opts=${ARG#*=}
bo=""; for o in $opts; do bo="$bo --badis-option $o"; done
if [ $ORDER = main-first ]; then
  first=main; firstopts=""; second=$name; secondopts="$bo"
else
  first=$name; firstopts="$bo"; second=main; secondopts=""
fi
{
load "$KIND $first (none,badis $firstopts)"
$PY -m $MOD $ARGS --estimators none,badis $firstopts --out $OUT/$first > $OUT/$first.stdout 2>&1
echo "$KIND $first rc=$?"
mkdir -p $OUT/$second; cp $OUT/$first/$J $OUT/$second/
load "$KIND $second (badis $secondopts)"
$PY -m $MOD $ARGS --estimators badis --keep-other-runs $secondopts \
    --out $OUT/$second > $OUT/$second.stdout 2>&1
echo "$KIND $second rc=$?"
load "end"
} >> $OUT/load.txt 2>&1
