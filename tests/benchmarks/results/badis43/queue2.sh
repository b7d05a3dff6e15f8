#!/bin/bash
# badis43, after queue.sh: W1-W5 (bench_badis, 256 MiB, one run per case)
# with the new defaults and with the slow start off. Tree /tmp/b70/n.
set -u
R=/work/main/tests/benchmarks/results/badis43
T=/tmp/b70/n
while ! grep -q QUEUE_DONE $R/contended512/load.txt 2>/dev/null; do sleep 20; done
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
mkdir -p $R/w15
(cd $T
 { echo "== $(date -u +%FT%TZ) w15 badis"; uptime
   flock /tmp/memmut-tcg.lock $PY -m tests.benchmarks.bench_badis --step 10 --shapes W1,W2,W3,W4,W5 --allocs s,d --estimators badis --parallel 2 --out $R/w15/badis > $R/w15/badis.out 2>&1
   echo "== $(date -u +%FT%TZ) w15 off"; uptime
   flock /tmp/memmut-tcg.lock $PY -m tests.benchmarks.bench_badis --step 10 --shapes W1,W2,W3,W4,W5 --allocs s,d --estimators badis --parallel 2 --badis-option shrink_slow_start_kb=0 --out $R/w15/off > $R/w15/off.out 2>&1
   echo "== $(date -u +%FT%TZ) end"; uptime; } >> $R/w15/load.txt 2>&1)
echo QUEUE_DONE >> $R/w15/load.txt
