#!/bin/bash
# Issue 13, stop 62: the read's slope gate (calibration_probe_warm_slope)
# on TCG, twins, 256 MiB, both starts: redis (the real program whose
# probes it is for) and the three patterns whose probes matter, the new
# option on then off, from this stop's tree.
cd "$(dirname "$0")"
T=${T:-/tmp/t62/h}
REF=$T SECONDS_RUN=120 SKIP_REF=1 PATTERNS=${PATTERNS:-redis,hotset,zipf0.8,load_idle} BENCH_ARGS="--twin" \
  flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $PWD/${OUTDIR:-tcg120} \
  "slope $T calibration_probe_warm_slope=true" "noslope $T calibration_probe_warm_slope=false"
