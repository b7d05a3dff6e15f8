#!/bin/bash
# Issue 13, stop 59: the real program (redis) with today's defaults, twins,
# 256 MiB, both starts, 300 s then 120 s.
cd "$(dirname "$0")"
REF=/tmp/b74/h SECONDS_RUN=300 SKIP_REF=1 PATTERNS=redis BENCH_ARGS="--twin" \
  flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $PWD/redis300 'badis /tmp/b74/h'
REF=/tmp/b74/h SECONDS_RUN=120 SKIP_REF=1 PATTERNS=redis BENCH_ARGS="--twin" \
  flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $PWD/redis120 'badis /tmp/b74/h'
