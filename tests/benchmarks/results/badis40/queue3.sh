#!/bin/bash
# Stop 51: calibration_reprobe (`rp`) against the defaults (`badis`) on
# load-then-idle at 512 MiB, where slot 1 met the learned-forever
# confirmation in both `badis` runs: two lock slots in alternated order,
# both starts, the references slot 1's (SKIP_REF). Machine quiet.
set -u
R=/work/main/tests/benchmarks/results/badis40
T=/tmp/b67/t2
export REF=$T SECONDS_RUN=120 SKIP_REF=1 PATTERNS=load_idle BENCH_ARGS="--booked-mib 512 --data-mib 320"
cd $R
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-2 \
    "badis $T" "rp $T calibration_reprobe=true"
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-3 \
    "rp $T calibration_reprobe=true" "badis $T"
echo QUEUE_DONE >> $R/slot-3/load.txt
