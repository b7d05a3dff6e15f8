#!/bin/bash
# Stop 44, slot 3 (after queue2.sh's W1-W5): the jump of a short round
# towards the booking on every short round (grow) and only when the
# round's swap-outs are at least twice its swap-ins (grow2, new this
# stop), beside the defaults, on the hot set, phases and load-then-idle.
set -u
R=/work/main/tests/benchmarks/results/badis32
T=/tmp/b60/t3
export REF=$T SECONDS_RUN=120 PATTERNS=hotset,phases,load_idle
cd $R
mkdir -p $R/slot-3
flock /tmp/memmut-tcg.lock grep -E '"estimator": "(none|oracle)"' $R/slot-1/patterns.jsonl > $R/slot-3/patterns.jsonl
SKIP_REF=1 flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-3 \
    "grow2 $T shortage_grow_fraction=0.5 shortage_grow_out_ratio=2" \
    "badis $T" "grow $T shortage_grow_fraction=0.5"
echo Q3_DONE >> $R/slot-3/load.txt
