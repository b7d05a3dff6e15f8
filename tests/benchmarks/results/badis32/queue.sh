#!/bin/bash
# Stop 44: slot 1 (reference, defaults, the candidate, the read-back
# test alone), slot 2 (the same without the reference, other order),
# then W1-W5 of the candidate and the defaults.
set -u
R=/work/main/tests/benchmarks/results/badis32
T=/tmp/b60/t2
export REF=$T SECONDS_RUN=120
cd $R
CAND="cand $T shrink_slow_start_kb=4096 probe_readback_fraction=0.25"
READ="readback $T probe_readback_fraction=0.25"
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-1 \
    "badis $T" "$CAND" "$READ"
mkdir -p $R/slot-2
grep -E '"estimator": "(none|oracle)"' $R/slot-1/patterns.jsonl > $R/slot-2/patterns.jsonl
SKIP_REF=1 flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-2 \
    "$CAND" "badis $T" "$READ"
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
{ w15 cand shrink_slow_start_kb=4096 probe_readback_fraction=0.25; w15 badis; } >> $R/w15.txt 2>&1
echo QUEUE_DONE >> $R/w15.txt
