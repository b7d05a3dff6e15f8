#!/bin/bash
# Issue 13, stop 59: redis with [badis] ws_curve (Denning's working-set
# function over ws_curve_rounds) beside the defaults' runs in redis300.
cd "$(dirname "$0")"
REF=/tmp/b74/h SECONDS_RUN=300 SKIP_REF=1 PATTERNS=redis BENCH_ARGS="--twin" \
  flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $PWD/redis300 'wsc /tmp/b74/h ws_curve=True'
