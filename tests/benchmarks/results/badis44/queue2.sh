#!/bin/bash
# badis44 part 2 (stop 55): a hindsight floor released by a probe the
# guest lives through at the allocation where its read-backs came
# (floors.disproved with read_at_kb; tree /tmp/b71/f = c36b8a6 + that
# change, `floor`) beside c36b8a6 (/tmp/b71/t, `badis`), with twins,
# interleaved per pattern at 256 MiB: load-then-idle (where a first
# probe's read-back left such a floor in inter256), the hot set and Zipf
# 0.8 (where probes are answered by swap-ins: nothing should change).
set -u
R=/work/main/tests/benchmarks/results/badis44
T=/tmp/b71/t
F=/tmp/b71/f
cd $R
export REF=$T SECONDS_RUN=120 SKIP_REF=1
for p in load_idle zipf0.8 hotset; do
  PATTERNS=$p BENCH_ARGS="--twin" flock /tmp/memmut-tcg.lock \
      bash ../badis18/slots.sh $R/floor256 "floor $F" "badis $T"
done
echo QUEUE_DONE >> $R/floor256/load.txt
