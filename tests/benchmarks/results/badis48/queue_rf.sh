#!/bin/bash
# badis48 (stop 58): readback_faults (read-backs judged by major faults,
# not pages read: swap readahead) against the defaults, same tree,
# alternated per pattern, twins, 256 MiB, 120 s.
set -u
R=/work/main/tests/benchmarks/results/badis48
T=/tmp/b73/rf
cd $R
export REF=$T SECONDS_RUN=120 SKIP_REF=1
for p in ${QUEUE_PATTERNS:-hotset load_idle}; do
  PATTERNS=$p BENCH_ARGS="--twin" flock /tmp/memmut-tcg.lock \
      bash ../badis18/slots.sh $R/rf_$p "badis $T" "rbf $T readback_faults=True"
done
echo QUEUE_DONE >> $R/rf_load_idle/load.txt
