#!/bin/bash
# badis42 (stop 53): shrink_slow_start_kb=4096 (`slow4`) beside the
# defaults with twins, the whole suite (both starts) at 512 MiB / 320 MiB,
# slow4 then the defaults. Tree /tmp/b69/t (its COMMIT).
set -u
R=/work/main/tests/benchmarks/results/badis42
T=/tmp/b69/t
cd $R
export REF=$T SECONDS_RUN=120 SKIP_REF=1
BENCH_ARGS="--twin --booked-mib 512 --data-mib 320" flock /tmp/memmut-tcg.lock \
    bash ../badis18/slots.sh $R/suite512 "slow4 $T shrink_slow_start_kb=4096" "badis $T"
# (W1-W5 and the 256 MiB suite were to follow here: the script was stopped
# after the 512 MiB suite, and queue3.sh runs them interleaved instead.)
