#!/bin/bash
# badis46 part 3: after queue2.sh, load-then-idle at 120 s with tree R
# (`raise`: the committed tree, a floor raised by a swap-in after a
# shrink keeping the allocation of the read-backs that set it) in two
# slots, against badis45's runs of the committed code (new2).
set -u
R=/work/main/tests/benchmarks/results/badis46
RT=/tmp/b72/r
cd $R
while ! grep -q QUEUE_DONE $R/long300_zipf1.2/load.txt 2>/dev/null; do sleep 20; done
export REF=$RT SKIP_REF=1
for i in 1 2; do
  SECONDS_RUN=120 PATTERNS=load_idle BENCH_ARGS="--twin" \
      flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/idle_raise_$i \
      "raise $RT"
done
echo QUEUE_DONE >> $R/idle_raise_2/load.txt
