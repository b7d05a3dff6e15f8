#!/bin/bash
# Issue 13, stop 87: W1-W5 as ../badis73_repeats (three repeats, Badis
# and none) at the stop-87 defaults (rise_hold_no_grow on), from the tree
# $T of one commit -> w15/. The functional suite ran before it, on the
# same commit. Run from this directory: T=<tree> bash queue.sh
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
mkdir -p w15
cd w15 && PY=/work/main/.tox/functional/bin/python \
    bash ../../badis73_repeats/run.sh
