#!/bin/bash
set -u
R=/work/main/tests/benchmarks/results/badis31
T4=/tmp/b53/t4
until grep -q Q4_DONE $R/slot-4/load.txt 2>/dev/null; do sleep 10; done
export MEMMUT_TEST_CACHE=/work/main/tests/.cache PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
echo "== $(date -u +%FT%TZ) w15 slowstart $T4" >> $R/w15/load.txt; uptime >> $R/w15/load.txt
flock /tmp/memmut-tcg.lock bash -c "cd $T4 && PYTHONPATH=$T4 $PY -m tests.benchmarks.bench_badis --step 10 --shapes W1,W2,W3,W4,W5 --allocs s,d --estimators badis --parallel 2 --badis-option shrink_slow_start_kb=4096 --out $R/w15/slowstart > $R/w15/slowstart.stdout 2>&1"
echo "slowstart rc=$?" >> $R/w15/load.txt; uptime >> $R/w15/load.txt
echo Q5_DONE >> $R/w15/load.txt
