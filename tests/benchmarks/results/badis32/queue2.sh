#!/bin/bash
# Stop 44, after slot 1 (queue.sh stopped there: the candidate, slow
# start with the read-back fraction, lost on the hot set and
# load-then-idle): slot 2 runs the read-back fraction alone, the
# defaults, and a short round's demand half-way to the booking
# (shortage_grow_fraction, for the phases rise); then W1-W5.
set -u
R=/work/main/tests/benchmarks/results/badis32
T=/tmp/b60/t2
export REF=$T SECONDS_RUN=120
cd $R
READ="readback $T probe_readback_fraction=0.25"
GROW="grow $T shortage_grow_fraction=0.5"
mkdir -p $R/slot-2
flock /tmp/memmut-tcg.lock grep -E '"estimator": "(none|oracle)"' $R/slot-1/patterns.jsonl > $R/slot-2/patterns.jsonl
SKIP_REF=1 flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-2 \
    "$READ" "badis $T" "$GROW"
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
{ w15 readback probe_readback_fraction=0.25; w15 badis; } >> $R/w15.txt 2>&1
echo QUEUE_DONE >> $R/w15.txt
