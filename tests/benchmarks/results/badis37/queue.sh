#!/bin/bash
# Stop 49: the paged guest model's candidate (nhcs: no_shrink_below_estimate,
# hindsight_rounds=30 at 4 MiB, calibration_probe_min_fraction=0.15,
# shortage_grow_fraction=0.5) beside the defaults: the whole pattern suite
# in two lock slots in alternated order, then W1-W5 of both.
# Tree ac9b44d.
set -u
R=/work/main/tests/benchmarks/results/badis37
T=/tmp/b65/t
C="no_shrink_below_estimate=true hindsight_rounds=30 hindsight_min_kb=4096 calibration_probe_min_fraction=0.15 shortage_grow_fraction=0.5"
export REF=$T SECONDS_RUN=120 SKIP_REF=1
cd $R
for s in 1 2; do
  mkdir -p $R/slot-$s
  grep -E '"estimator": "(none|oracle)"' ../badis35/slot-1/patterns.jsonl > $R/slot-$s/patterns.jsonl
done
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-1 \
    "badis $T" "nhcs $T $C"
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-2 \
    "nhcs $T $C" "badis $T"
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
cd $T
opts=""; for o in $C; do opts="$opts --badis-option $o"; done
{ echo "== $(date -u +%FT%TZ) w15 badis"; uptime
  flock /tmp/memmut-tcg.lock $PY -m tests.benchmarks.bench_badis --step 10 --shapes W1,W2,W3,W4,W5 --allocs s,d --estimators badis --parallel 2 --out $R/w15/badis > $R/w15-badis.out 2>&1
  echo "== $(date -u +%FT%TZ) w15 nhcs"; uptime
  flock /tmp/memmut-tcg.lock $PY -m tests.benchmarks.bench_badis --step 10 --shapes W1,W2,W3,W4,W5 --allocs s,d --estimators badis --parallel 2 $opts --out $R/w15/nhcs > $R/w15-nhcs.out 2>&1
  echo "== $(date -u +%FT%TZ) end"; uptime; } >> $R/w15-load.txt 2>&1
echo QUEUE_DONE >> $R/w15-load.txt
