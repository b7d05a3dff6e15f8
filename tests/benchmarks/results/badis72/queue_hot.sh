#!/bin/bash
# Stop 72: the cost side of [badis] shortage_ramp on TCG: the hot sets,
# whose moves read back recent swap-ins for a round or two (where a
# shortage jump lost in badis19 and badis32), and load-then-idle,
# against the defaults (bench_patterns twin pairs, both starts, 120 s).
# Run from this directory after queue.sh: bash queue_hot.sh [R]
T=${T:-/tmp/t72/tree}
. ../badis66/lib.sh
R=${1:-}
run tcg_def_hot$R hotset,hotset_slow,load_idle \
    --badis-option shortage_ramp=false
run tcg_ramp_hot$R hotset,hotset_slow,load_idle \
    --badis-option shortage_ramp=true --label ramp
