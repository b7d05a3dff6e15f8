#!/bin/bash
# Stop 50: load-then-idle from boot again and again with
# calibration_reprobe=true (`rp`), to see whether a run whose first
# calibration probe is answered by swap-ins recovers its saving (the
# failure of slot 2's `badis` run, 5 of about 70 runs since badis30).
# Two loops side by side (the bench's --parallel 2, one guest each),
# until $DEADLINE (epoch seconds). Tree: /tmp/b66/tree3 (COMMIT there).
set -u
R=/work/main/tests/benchmarks/results/badis38
T=/tmp/b66/tree3
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
loop() {  # one directory per run: a case run again replaces its record
  local n=0 out
  mkdir -p $R/rp
  while [ "$(date +%s)" -lt "$DEADLINE" ]; do
    n=$((n + 1)); out=$R/rp/$1$n
    mkdir -p $out
    grep -E '"estimator": "(none|oracle)"' $R/../badis35/slot-1/patterns.jsonl > $out/patterns.jsonl
    echo "== $(date -u +%FT%TZ) rp $1$n"; uptime
    (cd $T && PYTHONPATH=$T $PY -m tests.benchmarks.bench_patterns \
        --patterns load_idle --starts boot --seconds 120 --parallel 1 \
        --out $out --keep-other-runs --estimators badis --label rp \
        --badis-option calibration_reprobe=true --log $out/rp.log) \
        > $out/rp.stdout 2>&1
    echo "rp $1$n rc=$?"
  done >> $R/rp/load.txt 2>&1
}
loop a & sleep 20; loop b & wait
echo QUEUE_DONE >> $R/rp/load.txt
