#!/bin/bash
# Issue 13, stop 82: the cases calibration_probe_early moves on the model
# (load-then-idle, the hot sets), one twin pair set on TCG with the option
# on. Run from this directory:  T=<tree> bash queue.sh
. ../badis66/lib.sh
run tcg_early load_idle,hotset,hotset_slow --badis-option calibration_probe_early=True
