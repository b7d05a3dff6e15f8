#!/bin/bash
# Stop 47, after the unit suite: shrink_floor_held_shortage with
# shrink_floor_step_moved (hsm, tree fe89d02: no default differs from
# e6dd8ef) beside the defaults, on the patterns whose floors matter
# (hot set, load-then-idle, phases), one slot.
set -u
R=/work/main/tests/benchmarks/results/badis35
T=/tmp/b63/t4
while pgrep -f "pytest -q -p no:cacheprovider -x tests/unit" > /dev/null; do sleep 10; done
export REF=$T SECONDS_RUN=120 SKIP_REF=1 PATTERNS=hotset,load_idle,phases
cd $R
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-5 \
    "hsm $T shrink_floor_held_shortage=true shrink_floor_step_moved=true" \
    "badis $T"
echo QUEUE_DONE >> $R/slot-5/load.txt
