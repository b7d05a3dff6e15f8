#!/bin/bash
set -u
R=/work/main/tests/benchmarks/results/badis31
T4=/tmp/b53/t4
export REF=$T4 SECONDS_RUN=120
cd $R
mkdir -p $R/slot-4; grep -E '"estimator": "(none|oracle)"' $R/slot-1/patterns.jsonl > $R/slot-4/patterns.jsonl
SKIP_REF=1 flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-4 "slowstart $T4 shrink_slow_start_kb=4096"
echo Q4_DONE >> $R/slot-4/load.txt
