#!/bin/bash
# stop 43 slot: the descent rule (badis, tree default) against the rule
# before it (norise), plus an observe run on the Zipf patterns.
set -u
R=/work/main/tests/benchmarks/results/badis31
T=/tmp/b53/t
export REF=$T SECONDS_RUN=120
cd $R
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-1 "badis $T" "norise $T shrink_rise_from_descent=false"
# observe: Badis samples and estimates, balloon left at the booking
export MEMMUT_TEST_CACHE=/work/main/tests/.cache PATH=/work/main/memstore/target/release:$PATH
flock /tmp/memmut-tcg.lock bash -c "cd $T && PYTHONPATH=$T /work/main/.tox/functional/bin/python -m tests.benchmarks.bench_patterns --patterns zipf0.8,zipf1.2,hotset --seconds 120 --out $R/slot-1 --keep-other-runs --estimators observe > $R/slot-1/observe.stdout 2>&1; echo observe rc=\$? >> $R/slot-1/load.txt; uptime >> $R/slot-1/load.txt"
mkdir -p $R/slot-2; grep -E '"estimator": "(none|oracle)"' $R/slot-1/patterns.jsonl > $R/slot-2/patterns.jsonl
SKIP_REF=1 flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-2 "norise $T shrink_rise_from_descent=false" "badis $T"
echo QUEUE_DONE >> $R/slot-1/load.txt
