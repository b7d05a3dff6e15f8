#!/bin/bash
# badis44 (stop 55): the defaults at c36b8a6 (the calibration's hold inside
# Badis's step; caps of the correction within 1 MiB ignored) beside stop
# 54's tree (0006e09, `s54`), with twins, interleaved per pattern (the
# new tree then s54, one lock slot per pattern) at 256 MiB: a second run
# of every case of badis43/inter256 and a check of the two changes.
# Trees /tmp/b71/t and /tmp/b71/s54 (their COMMIT files).
set -u
R=/work/main/tests/benchmarks/results/badis44
T=/tmp/b71/t
S=/tmp/b71/s54
cd $R
# after the functional suite (it holds the lock)
while ! grep -qE "passed|failed|error" /tmp/b71/functional.log 2>/dev/null; do sleep 20; done
export REF=$T SECONDS_RUN=120 SKIP_REF=1
for p in zipf0.8 hotset load_idle phases seq; do
  PATTERNS=$p BENCH_ARGS="--twin" flock /tmp/memmut-tcg.lock \
      bash ../badis18/slots.sh $R/inter256 "badis $T" "s54 $S"
done
echo QUEUE_DONE >> $R/inter256/load.txt
