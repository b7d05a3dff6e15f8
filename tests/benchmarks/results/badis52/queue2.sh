#!/bin/bash
# Issue 13, stop 62: calibration again on the guest's growth
# (calibration_follow_rounds) with the slope gate on, TCG, twins, both
# starts: redis and the patterns whose data loads while the agent runs.
cd "$(dirname "$0")"
T=${T:-/tmp/t62/h2}
REF=$T SECONDS_RUN=120 SKIP_REF=1 PATTERNS=${PATTERNS:-redis,zipf1.2,load_idle} BENCH_ARGS="--twin" \
  flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $PWD/${OUTDIR:-grow120} \
  "grow $T calibration_probe_warm_slope=true calibration_follow_rounds=5" \
  "slope $T calibration_probe_warm_slope=true calibration_follow_rounds=0"
