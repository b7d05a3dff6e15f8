#!/bin/bash
set -u
R=/work/main/tests/benchmarks/results/badis31
T=/tmp/b53/t
T2=/tmp/b53/t2
until grep -q QUEUE_DONE $R/slot-1/load.txt 2>/dev/null; do sleep 20; done
export REF=$T SECONDS_RUN=120
cd $R
SKIP_REF=1 flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-2 "stepback $T2 shrink_floor_step_back=true"
export MEMMUT_TEST_CACHE=/work/main/tests/.cache PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
mkdir -p $R/w15
for conf in "badis $T" "norise $T shrink_rise_from_descent=false" "stepback $T2 shrink_floor_step_back=true"; do
  set -- $conf; name=$1; tree=$2; shift 2
  opts=""; for o in "$@"; do opts="$opts --badis-option $o"; done
  echo "== $(date -u +%FT%TZ) w15 $name $tree $opts"; uptime
  flock /tmp/memmut-tcg.lock bash -c "cd $tree && PYTHONPATH=$tree $PY -m tests.benchmarks.bench_badis --step 10 --shapes W1,W2,W3,W4,W5 --allocs s,d --estimators badis --parallel 2 $opts --out $R/w15/$name > $R/w15/$name.stdout 2>&1"
  echo "$name rc=$?"
done >> $R/w15/load.txt 2>&1
uptime >> $R/w15/load.txt
echo W15_DONE >> $R/w15/load.txt
