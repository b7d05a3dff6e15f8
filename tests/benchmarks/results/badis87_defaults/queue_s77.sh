#!/bin/bash
# Issue 13, stop 87: W1-W5 as ../badis73_repeats on the same tree $T
# with the options that became defaults after stop 77 off (the stop-77
# set: end_round_on_thrashing, calibration_probe_early,
# probe_answer_rate, probe_over_demand, rise_hold_no_grow), beside w15/
# and w15_off/. Run from this directory: T=<tree> bash queue_s77.sh
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
mkdir -p w15_s77
cd w15_s77 && PY=/work/main/.tox/functional/bin/python \
    bash ../../badis73_repeats/run.sh \
    --badis-option end_round_on_thrashing=false \
    --badis-option calibration_probe_early=false \
    --badis-option probe_answer_rate=false \
    --badis-option probe_over_demand=false \
    --badis-option rise_hold_no_grow=false
