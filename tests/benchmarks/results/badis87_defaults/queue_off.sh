#!/bin/bash
# Issue 13, stop 87: W1-W5 as ../badis73_repeats on the same tree $T
# with rise_hold_no_grow off (the stop-86 defaults), beside w15/ (on).
# Run from this directory: T=<tree> bash queue_off.sh
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
mkdir -p w15_off
cd w15_off && PY=/work/main/.tox/functional/bin/python \
    bash ../../badis73_repeats/run.sh --badis-option rise_hold_no_grow=false
