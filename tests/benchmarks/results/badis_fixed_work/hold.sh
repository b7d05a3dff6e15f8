#!/bin/bash
# One lock hold of the fixed-work series (issue 20), from a checkout
# pinned at the series' commit ($SRC), under flock /tmp/memmut-tcg.lock:
#   flock /tmp/memmut-tcg.lock hold.sh R
# R: the repeat (also the case order's seed offset). The invocation stops
# starting runs so that it ends by its start + HOLD_S seconds (the stop is
# that time truncated to the minute). Repeat 0 ran with HOLD_S=780
# TIMEOUT=240 MARGIN=100, repeats 1-2 with the defaults below (README).
set -u
R=$1
SRC=${SRC:-/tmp/fw8/src}
OUT=${OUT:-/work/wt-eval8/tests/benchmarks/results/badis_fixed_work}
cd "$SRC" || exit 1
export PYTHONPATH=$SRC MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
STOP=$(date -u -d "+${HOLD_S:-480} sec" +%H:%M)
load() { echo "== $(date -u +%FT%TZ) $1 (commit $(git -C $SRC rev-parse --short HEAD))"; uptime; top -bn1 | sed -n 7,14p; }
{
load "repeat $R start, stop at $STOP"
$PY -m tests.benchmarks.bench_badis --fixed-work ${PASSES:-240} \
    --shapes ${SHAPES:-W3,W5} --allocs d \
    --estimators none,badis,zballoond,selfballoon --parallel 1 \
    --repeats 1 --first-repeat $R --seed $((20 + R)) --keep-other-runs \
    --timeout ${TIMEOUT:-60} --stop-at $STOP --stop-margin ${MARGIN:-70} \
    --out $OUT > $OUT/repeat$R.stdout 2>&1
echo "repeat $R rc=$?"
load "repeat $R end"
} >> $OUT/load.txt 2>&1
