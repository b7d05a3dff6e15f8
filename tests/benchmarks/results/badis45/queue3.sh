#!/bin/bash
# badis45 part 3: two more load-then-idle slots of new2 alone (the
# at-floor probe needs a run whose first probe left a hindsight floor)
set -u
R=/work/main/tests/benchmarks/results/badis45
T=/tmp/b72/t
G=/tmp/b72/g
cd $R
while ! grep -q QUEUE_DONE $R/zipf300/load.txt 2>/dev/null; do sleep 20; done
export REF=$T SKIP_REF=1
for i in 1 2; do
  SECONDS_RUN=120 PATTERNS=load_idle BENCH_ARGS="--twin" \
      flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/idle_new2_$i \
      "new2 $G calibration_reprobe_answers=2"
done
echo QUEUE_DONE >> $R/idle_new2_2/load.txt
