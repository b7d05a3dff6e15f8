#!/bin/bash
# Stop 73: the repeated W1-W5 design of ../badis_repeats/ (fixed time,
# 10 s steps, both allocations, the five schedules, Badis and `none` from
# one invocation, one repeat per lock hold), three repeats at the
# stop-72 defaults (shortage_ramp on), from a tree copy $T of one commit;
# options after the script's name are passed to bench_badis (e.g.
# --badis-option KEY=VALUE). Run from the output directory:
#     cd ../badis73_noraise && T=/tmp/t73b/tree ../badis73_repeats/run.sh \
#         --badis-option shrink_floor_estimate_raise=false
T=${T:-/tmp/t73/tree}
PY=${PY:-$T/.tox/functional/bin/python}
out=$PWD
for r in 0 1 2; do
  {
    echo "== repeat $r $(date -u +%FT%TZ) tree $(cat "$T/COMMIT")"; uptime
    (cd "$T" && PYTHONPATH=$T flock /tmp/memmut-tcg.lock $PY \
        -m tests.benchmarks.bench_badis --step 10 --shapes W1,W2,W3,W4,W5 \
        --allocs s,d --estimators none,badis --repeats 1 \
        --first-repeat $r --keep-other-runs --out "$out" "$@")
    echo "rc=$? $(date -u +%FT%TZ)"; uptime
  } >> "$out/load.txt" 2>&1
done
(cd "$T" && PYTHONPATH=$T $PY -m tests.benchmarks.bench_badis --report-only \
    --out "$out") >> "$out/load.txt" 2>&1
