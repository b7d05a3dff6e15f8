#!/bin/bash
# Stop 47: slot 2 the defaults, rp and hs (shrink_floor_held_shortage,
# tree 0a4b71b: no default differs from e6dd8ef); slot 3 hs then the
# defaults. `none`/`oracle` rows from badis34's slot 1, as in slot 1.
set -u
R=/work/main/tests/benchmarks/results/badis35
T=/tmp/b63/t2
export REF=$T SECONDS_RUN=120 SKIP_REF=1
cd $R
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-2 \
    "badis $T" "rp $T calibration_rebase=true probe_readback_fraction=0.25" \
    "hs $T shrink_floor_held_shortage=true"
echo QUEUE_DONE >> $R/slot-2/load.txt
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-3 \
    "hs $T shrink_floor_held_shortage=true" "badis $T"
echo QUEUE_DONE >> $R/slot-3/load.txt
