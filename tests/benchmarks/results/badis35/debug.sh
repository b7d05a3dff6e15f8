#!/bin/bash
# Stop 47: the hot set once loaded, DEBUG logs, the defaults and
# shrink_floor_held_shortage (one run each: a diagnosis, not a measure).
set -u
R=/work/main/tests/benchmarks/results/badis35
T=/tmp/b63/t2
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
cd $T
for conf in "badis" "hs shrink_floor_held_shortage=true"; do
  set -- $conf; name=$1; shift
  opts=""; for o in "$@"; do opts="$opts --badis-option $o"; done
  lab=""; [ "$name" = badis ] || lab="--label $name"
  echo "== $(date -u +%FT%TZ) $name"; uptime
  flock /tmp/memmut-tcg.lock env PYTHONPATH=$T $PY -m tests.benchmarks.bench_patterns \
    --patterns hotset --starts loaded --seconds 120 --out $R/debug --keep-other-runs \
    --estimators badis $lab $opts --log $R/debug/$name.log --log-level DEBUG \
    > $R/debug/$name.stdout 2>&1
  echo "$name rc=$?"
done
