#!/bin/bash
# Issue 13, stop 62: redis again, the new defaults and stop 61's side by
# side (a second run per case; twins).
cd "$(dirname "$0")"
T=${T:-/tmp/t62/h3}
REF=$T SECONDS_RUN=120 SKIP_REF=1 PATTERNS=redis BENCH_ARGS="--twin" \
  flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $PWD/${OUTDIR:-redis2} \
  "new $T calibration_probe_warm_slope=true calibration_follow_rounds=5" \
  "old $T calibration_probe_warm_slope=false calibration_follow_rounds=0"
