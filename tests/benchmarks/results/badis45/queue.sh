#!/bin/bash
# badis45 (stop 56): HEAD (e64b226, `badis`) beside a candidate tree
# (`new`): a hindsight floor released by a probe that evicted and lived at
# the allocation of the read-backs that set it (floor_disproved.diff of
# badis44 with the evicted condition), and calibration_reprobe_answers=2.
# Twins, 256 MiB, 120 s, interleaved per pattern (one lock slot each).
# Trees /tmp/b72/t and /tmp/b72/f (their COMMIT files).
set -u
R=/work/main/tests/benchmarks/results/badis45
T=/tmp/b72/t
F=/tmp/b72/f
cd $R
export REF=$T SECONDS_RUN=${SECONDS_RUN:-120} SKIP_REF=1
for p in ${QUEUE_PATTERNS:-load_idle zipf0.8 hotset phases}; do
  PATTERNS=$p BENCH_ARGS="--twin" flock /tmp/memmut-tcg.lock \
      bash ../badis18/slots.sh $R/${OUTNAME:-inter256} "badis $T" \
      "new $F calibration_reprobe_answers=2"
done
echo QUEUE_DONE >> $R/${OUTNAME:-inter256}/load.txt
