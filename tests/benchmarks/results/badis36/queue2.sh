#!/bin/bash
# Stop 48, after queue.sh: W1-W5 of shrink_floor_held_shortage as
# amended (hs3: only with the guest's last sample under the floor) and of
# it with no_shrink_below_estimate (hn); then the whole suite, 120 s, in
# two lock slots of opposite order: hs3, the defaults, hn; then the
# calibration probe's cost (slot 3) and a DEBUG run of phases. Tree
# ed257b9: no default differs from 2b64856.
set -u
R=/work/main/tests/benchmarks/results/badis36
T=/tmp/b64/t3
PY=/work/main/.tox/functional/bin/python
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
w15() {  # NAME [badis options]
  local name=$1; shift
  local opts=""; for o in "$@"; do opts="$opts --badis-option $o"; done
  echo "== $(date -u +%FT%TZ) w15 $name"; uptime
  (cd $T && flock /tmp/memmut-tcg.lock env PYTHONPATH=$T $PY -m tests.benchmarks.bench_badis --step 10 --shapes W1,W2,W3,W4,W5 --allocs s,d --estimators badis --parallel 2 $opts --out $R/w15/$name) > $R/w15-$name.stdout 2>&1
  echo "w15 $name rc=$?"
}
{ w15 hs3 shrink_floor_held_shortage=true
  w15 hn shrink_floor_held_shortage=true no_shrink_below_estimate=true
} >> $R/w15.txt 2>&1
echo QUEUE2_DONE >> $R/w15.txt
export REF=$T SECONDS_RUN=120 SKIP_REF=1
cd $R
for s in 1 2 3; do
  mkdir -p $R/slot-$s
  grep -E '"estimator": "(none|oracle)"' ../badis35/slot-1/patterns.jsonl > $R/slot-$s/patterns.jsonl
done
HS3="hs3 $T shrink_floor_held_shortage=true"
HN="hn $T shrink_floor_held_shortage=true no_shrink_below_estimate=true"
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-1 "$HN" "badis $T" "$HS3"
echo QUEUE_DONE >> $R/slot-1/load.txt
flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/slot-2 "$HS3" "badis $T" "$HN"
echo QUEUE_DONE >> $R/slot-2/load.txt
# what the calibration probe costs: phases, load-then-idle and Zipf 0.8
# (where the probes ran in badis35) with calibration_probe off
PATTERNS=phases,load_idle,zipf0.8 flock /tmp/memmut-tcg.lock \
    bash ../badis18/slots.sh $R/slot-3 \
    "np $T shrink_floor_held_shortage=true calibration_probe=false" "$HS3"
echo QUEUE_DONE >> $R/slot-3/load.txt
# phases once loaded with DEBUG logs (one run: a diagnosis of what the
# calibration probe makes the guest read back, not a measure)
mkdir -p $R/debug
(cd $T && flock /tmp/memmut-tcg.lock env PYTHONPATH=$T $PY -m tests.benchmarks.bench_patterns \
  --patterns phases --starts loaded --seconds 120 --out $R/debug --keep-other-runs \
  --estimators badis --label hs3 --badis-option shrink_floor_held_shortage=true \
  --log $R/debug/hs3.log --log-level DEBUG > $R/debug/hs3.stdout 2>&1)
echo "debug rc=$?" >> $R/debug/done.txt
