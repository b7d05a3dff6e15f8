#!/bin/bash
# Stop 45: no_shrink_while_allocating against the defaults, two slots in
# alternated order, both without the reference (copied from slot 1).
set -u
R=/work/main/tests/benchmarks/results/badis33
T=/tmp/b61/t2
export REF=$T SECONDS_RUN=120 SKIP_REF=1
cd $R
ALLOC="alloc $T no_shrink_while_allocating=true"
for s in 3 4; do
  mkdir -p $R/slot-$s
  grep -E '"estimator": "(none|oracle)"' $R/slot-1/patterns.jsonl > $R/slot-$s/patterns.jsonl
done
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-3 "$ALLOC" "badis $T"
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-4 "badis $T" "$ALLOC"
echo QUEUE_DONE >> $R/slot-4/load.txt
