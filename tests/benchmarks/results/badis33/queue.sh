#!/bin/bash
# Stop 45: the time slice's trade-off on the pattern suite with today's
# defaults (the bench's 4 s, 12 s, 30 s): slot 1 with the reference,
# slot 2 without it, in the other order.
set -u
R=/work/main/tests/benchmarks/results/badis33
T=/tmp/b61/t
export REF=$T SECONDS_RUN=120
cd $R
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-1 \
    "badis $T" "ts12 $T time_slice=12.0" "ts30 $T time_slice=30.0"
mkdir -p $R/slot-2
grep -E '"estimator": "(none|oracle)"' $R/slot-1/patterns.jsonl > $R/slot-2/patterns.jsonl
SKIP_REF=1 flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-2 \
    "ts30 $T time_slice=30.0" "ts12 $T time_slice=12.0" "badis $T"
echo QUEUE_DONE >> $R/slot-2/load.txt
