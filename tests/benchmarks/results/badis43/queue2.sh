#!/bin/bash
# badis43, after queue.sh: the functional suite at c539348 (the
# calibration's limit), then W1-W5 (bench_badis, 256 MiB, one run per
# case) with the new defaults and with the slow start off, then the
# hot set and Zipf 0.8 at 256 MiB with the new defaults (`cap`:
# c539348). Tree /tmp/b70/h (its COMMIT).
set -u
R=/work/main/tests/benchmarks/results/badis43
T=/tmp/b70/h
while ! grep -q QUEUE_DONE $R/contended512/load.txt 2>/dev/null; do sleep 20; done
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
(cd $T && PYTHONPATH=$T flock /tmp/memmut-tcg.lock $PY -m pytest -q -p no:cacheprovider --timeout=900 tests/functional > /tmp/b70/func_full2.log 2>&1)
mkdir -p $R/w15
(cd $T
 { echo "== $(date -u +%FT%TZ) w15 badis"; uptime
   flock /tmp/memmut-tcg.lock $PY -m tests.benchmarks.bench_badis --step 10 --shapes W1,W2,W3,W4,W5 --allocs s,d --estimators badis --parallel 2 --out $R/w15/badis > $R/w15/badis.out 2>&1
   echo "== $(date -u +%FT%TZ) w15 off"; uptime
   flock /tmp/memmut-tcg.lock $PY -m tests.benchmarks.bench_badis --step 10 --shapes W1,W2,W3,W4,W5 --allocs s,d --estimators badis --parallel 2 --badis-option shrink_slow_start_kb=0 --out $R/w15/off > $R/w15/off.out 2>&1
   echo "== $(date -u +%FT%TZ) end"; uptime; } >> $R/w15/load.txt 2>&1)
cd $R
export REF=$T SECONDS_RUN=120 SKIP_REF=1
for p in hotset zipf0.8; do
  PATTERNS=$p BENCH_ARGS="--twin" flock /tmp/memmut-tcg.lock \
      bash ../badis18/slots.sh $R/cap256 "cap $T"
done
echo QUEUE_DONE >> $R/cap256/load.txt
