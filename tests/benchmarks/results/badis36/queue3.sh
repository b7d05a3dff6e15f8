#!/bin/bash
# Stop 48, after queue2.sh's slots 1-2 (its slot 3, the probe's cost,
# was stopped 2 minutes in and deleted, for this): no_shrink_below_estimate
# alone (nse) beside the defaults on the whole suite, one lock slot, then
# its W1-W5. Tree ed257b9.
set -u
R=/work/main/tests/benchmarks/results/badis36
T=/tmp/b64/t3
PY=/work/main/.tox/functional/bin/python
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
export REF=$T SECONDS_RUN=120 SKIP_REF=1
cd $R
mkdir -p $R/slot-3
grep -E '"estimator": "(none|oracle)"' ../badis35/slot-1/patterns.jsonl > $R/slot-3/patterns.jsonl
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-3 \
    "nse $T no_shrink_below_estimate=true" "badis $T"
echo QUEUE_DONE >> $R/slot-3/load.txt
echo "== $(date -u +%FT%TZ) w15 nse" >> $R/w15.txt
(cd $T && flock /tmp/memmut-tcg.lock env PYTHONPATH=$T $PY -m tests.benchmarks.bench_badis --step 10 --shapes W1,W2,W3,W4,W5 --allocs s,d --estimators badis --parallel 2 --badis-option no_shrink_below_estimate=true --out $R/w15/nse) > $R/w15-nse.stdout 2>&1
echo "w15 nse rc=$?" >> $R/w15.txt
echo QUEUE3_DONE >> $R/w15.txt
