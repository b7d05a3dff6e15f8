#!/bin/bash
# One lock slot of issue 13's session-8 comparison (the pattern suite):
#   slot.sh OUTDIR ORDER
# Every configuration goes into one patterns.jsonl (--keep-other-runs):
# `none` and `oracle` from the new tree, then the Badis configurations in
# ORDER (a: badis8, badis, VNAME; b: VNAME, badis, badis8):
#   badis    main before the session (OLD tree, its defaults)
#   badis8   the NEW tree's defaults
#   VNAME    the NEW tree with the [badis] options VOPTS (env; default
#            badis8g: shrink_guard and pinned_relearn on)
# Each tree is a git archive of one commit (OLD, NEW env: directories),
# so later edits cannot leak in.
set -u
OUT=$1; ORDER=$2
OLD=${OLD:-/tmp/b18/old}; NEW=${NEW:-/tmp/b18/new}
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
VNAME=${VNAME:-badis8g}
VOPTS=${VOPTS:-shrink_guard=true pinned_relearn=true}
vargs=""; for o in $VOPTS; do vargs="$vargs --badis-option $o"; done
ARGS="--patterns ${PATTERNS:-load_idle,hotset,zipf0.8,zipf1.2,phases} --seconds ${SECONDS_RUN:-30} --out $OUT --keep-other-runs"
mkdir -p "$OUT"
load() { echo "== $(date -u +%FT%TZ) $1"; uptime; }
run() {  # NAME TREE ESTIMATORS [bench options...]
  local name=$1 tree=$2 est=$3; shift 3
  load "$name from $tree (commit $(cat "$tree/COMMIT")): $*"
  (cd "$tree" && PYTHONPATH=$tree $PY -m tests.benchmarks.bench_patterns \
      $ARGS --estimators "$est" "$@") > "$OUT/$name.stdout" 2>&1
  echo "$name rc=$?"
}
{
run ref "$NEW" none,oracle
if [ "$ORDER" = a ]; then
  run badis8 "$NEW" badis --label badis8
  run badis "$OLD" badis
  run "$VNAME" "$NEW" badis --label "$VNAME" $vargs
else
  run "$VNAME" "$NEW" badis --label "$VNAME" $vargs
  run badis "$OLD" badis
  run badis8 "$NEW" badis --label badis8
fi
load end
} >> "$OUT/load.txt" 2>&1
