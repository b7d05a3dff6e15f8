#!/bin/bash
# Stop 47, after slot 5: hs2 (shrink_floor_held_shortage) and the
# defaults once more on the whole suite (tree fe89d02: no default
# differs from e6dd8ef).
set -u
R=/work/main/tests/benchmarks/results/badis35
T=/tmp/b63/t4
export REF=$T SECONDS_RUN=120 SKIP_REF=1
cd $R
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-6 \
    "hs2 $T shrink_floor_held_shortage=true" "badis $T"
echo QUEUE_DONE >> $R/slot-6/load.txt
