#!/bin/bash
# Stop 51: the pattern suite at another size than the one it was tuned on
# (512 MiB guests, 320 MiB of data, 120 s), vg_headroom_fraction's new
# default (`badis`) against the threshold alone (`old`), references in the
# slot. Tree: /tmp/b67/t2 (b7dce0c).
set -u
R=/work/main/tests/benchmarks/results/badis40
T=/tmp/b67/t2
export REF=$T SECONDS_RUN=120 BENCH_ARGS="--booked-mib 512 --data-mib 320"
cd $R
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-1 \
    "old $T vg_headroom_fraction=0" "badis $T"
echo QUEUE_DONE >> $R/slot-1/load.txt
