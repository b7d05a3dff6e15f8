#!/bin/bash
# Stop 48, after queue3.sh: no_shrink_below_estimate alone (nse) beside
# the defaults once more, the defaults first, on a machine left alone.
# Tree ed257b9.
set -u
R=/work/main/tests/benchmarks/results/badis36
T=/tmp/b64/t3
export REF=$T SECONDS_RUN=120 SKIP_REF=1
cd $R
mkdir -p $R/slot-4
grep -E '"estimator": "(none|oracle)"' ../badis35/slot-1/patterns.jsonl > $R/slot-4/patterns.jsonl
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-4 \
    "badis $T" "nse $T no_shrink_below_estimate=true"
echo QUEUE_DONE >> $R/slot-4/load.txt
