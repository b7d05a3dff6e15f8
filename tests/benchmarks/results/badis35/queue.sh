#!/bin/bash
# Stop 47: calibration_rebase with probe_readback_fraction=0.25 (stop 44's
# probe that a few pages read back do not answer) beside the defaults on
# the whole pattern suite; `none`/`oracle` rows copied from badis34's
# slot 1 (same machine, same day).
set -u
R=/work/main/tests/benchmarks/results/badis35
T=/tmp/b63/t
export REF=$T SECONDS_RUN=120 SKIP_REF=1
cd $R
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-1 \
    "rp $T calibration_rebase=true probe_readback_fraction=0.25" "badis $T"
echo QUEUE_DONE >> $R/slot-1/load.txt
