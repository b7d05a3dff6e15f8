#!/bin/bash
# Issue 13, stop 59: Zballoond and self-ballooning on redis with today's
# harness (twins, 256 MiB, 300 s, both starts), beside badis in redis300*.
cd "$(dirname "$0")"
REF=/tmp/b74/h SECONDS_RUN=300 REF_ESTIMATORS=zballoond,selfballoon \
  PATTERNS=redis BENCH_ARGS="--twin" \
  flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $PWD/baselines300
