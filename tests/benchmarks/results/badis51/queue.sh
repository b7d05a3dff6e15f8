#!/bin/bash
# Issue 13, stop 61: a read over rounds before each calibration probe
# (calibration_probe_warm_rounds) against the defaults on TCG, twins,
# 256 MiB, both starts, the three patterns whose probes matter.
cd "$(dirname "$0")"
REF=/tmp/t61/h SECONDS_RUN=120 SKIP_REF=1 PATTERNS=zipf0.8,hotset,load_idle BENCH_ARGS="--twin" \
  flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $PWD/tcg120 \
  'badis /tmp/t61/h' 'warm4 /tmp/t61/h calibration_probe_warm_rounds=4'
