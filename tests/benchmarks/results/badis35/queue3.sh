#!/bin/bash
# Stop 47: shrink_floor_held_shortage without the free-memory test (hs2,
# tree ba1461c: no default differs from e6dd8ef) beside the defaults,
# in two slots of opposite order (queue2.sh's slot 3 replaced by this).
set -u
R=/work/main/tests/benchmarks/results/badis35
T=/tmp/b63/t3
export REF=$T SECONDS_RUN=120 SKIP_REF=1
cd $R
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-3 \
    "hs2 $T shrink_floor_held_shortage=true" "badis $T"
echo QUEUE_DONE >> $R/slot-3/load.txt
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-4 \
    "badis $T" "hs2 $T shrink_floor_held_shortage=true"
echo QUEUE_DONE >> $R/slot-4/load.txt
