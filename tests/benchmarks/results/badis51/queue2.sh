#!/bin/bash
# Issue 13, stop 61: a second slot of queue.sh's cases at f9f1548 (the
# read over rounds with the fall rule, now the default), the order
# reversed: warm4 first, then the same tree with the option off.
cd "$(dirname "$0")"
REF=/tmp/t61/h2 SECONDS_RUN=120 SKIP_REF=1 PATTERNS=zipf0.8,hotset,load_idle BENCH_ARGS="--twin" \
  flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $PWD/tcg120_2 \
  'warm4 /tmp/t61/h2 calibration_probe_warm_rounds=4' 'off /tmp/t61/h2 calibration_probe_warm_rounds=0'
