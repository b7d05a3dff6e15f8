#!/bin/bash
# badis46 part 2: after queue.sh, Zipf 1.2 at 300 s (Zipf 0.8 at 300 s: badis45/zipf300, new2) with
# the same tree, completing the suite at 300 s.
set -u
R=/work/main/tests/benchmarks/results/badis46
H=/tmp/b72/h
cd $R
while ! grep -q QUEUE_DONE $R/long300_hotset/load.txt 2>/dev/null; do sleep 20; done
export REF=$H SECONDS_RUN=300 SKIP_REF=1
for p in zipf1.2; do
  PATTERNS=$p BENCH_ARGS="--twin" flock /tmp/memmut-tcg.lock \
      bash ../badis18/slots.sh $R/long300_$p "badis $H"
done
echo QUEUE_DONE >> $R/long300_zipf1.2/load.txt
