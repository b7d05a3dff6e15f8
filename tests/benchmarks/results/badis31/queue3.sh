#!/bin/bash
set -u
R=/work/main/tests/benchmarks/results/badis31
T3=/tmp/b53/t3
export REF=$T3 SECONDS_RUN=120
cd $R
mkdir -p $R/slot-3; grep -E '"estimator": "(none|oracle)"' $R/slot-1/patterns.jsonl > $R/slot-3/patterns.jsonl
SKIP_REF=1 flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-3 "slowstart $T3 shrink_slow_start_kb=4096" "badis $T3"
export MEMMUT_TEST_CACHE=/work/main/tests/.cache PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
echo "== $(date -u +%FT%TZ) w15 slowstart" >> $R/w15/load.txt; uptime >> $R/w15/load.txt
flock /tmp/memmut-tcg.lock bash -c "cd $T3 && PYTHONPATH=$T3 $PY -m tests.benchmarks.bench_badis --step 10 --shapes W1,W2,W3,W4,W5 --allocs s,d --estimators badis --parallel 2 --badis-option shrink_slow_start_kb=4096 --out $R/w15/slowstart > $R/w15/slowstart.stdout 2>&1"
echo "slowstart rc=$?" >> $R/w15/load.txt; uptime >> $R/w15/load.txt
echo Q3_DONE >> $R/w15/load.txt
