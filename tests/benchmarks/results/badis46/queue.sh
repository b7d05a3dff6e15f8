#!/bin/bash
# badis46 (stop 57): the committed defaults (tree H, `badis`) at 300 s,
# twins, 256 MiB: what a 120 s run's one-time costs (a first descent, a
# phase change) weigh at 2.5 times the length, on TCG.
set -u
R=/work/main/tests/benchmarks/results/badis46
H=/tmp/b72/h
cd $R
export REF=$H SECONDS_RUN=300 SKIP_REF=1
for p in ${QUEUE_PATTERNS:-load_idle phases hotset}; do
  PATTERNS=$p BENCH_ARGS="--twin" flock /tmp/memmut-tcg.lock \
      bash ../badis18/slots.sh $R/long300_$p "badis $H"
done
echo QUEUE_DONE >> $R/long300_hotset/load.txt
