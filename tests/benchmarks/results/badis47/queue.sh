#!/bin/bash
# badis47 (stop 58): the committed defaults with the harness recording
# what the controller packs on (WSS^max_avg and the shrink floor) per
# poll, at 300 s, twins, 256 MiB: the packing figure against the truth
# with and without the floor, from the same runs (the agent is unchanged).
set -u
R=/work/main/tests/benchmarks/results/badis47
P=/tmp/b73/p
cd $R
export REF=$P SECONDS_RUN=300 SKIP_REF=1
for p in ${QUEUE_PATTERNS:-hotset load_idle phases}; do
  PATTERNS=$p BENCH_ARGS="--twin" flock /tmp/memmut-tcg.lock \
      bash ../badis18/slots.sh $R/pack300_$p "badis $P"
done
echo QUEUE_DONE >> $R/pack300_phases/load.txt
