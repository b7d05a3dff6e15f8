#!/bin/bash
# Stop 51: calibration_reprobe (`rp`) against the defaults (`badis`) on
# the whole pattern suite, two lock slots in alternated order, the
# references run in each slot (slot 1: none and oracle; slot 2: none).
# Nothing else heavy ran on the machine meanwhile. Tree: /tmp/b67/t.
set -u
R=/work/main/tests/benchmarks/results/badis39
T=/tmp/b67/t
export REF=$T SECONDS_RUN=120
cd $R
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-1 \
    "badis $T" "rp $T calibration_reprobe=true"
echo QUEUE_DONE >> $R/slot-1/load.txt
REF_ESTIMATORS=none flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh \
    $R/slot-2 "rp $T calibration_reprobe=true" "badis $T"
echo QUEUE_DONE >> $R/slot-2/load.txt
