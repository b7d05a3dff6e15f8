#!/bin/bash
# Stop 72: a second round of queue.sh's pattern pairs (phases,
# phases_up), after queue_hot.sh. Run from this directory.
T=${T:-/tmp/t72/tree}
. ../badis66/lib.sh
run tcg_def_r2 phases,phases_up --badis-option shortage_ramp=false
run tcg_ramp_r2 phases,phases_up --badis-option shortage_ramp=true \
    --label ramp
