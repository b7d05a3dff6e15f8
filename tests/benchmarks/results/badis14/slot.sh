#!/bin/bash
# One lock slot of issue 13's session-4 comparison, from a git archive of
# the commit in $SRC (so later edits cannot leak in):
#   slot.sh KIND OUTDIR NAME=OPTS...
# KIND: patterns (the pattern suite, PATTERNS env) or w1w5 (bench_badis,
# SHAPES and ALLOCS env).
# Runs `none` + main's defaults first, then each NAME with its [badis]
# options on a copy of that slot's jsonl (--keep-other-runs), so every
# vm_over is against the `none` runs of the same slot.
set -u
KIND=$1; OUT=$2; shift 2
SRC=${SRC:-/tmp/b14/src}
cd "$SRC" || exit 1
export PYTHONPATH=$SRC MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
mkdir -p $OUT
load() { echo "== $(date -u +%FT%TZ) $1 (commit $(cat $SRC/COMMIT))"; uptime; top -bn1 | sed -n 7,14p; }
if [ $KIND = patterns ]; then
  MOD=tests.benchmarks.bench_patterns; J=patterns.jsonl
  ARGS="--patterns ${PATTERNS:-load_idle,hotset,random,zipf0.8,zipf1.2,phases} --seconds 30"
else
  MOD=tests.benchmarks.bench_badis; J=badis.jsonl
  ARGS="--step 10 --shapes ${SHAPES:-W1,W2,W3,W4,W5} --allocs ${ALLOCS:-s,d}"
fi
{
load "$KIND main (none,badis)"
$PY -m $MOD $ARGS --estimators none,badis --out $OUT/main > $OUT/main.stdout 2>&1
echo "$KIND main rc=$?"
for arg in "$@"; do
  name=${arg%%=*}; opts=${arg#*=}
  bo=""; for o in $opts; do bo="$bo --badis-option $o"; done
  mkdir -p $OUT/$name; cp $OUT/main/$J $OUT/$name/
  load "$KIND $name ($bo)"
  $PY -m $MOD $ARGS --estimators badis --keep-other-runs $bo \
      --out $OUT/$name > $OUT/$name.stdout 2>&1
  echo "$KIND $name rc=$?"
done
load "end"
} >> $OUT/load.txt 2>&1
