#!/bin/bash
# Issue 13, stop 59: redis, defaults against ws_curve, interleaved (two more
# slots each, 300 s, twins, both starts).
cd "$(dirname "$0")"
for i in 2 3; do
REF=/tmp/b74/h SECONDS_RUN=300 SKIP_REF=1 PATTERNS=redis BENCH_ARGS="--twin" \
  flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $PWD/redis300_$i 'badis /tmp/b74/h' 'wsc /tmp/b74/h ws_curve=True'
done
