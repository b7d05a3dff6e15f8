#!/bin/bash
# A lock slot of issue 13's session-8 comparison with any list of
# configurations (slot.sh ran a fixed list):
#   slots.sh OUTDIR 'NAME TREE [OPT=VALUE ...]' ...
# `none` and `oracle` first from $REF (a git archive of one commit), then
# each configuration in the order given: NAME `badis` runs TREE's badis
# unlabelled (a tree without --label), any other NAME is recorded as
# --label NAME with the [badis] options OPT=VALUE. SKIP_REF=1: no `none`
# and `oracle` runs (OUTDIR has them already); REF_ESTIMATORS=none runs
# only `none` (enough for paired vm_over); BENCH_ARGS: more bench_patterns
# options (e.g. --booked-mib 512 --data-mib 320). Each configuration's agent
# log goes to OUTDIR/NAME.log (bench_patterns --log, since stop 44).
set -u
OUT=$1; shift
REF=${REF:?archive tree for none and oracle}
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
ARGS="--patterns ${PATTERNS:-load_idle,hotset,zipf0.8,zipf1.2,phases} --seconds ${SECONDS_RUN:-30} --out $OUT --keep-other-runs ${BENCH_ARGS:-}"
mkdir -p "$OUT"
load() { echo "== $(date -u +%FT%TZ) $1"; uptime; }
run() {  # NAME TREE ESTIMATORS [bench options...]
  local name=$1 tree=$2 est=$3; shift 3
  load "$name from $tree (commit $(cat "$tree/COMMIT")): $*"
  (cd "$tree" && PYTHONPATH=$tree $PY -m tests.benchmarks.bench_patterns \
      $ARGS --estimators "$est" --log "$OUT/$name.log" "$@") \
      > "$OUT/$name.stdout" 2>&1
  echo "$name rc=$?"
}
{
[ -n "${SKIP_REF:-}" ] || run ref "$REF" "${REF_ESTIMATORS:-none,oracle}"
for conf in "$@"; do
  set -- $conf
  name=$1 tree=$2; shift 2
  if [ "$name" = badis ]; then
    run badis "$tree" badis
  else
    opts=""; for o in "$@"; do opts="$opts --badis-option $o"; done
    run "$name" "$tree" badis --label "$name" $opts
  fi
done
load end
} >> "$OUT/load.txt" 2>&1
