#!/bin/bash
# Stop 50: calibration_probe_max_gap_fraction=0.5 (gap50) beside the new
# defaults on load-then-idle (the only pattern it changed on the paged
# guest model, model1/g1), two lock slots in alternated order, after
# queue.sh's slot. Tree: /tmp/b66/tree2 (COMMIT there).
set -u
R=/work/main/tests/benchmarks/results/badis38
T=/tmp/b66/tree2
G="calibration_probe_max_gap_fraction=0.5"
export REF=$T SECONDS_RUN=120 SKIP_REF=1 PATTERNS=load_idle
cd $R
while ! grep -q QUEUE_DONE $R/slot-1/load.txt 2>/dev/null; do sleep 10; done
for s in 2 3; do
  mkdir -p $R/slot-$s
  grep -E '"estimator": "(none|oracle)"' ../badis35/slot-1/patterns.jsonl > $R/slot-$s/patterns.jsonl
done
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-2 \
    "gap50 $T $G" "badis $T"
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-3 \
    "badis $T" "gap50 $T $G"
echo QUEUE_DONE >> $R/slot-3/load.txt
