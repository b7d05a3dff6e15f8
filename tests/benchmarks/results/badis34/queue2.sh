#!/bin/bash
# Stop 46, after queue.sh: shrink_floor_hold_in_use alone (hold) and with
# calibration_rebase (rh), beside the defaults in slot 3, in the other
# order in slot 4; the reference copied from slot 1.
set -u
R=/work/main/tests/benchmarks/results/badis34
T=/tmp/b62/t2
export REF=$T SECONDS_RUN=120
cd $R
while ! grep -q QUEUE_DONE $R/slot-2/load.txt 2>/dev/null; do sleep 20; done
for s in 3 4; do
  mkdir -p $R/slot-$s
  grep -E '"estimator": "(none|oracle)"' $R/slot-1/patterns.jsonl > $R/slot-$s/patterns.jsonl
done
SKIP_REF=1 flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-3 \
    "badis $T" "hold $T shrink_floor_hold_in_use=true" \
    "rh $T calibration_rebase=true shrink_floor_hold_in_use=true"
SKIP_REF=1 flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-4 \
    "rh $T calibration_rebase=true shrink_floor_hold_in_use=true" \
    "hold $T shrink_floor_hold_in_use=true"
echo QUEUE_DONE >> $R/slot-4/load.txt
