#!/bin/bash
# Stop 50: the new defaults (no_shrink_below_estimate, hindsight_rounds=30,
# calibration_probe_min_fraction=0.15, with hindsight's two fixes) against
# the defaults before (`old`: the three off), the whole suite in one lock
# slot, nothing beside it. Tree: /tmp/b66/tree (COMMIT there).
set -u
R=/work/main/tests/benchmarks/results/badis38
T=/tmp/b66/tree
OFF="no_shrink_below_estimate=false hindsight_rounds=0 calibration_probe_min_fraction=0"
export REF=$T SECONDS_RUN=120 SKIP_REF=1
cd $R
grep -E '"estimator": "(none|oracle)"' ../badis35/slot-1/patterns.jsonl > $R/slot-1/patterns.jsonl
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-1 \
    "old $T $OFF" "badis $T"
echo QUEUE_DONE >> $R/slot-1/load.txt
