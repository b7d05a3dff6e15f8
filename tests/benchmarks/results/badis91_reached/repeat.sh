#!/bin/bash
# Run the functional test of the early calibration probe N times on this
# bed and append one line per run to OUT: pass/fail and the correction it
# ended at (the test prints "calibrated ... correction now X MiB").
# Usage (repository root): bash tests/benchmarks/results/badis91_reached/repeat.sh OUT N
set -u
out=$1
n=${2:-5}
export MEMMUT_TEST_CACHE=${MEMMUT_TEST_CACHE:-$PWD/tests/.cache}
export PATH=$PWD/memstore/target/release:$PATH
log=$(mktemp)
for i in $(seq 1 "$n"); do
    flock /tmp/memmut-tcg.lock .tox/functional/bin/python -m pytest -q \
        -p no:cacheprovider --timeout=900 -s tests/functional/test_badis.py \
        -k early_calibration_probe > "$log" 2>&1
    rc=$?
    now=$(grep -o 'correction now [0-9]* MiB' "$log" | tail -1)
    short=$(grep -c '(asked' "$log")
    echo "run $i rc=$rc ${now:-no correction printed} short_probes=$short" >> "$out"
done
rm -f "$log"
