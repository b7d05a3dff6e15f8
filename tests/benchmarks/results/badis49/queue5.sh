#!/bin/bash
# Issue 13, stop 59: redis with ws_curve and a first calibration read over
# one curve cycle, so that
# the pinned-page calibration is not taken against one round of the curve
# (calibrate_rounds = 8: the median over 8 rounds, each against the
# longest window of the curve read so far; calibrate_window_rounds does
# nothing under ws_curve, model120);
# two slots, 300 s, twins, both starts.
cd "$(dirname "$0")"
for i in 2 3; do
REF=/tmp/b74/h SECONDS_RUN=300 SKIP_REF=1 PATTERNS=redis BENCH_ARGS="--twin" \
  flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $PWD/redis300_$i 'wscr /tmp/b74/h ws_curve=True calibrate_rounds=8'
done
