#!/bin/bash
# Issue 13, stop 61: the real program (redis) at 120 s, twins, both
# starts, the new default (warm4) then the option off, from HEAD's tree.
cd "$(dirname "$0")"
REF=/tmp/t61/h3 SECONDS_RUN=120 SKIP_REF=1 PATTERNS=redis BENCH_ARGS="--twin" \
  flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $PWD/redis120 \
  'warm4 /tmp/t61/h3 calibration_probe_warm_rounds=4' 'off /tmp/t61/h3 calibration_probe_warm_rounds=0'
