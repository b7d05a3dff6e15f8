#!/bin/bash
# Issue 13, stop 62: the final code (the balloon held while the guest's
# memory in use rises, calibration_follow_rounds = 5, slope gate on),
# TCG, twins, both starts, the patterns of queue2.sh.
cd "$(dirname "$0")"
T=${T:-/tmp/t62/h3}
REF=$T SECONDS_RUN=120 SKIP_REF=1 PATTERNS=${PATTERNS:-redis,zipf1.2,load_idle} BENCH_ARGS="--twin" \
  flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $PWD/${OUTDIR:-hold120} \
  "hold $T calibration_probe_warm_slope=true calibration_follow_rounds=5"
