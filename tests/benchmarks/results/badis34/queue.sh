#!/bin/bash
# Stop 46: calibration_rebase beside the defaults on the whole pattern
# suite: slot 1 with the reference, slot 2 without it, in the other order.
set -u
R=/work/main/tests/benchmarks/results/badis34
T=/tmp/b62/t
export REF=$T SECONDS_RUN=120
cd $R
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-1 \
    "badis $T" "rebase $T calibration_rebase=true"
mkdir -p $R/slot-2
grep -E '"estimator": "(none|oracle)"' $R/slot-1/patterns.jsonl > $R/slot-2/patterns.jsonl
SKIP_REF=1 flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-2 \
    "rebase $T calibration_rebase=true" "badis $T"
echo QUEUE_DONE >> $R/slot-2/load.txt
