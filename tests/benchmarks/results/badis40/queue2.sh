#!/bin/bash
# Stop 51, after queue.sh was stopped by hand once its references had run:
# the two configurations in the same slot directory, reusing its `none`
# and `oracle` runs (SKIP_REF). Nothing else ran on the machine.
set -u
R=/work/main/tests/benchmarks/results/badis40
T=/tmp/b67/t2
export REF=$T SECONDS_RUN=120 SKIP_REF=1 BENCH_ARGS="--booked-mib 512 --data-mib 320"
cd $R
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-1 \
    "old $T vg_headroom_fraction=0" "badis $T"
echo QUEUE_DONE >> $R/slot-1/load.txt
